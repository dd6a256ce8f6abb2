"""`helpdesk ask QUESTION`: run the loop once and show the answer or the escalation."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from chatbot.cli.evaluate import Progress
from chatbot.cli.options import add_engine_options, settings_from, terminal_width
from chatbot.text import cells, counted, printable, wrap

# The engine (numpy, pydantic, httpx) is imported when the command runs, so that registering it
# costs `helpdesk --help` nothing.
if TYPE_CHECKING:
    from chatbot.config import Settings
    from chatbot.engine.models import Decision
    from chatbot.valen.cache import ReplayCache
    from chatbot.valen.judge import PassageJudge
    from chatbot.valen.protocol import Outcome

# JSON leaves DEL and the C1 controls (U+007F-U+009F) as they are; a terminal reads U+009B as
# the start of an escape sequence, so --json spells them out too.
_UNESCAPED_CONTROLS = re.compile(r"[\x7f-\x9f]")

REPLAY_MISS_NOTE = (
    "replay-miss is not a failure: in replay mode (the default) the bot uses only recorded Valen "
    "judgments, from {cache}, and none is recorded for this question and passage. Ask Valen live "
    "with --replay off, or with --replay record to save its answers for next time."
)
UNUSABLE_NOTE = (
    "A replay-miss whose recorded answer is unusable comes from an entry of {cache} that cannot "
    "be replayed (see the warning about it): repair or remove the entry, or record it again with "
    "--replay record."
)
UNREADABLE_CACHE_NOTE = (
    "Every replay-miss here comes from the replay cache, not from this question: it could not be "
    "read ({problem}), so no recorded judgment was used. Repair the file or move it aside, or ask "
    "Valen live with --replay off."
)
EXIT_STATUS = (
    "Exit status: 0 once the decision is printed, whatever it is; 1 when Valen was asked and "
    "judged nothing (every judgment failed: a replay miss or a refusal is no failure); 2 for bad "
    "input; 130 when interrupted (Ctrl+C). Asking Valen live, stderr says so on a terminal."
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "ask", help="answer one question from the knowledge base", epilog=EXIT_STATUS
    )
    parser.add_argument("question", help="the customer's question")
    parser.add_argument("--json", action="store_true", help="print the decision as JSON")
    add_engine_options(parser)
    parser.set_defaults(func=run)


class Asking(Progress):
    """What `ask` is doing while Valen judges: said on a terminal (stderr) as `eval` says where
    it is, one line taken away before anything else is printed, and said when interrupted. A
    live question against a Valen that hung left the screen blank for the whole budget (20 s),
    and Ctrl+C then exited 130 without a word."""

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__([], stream)
        self.passages: int | None = None
        """How many passages Valen is asked about, once it is asked."""
        self.budget_s = 0.0
        self.answered = False

    def line(self) -> str:
        asked = counted(self.passages or 0, "passage")
        return f"asking Valen about {asked} (at most {self.budget_s:g} s)…"

    def ask(self, passages: int, budget_s: float) -> None:
        """Valen is asked about `passages` passages, within `budget_s` seconds."""
        self.passages, self.budget_s = passages, budget_s
        self.show()

    def done(self) -> None:
        """Valen has answered (the line went as the judging ended)."""
        self.answered = True

    def interrupted(self) -> str:
        """Where the question was when interrupted: `helpdesk ask: interrupted {this}`."""
        if self.passages is None:
            return "before Valen was asked"
        if not self.answered:
            return f"while asking Valen about {counted(self.passages, 'passage')}"
        return "after Valen answered"


def _announced(judge: PassageJudge, asking: Asking) -> PassageJudge:
    """`judge`, telling `asking` when it asks Valen, about how many passages, and when it is
    done."""
    from chatbot.valen.judge import PassageJudge
    from chatbot.valen.protocol import PREDICATE

    class Announced(PassageJudge):
        async def judge(
            self, question: str, passages: Sequence[str], *, instructions: str = PREDICATE
        ) -> list[Outcome]:
            if passages and self.client is not None:
                asking.ask(len(passages), self.client.budget_s)
            try:
                outcomes = await super().judge(question, passages, instructions=instructions)
            finally:
                asking.clear()  # Interrupted too: the line goes, and Valen has not answered.
            asking.done()
            return outcomes

    return Announced(replay=judge.replay, cache=judge.cache, client=judge.client)


async def _answer(
    settings: Settings, question: str, asking: Asking | None = None
) -> tuple[Decision, ReplayCache | None]:
    """The decision, and the replay cache it was judged with (None: none was used), which says
    whether it could be read. `asking` is told when Valen is asked, and about how much."""
    from chatbot.assembly import build_question_engine, make_http_client

    if settings.valen.replay == "on":
        # Recorded answers only: no request is made, so no HTTP client (nor httpx) is loaded.
        engine = build_question_engine(settings, None, question)
        return await engine.answer(question), engine.judge.cache
    async with make_http_client(settings) as http:
        engine = build_question_engine(settings, http, question)
        if asking is not None:
            # On a terminal, the wait for Valen is said: it may last the whole budget.
            engine.judge = _announced(engine.judge, asking)
        return await engine.answer(question), engine.judge.cache


def render(
    decision: Decision,
    *,
    cache: str = "the replay cache",
    width: int | None = None,
    unreadable: str | None = None,
) -> str:
    """The decision for a person: answer or escalation first, then every candidate, then what a
    replay miss means when there is one (a newcomer would otherwise read it as a failure). With
    the terminal's `width`, prose is wrapped to it and a candidate's error goes below its row.
    `unreadable` (why the replay cache could not be read) says that the misses come from the
    cache, not from this question: "none is recorded for this question" contradicted the
    warning on stderr that the cache was ignored."""

    lines = []
    if decision.answer is not None:
        answer = decision.answer
        lines.append(f"Answer from {answer.id} (probability {_p(answer.probability)}):")
        lines += wrap(printable(answer.text), width, "  ")
    else:
        top = decision.top_probability
        best = f", best probability {_p(top)}" if top is not None else ""
        assert decision.reason is not None
        lines.append(f"Escalated to a person: {decision.reason.value}{best}")
    lines.append("")
    lines.append(f"Candidates (threshold {decision.threshold:g}):")
    if not decision.candidates:
        # Only here: the sentences' module loads the desk's models (~50 ms), which the
        # answered question never needs.
        from chatbot.notices import why_no_passages

        lines += wrap(f"none. {why_no_passages(decision)}", width, "  ")
    for c in decision.candidates:
        judged = f"p={_p(c.probability)}" if c.probability is not None else "not judged"
        row = f"  {c.id:<28} bm25={c.bm25:7.3f}  {judged}"
        error = printable(c.error) if c.error else ""
        if error and width is not None and cells(f"{row}  {error}") > width:
            lines += [row, *wrap(error, width, "      ")]
        else:
            lines.append(f"{row}  {error}" if error else row)
    misses = {c.error for c in decision.candidates if c.error_kind == "replay-miss"}
    notes = []
    if unreadable is not None and misses:
        notes.append(UNREADABLE_CACHE_NOTE.format(problem=unreadable))
    elif misses:
        # Each kind of miss said for what it is: none recorded, or recorded and unusable.
        from chatbot.valen.judge import UNUSABLE  # Loaded by now: the judge said it.

        unusable = f"replay-miss: {UNUSABLE}"
        if misses - {unusable}:
            notes.append(REPLAY_MISS_NOTE.format(cache=cache))
        if unusable in misses:
            notes.append(UNUSABLE_NOTE.format(cache=cache))
    for note in notes:
        lines += ["", *wrap(printable(note), width)]
    return "\n".join(lines)


def valen_failed(decision: Decision) -> str | None:
    """`Valen failed 5 of 5 judgments: auth 5` when Valen was asked and judged nothing, failing
    (the rule `eval` exits 1 by); None otherwise. Replay misses and refusals are no failure:
    replay mode has no recorded answer, or Valen answered, declining to judge."""
    from chatbot.cli.evaluate import REFUSED, REPLAY_MISS

    candidates = decision.candidates
    if any(c.probability is not None for c in candidates):
        return None
    failed: dict[str, int] = {}
    for c in candidates:
        kind = c.error_kind or "error"
        if kind not in (REPLAY_MISS, REFUSED):
            failed[kind] = failed.get(kind, 0) + 1
    if not failed:
        return None
    asked = counted(len(candidates), "judgment")
    kinds = ", ".join(f"{kind} {n}" for kind, n in failed.items())
    said = f"Valen failed {sum(failed.values())} of {asked}: {kinds}"
    if declined := sum(c.error_kind == REFUSED for c in candidates):
        said += f"; Valen declined to judge {declined} of {asked} (refused)"
    return said


def _p(probability: float) -> str:
    """A probability as shown: `+ 0.0` makes a -0.0 from the server read 0.000, not "-0.000"
    (as `helpdesk valen check` shows it)."""
    return f"{probability + 0.0:.3f}"


def to_json(decision: Decision) -> str:
    text = json.dumps(decision.to_json(), indent=2, ensure_ascii=False)
    return _UNESCAPED_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from chatbot.engine.engine import check_question

    # Bytes that are not UTF-8 never reach here: `main` refuses them, for every command.
    question = check_question(args.question)
    settings = settings_from(args)
    asking = Asking(sys.stderr if sys.stderr.isatty() else None)
    try:
        with asking.around_logging():
            decision, cache = asyncio.run(_answer(settings, question, asking))
    except KeyboardInterrupt:
        asking.clear()
        said = "" if settings.valen.replay == "on" else f" {asking.interrupted()}"
        print(f"helpdesk ask: interrupted{said}; no answer printed", file=sys.stderr)
        raise
    finally:
        asking.clear()
    if args.json:
        print(to_json(decision))
    else:
        unreadable = cache.corrupt if cache is not None else None
        path, width = str(settings.valen.cache), terminal_width()
        print(render(decision, cache=path, width=width, unreadable=unreadable))
    if failed := valen_failed(decision):
        # As `eval`: a script reading the status learns that Valen, not the question, failed.
        print(
            f"helpdesk ask: nothing was judged ({failed}); "
            "`helpdesk valen check` tests the connection and the key",
            file=sys.stderr,
        )
        return 1
    return 0
