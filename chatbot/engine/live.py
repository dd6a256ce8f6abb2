"""An engine that follows the knowledge base, for the app and for bot workers alike.

Each store has a cheap stamp that changes with its passages: on files, a write through the editor
or `helpdesk kb` renames a file into the passage directory, changing its entries, which `follow`
polls; in PostgreSQL every write bumps a generation and sends a notification, which `follow`
waits on, so another host's change is picked up at once (the poll stays as the safety net for a
notification lost while reconnecting). Rebuilds read the passages and build the BM25 index in a
thread, then swap the new engine in whole, so a question in flight keeps the engine it started
with and no question waits on a rebuild. A broken passage never stops anything: the store
leaves the file out (or keeps the version it read before) and says so; if a whole rebuild fails,
the last good engine keeps answering, and the problem is reported.

An app shows its first screen before its first engine exists (numpy, reading the passages and
building the index take longer than the screen): it makes a `LiveEngine` with no engine yet and
puts one in with `start` once built; until then `engine` raises `EngineNotReady`, and whoever
needs it waits with `wait_ready`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from chatbot.errors import HelpdeskError
from chatbot.knowledge_base.errors import KnowledgeBaseUnreachable

# Types only: an app imports this module before its first screen, the engine (numpy) after it.
if TYPE_CHECKING:
    from chatbot.engine.engine import Engine
    from chatbot.knowledge_base.interface import KnowledgeBaseStore

log = logging.getLogger(__name__)

POLL_S = 1.0


class EngineNotReady(HelpdeskError):
    """The first engine is still being built."""


class Unreachable(str):
    """A line told to `on_problem` when a rebuild found the knowledge base out of reach (its
    server away), not broken: nothing to mend, and it passes by itself. A plain `str` to a caller
    that logs it; one that shows it to a person may say it plainly instead."""


class LiveEngine:
    """Holds the current engine; `engine` is read at the moment of use."""

    def __init__(
        self,
        engine: Engine | None,
        passages: KnowledgeBaseStore | None = None,
        *,
        on_problem: Callable[[str], None] | None = None,
        on_rebuilt: Callable[[Engine], None] | None = None,
    ) -> None:
        self._engine = engine
        # Created here, bound to a loop on first wait (Python >= 3.10): set once, never cleared.
        self._ready = asyncio.Event()
        if engine is not None:
            self._ready.set()
        self.passages = passages
        """Where the passages live; None: a fixed engine that never rebuilds."""
        self.on_problem = on_problem
        """Told (one line each) why a rebuild was refused, the last good engine staying, or
        which entries it skipped; a problem that persists is told once, not at every poll, and
        an outage once however its words change (an `Unreachable` line)."""
        self.on_rebuilt = on_rebuilt
        """Told of each new engine once it is in place."""
        self._stamp = None if self.passages is None else self.passages.stamp()
        self._generation = 0
        self._told: tuple[str, ...] = ()

    @property
    def engine(self) -> Engine:
        """The engine of this moment; replaced whole when the knowledge base changes.
        `EngineNotReady` until the first one is in place."""
        if self._engine is None:
            raise EngineNotReady("the knowledge base is still loading")
        return self._engine

    @engine.setter
    def engine(self, engine: Engine) -> None:
        self._engine = engine
        self._ready.set()

    def follow_from(self, passages: KnowledgeBaseStore, stamp: int | None) -> None:
        """Follow `passages` from now on, the engine having been built from them as they were at
        `stamp` (an app opens its knowledge base with its first engine, off the loop)."""
        self.passages = passages
        self._stamp = stamp

    @property
    def ready(self) -> bool:
        """Whether there is an engine yet."""
        return self._engine is not None

    async def wait_ready(self) -> Engine:
        """The engine, once there is one."""
        await self._ready.wait()
        return self.engine

    def changed(self) -> bool:
        """Whether anyone changed the passages since the last rebuild started."""
        return self.passages is not None and self.passages.stamp() != self._stamp

    async def poll(self) -> None:
        # The stamp is read off the loop: in PostgreSQL it is a query to a server.
        if await asyncio.to_thread(self.changed):
            await self.rebuild()

    async def follow(self, interval: float = POLL_S) -> None:
        """Rebuild whenever the passages change, for as long as the task runs: at once when the
        store announces a change, and in any case after comparing stamps every `interval`s."""
        if self.passages is None:
            return
        async with self.passages.watch() as changes:
            while True:
                await changes.wait(interval)
                await self.poll()

    async def rebuild(self) -> Engine | None:
        """Build a new engine over what is on disk now, off the loop; newest rebuild wins.
        Returns the engine put in place, or None (refused, or overtaken by a newer rebuild)."""
        passages = self.passages
        if passages is None or self._engine is None:
            # Not before the first engine: that one reads the passages as they are then, and a
            # change made meanwhile leaves the stamp behind, so the next poll catches it.
            return None
        # Stamp before reading: a write that lands during the read is caught by the next poll.
        self._stamp = passages.stamp()
        self._generation += 1
        generation = self._generation
        base = self.engine

        def build() -> tuple[Engine, list[str]]:
            loaded = passages.load()
            # Synonyms too: an editor's save of them changes the knowledge base's stamp as well.
            engine = base.with_passages(loaded.passages).with_synonyms(passages.synonyms())
            return engine, loaded.skipped

        # Nothing on disk may stop the app or a worker: whatever goes wrong, the last good engine
        # keeps answering, and the problem is told.
        try:
            engine, skipped = await asyncio.to_thread(build)
        except KnowledgeBaseUnreachable as error:
            self._tell((Unreachable(f"Knowledge base not reloaded: {error}"),))
            return None
        except HelpdeskError as error:  # A broken file, named in the message.
            self._tell((f"Knowledge base not reloaded: {error}",))
            return None
        except Exception as error:  # noqa: BLE001 - a bug must not stop every running app.
            log.exception("rebuilding the knowledge-base index failed")
            unexpected = f"unexpected {type(error).__name__}: {error}"
            self._tell((f"Knowledge base not reloaded: {unexpected}",))
            return None
        return self.swap(generation, engine, tuple(skipped))

    def swap(self, generation: int, engine: Engine, skipped: tuple[str, ...] = ()) -> Engine | None:
        """Put a rebuilt engine in place unless a newer rebuild started after it."""
        if generation != self._generation:
            return None  # A newer rebuild is on its way; this one may have read older passages.
        self.engine = engine
        self._tell(skipped)
        if self.on_rebuilt is not None:
            self.on_rebuilt(engine)
        return engine

    def _tell(self, problems: tuple[str, ...]) -> None:
        told, self._told = self._told, problems
        # One outage, told once: its words change (a connection ended, then ones refused).
        outage = bool(told) and all(isinstance(line, Unreachable) for line in (*told, *problems))
        if problems and problems != told and not outage and self.on_problem is not None:
            for problem in problems:
                self.on_problem(problem)
