"""The questions the replay cache has recorded answers for, offered to try in replay mode, and
whether the bot answers each of them now.

With recorded answers only, any other question is "not judged" and goes to a person, so a
newcomer who types their own question would only ever see escalations. A recorded question whose
best recorded probability stays under the threshold goes to a person too, and says so: offering it
among "questions with recorded answers" without that promised an answer the bot never gives.

What the recordings say is only where it starts. Each question is then decided as the bot would
decide it now (replaying is local and takes milliseconds), and again whenever the knowledge base
changes: an edited or deleted passage no longer matches its recorded answer, and the bot then
hands that question to a person.

Deciding takes an engine, and an engine holds the whole knowledge base: its passages and their
index (with the translations' engines, some 75 MB more per browser customer's session at 2,000
passages of ~1.5 KB, `bench/web_kb_size.py`). A terminal's app builds its own. The browser
sessions of `helpdesk serve` share one decider instead (`SharedVerdicts`): one process, started
by serve's zygote (`python -m chatbot.engine.suggestions FILE`), follows the knowledge base and
writes the verdicts to a small file every session reads, so that a customer's session holds no
engine and does not read the knowledge base, however large it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chatbot.errors import HelpdeskError
from chatbot.valen.cache import CorruptCacheError, read_entries
from chatbot.valen.protocol import PREDICATE, question_of

if TYPE_CHECKING:
    from chatbot.config import Settings
    from chatbot.engine.engine import Engine

log = logging.getLogger(__name__)

MAX_SUGGESTIONS = 5
SHARED_ENV = "CHATBOT_SHARED_SUGGESTIONS"
"""Set by `helpdesk serve`'s zygote for the sessions it forks: the file `SharedVerdicts` reads.
Not a setting (no `HELPDESK_` prefix): it names a file of that one server's private folder."""
DECIDER_POLL_S = 0.25
"""How often the decider compares the knowledge base's stamp (a PostgreSQL knowledge base also
announces a change at once): every session reads its file once a second, so an edit reaches a
customer's marks in about the second it did when each session followed the knowledge base."""
RETRY_S = 5.0
"""After a first build that failed (a PostgreSQL knowledge base out of reach), the next try."""


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A question with recorded answers, and whether the bot would answer it."""

    question: str
    answered: bool
    """Some recorded probability for it reaches the threshold: the bot can answer it. False: it
    goes to a person whatever the knowledge base retrieves."""


def recorded_questions(
    cache: Path,
    *,
    threshold: float = 0.7,
    predicate: str = PREDICATE,
    model: str | None = None,
) -> tuple[Suggestion, ...]:
    """Distinct questions in the cache file, in file order; none if it cannot be read. Only the
    answers the engine would replay count (the same predicate and model): the cache key holds
    both, so any other recording is a replay miss."""
    try:
        entries = read_entries(cache) or {}
    except CorruptCacheError:
        return ()  # The engine reports a bad cache itself; suggestions are only a convenience.
    best: dict[str, float] = {}
    for entry in entries.values():
        if not isinstance(entry, dict):
            continue
        question = question_of(entry.get("input"))
        if question is None:
            continue
        if entry.get("instructions") != predicate or entry.get("model") != model:
            continue
        probability = entry.get("probability")
        # bool is an int: `true` is no probability. A refusal (none) never answers.
        if isinstance(probability, bool) or not isinstance(probability, int | float):
            probability = -1.0
        best[question] = max(best.get(question, -1.0), float(probability))
    suggestions = (Suggestion(q, answered=p >= threshold) for q, p in best.items())
    return tuple(suggestions)[:MAX_SUGGESTIONS]


def offered(settings: Settings) -> tuple[Suggestion, ...]:
    """The questions an app on `settings` offers: in replay mode only, as the recordings say,
    with the engine's threshold, predicate and model, known from the settings before any engine
    is built."""
    if settings.valen.replay != "on":
        return ()
    return recorded_questions(
        settings.valen.cache,
        threshold=settings.engine.threshold,
        predicate=PREDICATE,
        model=settings.valen.model,
    )


async def decided(suggestions: tuple[Suggestion, ...], engine: Engine) -> tuple[Suggestion, ...]:
    """`suggestions`, each marked as `engine` decides it now (with recorded answers only)."""

    async def answers(question: str) -> bool:
        try:
            return not (await engine.answer(question)).escalated
        except HelpdeskError:  # A recorded question the engine refuses (too long): a person.
            return False

    verdicts = await asyncio.gather(*(answers(s.question) for s in suggestions))
    return tuple(
        Suggestion(s.question, answered=verdict)
        for s, verdict in zip(suggestions, verdicts, strict=True)
    )


FileStamp = tuple[int, int, int]


class SharedVerdicts:
    """The verdicts one decider (`keep_deciding`) writes to `path` for many sessions to read.

    The file is replaced whole at each change (renamed into place), so a reader sees the old or
    the new, never half of one. Beside it, `path` + `.lock`: the decider holds an exclusive lock
    on it for as long as it lives (taken for it before it starts, by whoever starts it), so a
    session can tell a decider that is gone (crashed, or ended with serve's zygote when the code
    on disk changed) from one with nothing new to say, and decide for itself from then on."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = path.with_name(f"{path.name}.lock")
        self._stamp: FileStamp | None = None
        self._written: dict[str, bool] | None = None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> SharedVerdicts | None:
        """The shared verdicts this process was started with (`SHARED_ENV`), if any."""
        value = environ.get(SHARED_ENV, "")
        return cls(Path(value)) if value else None

    # The decider's side --------------------------------------------------------------------------

    def hold(self) -> int:
        """Take the lock that says a decider lives: an inheritable descriptor for the decider to
        keep open (its lock goes when the last process holding it ends)."""
        fd = os.open(self.lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BaseException:
            os.close(fd)
            raise
        os.set_inheritable(fd, True)
        return fd

    def write(self, suggestions: Sequence[Suggestion]) -> None:
        """Say these verdicts (nothing is written when they are the ones said last)."""
        from chatbot.files import write_text_atomic

        verdicts = {s.question: s.answered for s in suggestions}
        if verdicts != self._written:
            write_text_atomic(self.path, json.dumps({"answered": verdicts}, ensure_ascii=False))
            self._written = verdicts

    def remove(self) -> None:
        """Remove the file and its lock (the folder they are in is going)."""
        for path in (self.path, self.lock):
            with contextlib.suppress(OSError):
                path.unlink()

    # A session's side ----------------------------------------------------------------------------

    def decider_alive(self) -> bool:
        """Whether a decider still holds the lock. A few system calls, no read of the file."""
        try:
            fd = os.open(self.lock, os.O_RDONLY)
        except OSError:
            return False  # Gone with its folder.
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        finally:
            os.close(fd)  # Releases the shared lock, if it was taken.
        return False

    def fresh(self, suggestions: tuple[Suggestion, ...]) -> tuple[Suggestion, ...] | None:
        """`suggestions` marked as the decider last decided them, if its file changed since the
        last call (a `stat` when it has not); None: nothing new (or nothing decided yet). A
        question the file does not name keeps its mark."""
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        stamp = (info.st_ino, info.st_mtime_ns, info.st_size)
        if stamp == self._stamp:
            return None
        try:
            answered = json.loads(self.path.read_bytes())["answered"]
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            return None  # Not the decider's (nothing else writes there): read again next time.
        self._stamp = stamp
        if not isinstance(answered, dict):
            return None
        return tuple(
            Suggestion(s.question, answered=verdict)
            if isinstance(verdict := answered.get(s.question), bool)
            else s
            for s in suggestions
        )


async def keep_deciding(
    settings: Settings, shared: SharedVerdicts, *, interval: float = DECIDER_POLL_S
) -> None:
    """Decide the questions `settings` offer with an engine of their knowledge base, write the
    verdicts to `shared`, and again at each change of the knowledge base, for as long as this
    runs. Returns at once when nothing is offered (Valen asked live)."""
    suggestions = offered(settings)
    if not suggestions:
        return
    from chatbot.assembly import build_engine, open_knowledge_base
    from chatbot.engine.live import LiveEngine

    store = await asyncio.to_thread(open_knowledge_base, settings, lock_timeout=2.0)
    try:
        while True:
            stamp = await asyncio.to_thread(store.stamp)  # Before reading, as an app does.
            try:
                engine = await asyncio.to_thread(build_engine, settings, None, store)
                break
            except HelpdeskError as error:
                log.warning("suggested questions: cannot read the knowledge base: %s", error)
                await asyncio.sleep(RETRY_S)
        # A broken passage file is left out, or kept as it was, and said by the bot workers.
        live = LiveEngine(None, store, on_problem=log.info)
        live.follow_from(store, stamp)
        live.engine = engine
        shared.write(await decided(suggestions, engine))
        async with store.watch() as changes:
            while True:
                await changes.wait(interval)
                if not await asyncio.to_thread(live.changed):
                    continue
                rebuilt = await live.rebuild()
                if rebuilt is not None:
                    shared.write(await decided(suggestions, rebuilt))
    finally:
        store.close()


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m chatbot.engine.suggestions FILE`: the decider serve's zygote starts, on
    serve's settings (its environment), holding the lock `SharedVerdicts.hold` took for it."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m chatbot.engine.suggestions FILE", file=sys.stderr)
        return 2
    from chatbot.config import load_settings

    # Said once already, by `serve` at its start, from the same environment and file.
    logging.getLogger("chatbot.config").setLevel(logging.ERROR)
    try:
        settings = load_settings()
        asyncio.run(keep_deciding(settings, SharedVerdicts(Path(args[0]))))
    except HelpdeskError as error:
        # Every session then decides for itself, as a terminal's app does, and says the same.
        print(f"helpdesk: suggested questions: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
