"""The passages the bot considered for a question, with Valen's probability drawn as a bar."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from gettext import NullTranslations
from typing import TYPE_CHECKING

from rich._wrap import divide_line
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from chatbot.engine.models import Candidate, Decision
from chatbot.i18n import DEFAULT_LOCALE, Locale, translations
from chatbot.notices import why_no_passages
from chatbot.text import clip, printable
from chatbot.tui.localize import styled

if TYPE_CHECKING:
    from chatbot.desk.models import Outcome

BAR_WIDTH = 20
MIN_BAR_WIDTH = 5
"""A pane too narrow for the whole bar shortens it down to this, and keeps the score whole."""
REPLAY_MISS = "replay-miss"
"""The kind a replay miss's error starts with (`chatbot.valen.errors.ReplayMissError`)."""


def bar(probability: float, *, threshold: float, width: int = BAR_WIDTH) -> Text:
    """A bar of `width` cells, green when the passage reached the answer threshold."""
    filled = round(probability * width)
    style = "green" if probability >= threshold else "yellow"
    return Text.assemble(("█" * filled, style), ("░" * (width - filled), "dim"))


@dataclass(frozen=True, slots=True)
class Bar:
    """A probability's bar that takes the cells its table gives it, up to `BAR_WIDTH`: where the
    passage ids and scores leave too little room, the bar shortens rather than the score beside
    it being cut to "0.…", as it was in a 100-column console."""

    probability: float
    threshold: float

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        room = options.max_width
        return Measurement(min(MIN_BAR_WIDTH, room), min(BAR_WIDTH, room))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield bar(
            self.probability, threshold=self.threshold, width=min(BAR_WIDTH, options.max_width)
        )


_NO_BREAK = re.compile("[\u00a0\u2007\u202f]")
"""The no-break spaces (`chatbot.text`'s), which Rich breaks a line at like any other space."""


@dataclass(frozen=True, slots=True)
class KeptTogether:
    """A line wrapped at its spaces as Rich wraps it, but never at a no-break space: in a
    browser at 1000 px the Chinese verdict line, `已转人工：not-judged · 阈值 0.70 · 2 ms`, broke
    between the number and its unit, leaving `ms` alone on the next line."""

    text: Text

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.text)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        # Where Rich would break the line were each no-break space a letter (of the same cells).
        offsets = divide_line(_NO_BREAK.sub("x", self.text.plain), width)
        for line in self.text.divide(offsets):
            line.rstrip_end(width)
            line.no_wrap = True  # Already wrapped: it fits.
            yield line


@dataclass(frozen=True, slots=True)
class Quoted:
    """A customer's question quoted on one line, cut with … to the cells its pane has: wrapped,
    a long one took two rows of a pane of six (at 60x20), and pushed every bar out of it."""

    question: str

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(min(3, options.max_width), options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        words = clip(" ".join(printable(self.question).split()), max(options.max_width - 2, 1))
        yield Text(f"“{words}”", style="italic", no_wrap=True, overflow="ellipsis")


def describe(
    decision: Decision,
    *,
    timings: bool,
    locale: Locale = DEFAULT_LOCALE,
    outcome: Outcome | None = None,
    brief: bool = False,
) -> Text:
    """One line: what the bot did and why. `outcome` is what came of the decision where it is
    known: `kept` (a person had the conversation by then) is said as what the bot would have
    done, for it said nothing. `brief`: a kept decision shown under the one a conversation was
    escalated with (see `render_several`), said in few words, its threshold and time left to the
    line above: the whole sentence took two or three rows of a pane that has six to eight."""
    t = translations(locale)
    kept = outcome == "kept"
    if brief and kept:
        if decision.answer is not None:
            return styled(
                t.gettext("Kept silent: would have answered from {passage}"),
                {"passage": "bold"},
                passage=printable(decision.answer.id),
            )
        assert decision.reason is not None
        return styled(
            t.gettext("Kept silent: would have escalated ({reason})"),
            {"reason": "bold"},
            reason=decision.reason.value,
        )
    if decision.answer is not None:
        verdict = styled(
            t.gettext(
                "Would have answered from {passage}; kept silent as the conversation had gone to a "
                "person"
            )
            if kept
            else t.gettext("Answered from {passage}"),
            {"passage": "bold"},
            passage=printable(decision.answer.id),
        )
    else:
        assert decision.reason is not None
        verdict = styled(
            t.gettext(
                "Would have escalated: {reason}; kept silent as the conversation had gone to a "
                "person"
            )
            if kept
            else t.gettext("Escalated: {reason}"),
            {"reason": "bold"},
            reason=decision.reason.value,
        )
    verdict.append(" · ")
    verdict.append(t.gettext("threshold {threshold}").format(threshold=f"{decision.threshold:.2f}"))
    if timings:
        # A no-break space: the number and its unit stay together where the line wraps.
        verdict.append(f" · {decision.latency_ms:.0f}\u00a0ms")
    return verdict


def render_decision(
    decision: Decision,
    *,
    timings: bool = True,
    locale: Locale = DEFAULT_LOCALE,
    outcome: Outcome | None = None,
) -> RenderableType:
    """The decision line, then one row per candidate: bar and probability, or why not judged."""
    parts: list[RenderableType] = [
        KeptTogether(describe(decision, timings=timings, locale=locale, outcome=outcome)),
        Text(""),
        candidate_rows(decision.candidates, decision.threshold, locale=locale),
    ]
    if not decision.candidates:
        parts.append(Text(why_no_passages(decision, locale=locale), style="dim"))
    parts.extend(error_lines(decision.candidates, locale=locale))
    return Group(*parts)


def candidate_rows(
    candidates: Sequence[Candidate], threshold: float, *, locale: Locale = DEFAULT_LOCALE
) -> Table:
    """One row per candidate: its bar and probability, or "not judged"."""
    t = translations(locale)
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column()  # The bar: the one column a narrow table takes cells from.
    table.add_column(justify="right", no_wrap=True)
    for candidate in candidates:
        name = Text(printable(candidate.id), style="bold")
        if candidate.probability is not None:
            table.add_row(
                name, Bar(candidate.probability, threshold), Text(f"{candidate.probability:.2f}")
            )
        else:
            not_judged = Text(
                t.gettext("not judged"), style="red", no_wrap=True, overflow="ellipsis"
            )
            table.add_row(name, not_judged, Text("–"))
    return table


def error_lines(
    candidates: Sequence[Candidate], *, locale: Locale = DEFAULT_LOCALE
) -> list[RenderableType]:
    """Why each of `candidates` that was not judged was not, under a heading (none: nothing)."""
    errors = [c for c in candidates if c.error]
    if not errors:
        return []
    t = translations(locale)
    lines: list[RenderableType] = [Text(""), Text(t.gettext("Errors"), "bold")]
    for candidate in errors:
        assert candidate.error is not None
        error = printable(said_error(candidate.error, t))
        lines.append(Text(f"{printable(candidate.id)}: {error}", "red"))
    return lines


def said_error(error: str, t: NullTranslations) -> str:
    """A not-judged passage's error as the agent reads it: a replay miss's explanation (marked
    in `chatbot.valen.judge`) in their language, after its kind, a code; other errors, from the
    core, as stored."""
    code, colon, why = error.partition(": ")
    if code != REPLAY_MISS or not colon:
        return error
    return f"{code}: {t.gettext(why)}"  # One not in the catalog comes back as it is.


def top_candidate(decision: Decision) -> Candidate | None:
    """The passage the bot would have answered from, or else the one it judged likeliest."""
    for candidate in decision.candidates:
        if decision.answer is not None and candidate.id == decision.answer.id:
            return candidate
    return max(
        decision.candidates,
        key=lambda c: -1.0 if c.probability is None else c.probability,
        default=None,
    )


def render_several(
    decisions: Sequence[tuple[Decision, Outcome | None]],
    *,
    timings: bool = True,
    locale: Locale = DEFAULT_LOCALE,
) -> RenderableType:
    """The decision a conversation was escalated with and those kept silent since, oldest
    first, each headed by its question quoted on one line, and so few rows that at 80x24 (a
    pane of eight) all show: the first's judged candidates as bars, those not judged named on
    one line; each later one in brief (`describe`) with the candidate it came to. Why passages
    went unjudged comes last, below what the agent answers from (the Errors of the first pushed
    the second decision out of sight)."""
    t = translations(locale)
    parts: list[RenderableType] = []
    said: list[Candidate] = []  # The candidates shown: why those not judged were not comes last.
    for number, (decision, outcome) in enumerate(decisions):
        parts.append(Quoted(decision.question))
        # Kept silent since (`number` > 0): what it would have done, and from which passage.
        line = describe(decision, timings=timings, locale=locale, outcome=outcome, brief=number > 0)
        parts.append(KeptTogether(line))
        if number:
            shown = [top] if (top := top_candidate(decision)) is not None else []
        else:
            shown = list(decision.candidates)
        judged = [c for c in shown if c.probability is not None]
        if judged:
            parts.append(candidate_rows(judged, decision.threshold, locale=locale))
        if unjudged := [c for c in shown if c.probability is None]:
            names = t.gettext(", ").join(printable(c.id) for c in unjudged)
            line = styled(t.gettext("Not judged: {passages}"), {"passages": "bold"}, passages=names)
            line.stylize("red")
            parts.append(line)
        if not decision.candidates:
            parts.append(Text(why_no_passages(decision, locale=locale), style="dim"))
        said.extend(shown)
    parts.extend(error_lines(said, locale=locale))
    return Group(*parts)


class CandidateBars(Static):
    """Shows one decision; `show(None)` when the bot has not judged anything yet."""

    def __init__(self, *, locale: Locale = DEFAULT_LOCALE, id: str | None = None) -> None:
        super().__init__(id=id)
        self.locale: Locale = locale
        """The agent's language: the verdict is said in it, passage ids and codes as they are."""

    def show(
        self, decision: Decision | None, *, timings: bool = True, outcome: Outcome | None = None
    ) -> None:
        """`outcome`: what came of the decision (`kept`: said as what the bot would have done)."""
        if decision is None:
            t = translations(self.locale)
            self.update(Text(t.gettext("The bot has not judged a question here."), style="dim"))
        else:
            self.update(
                render_decision(decision, timings=timings, locale=self.locale, outcome=outcome)
            )

    def show_all(
        self, decisions: Sequence[tuple[Decision, Outcome | None]], *, timings: bool = True
    ) -> None:
        """Each decision with what came of it, oldest first: one as `show` shows it; several
        as `render_several` does, each headed by the customer's question it decided, quoted (the
        verdict lines alone did not say which question each was for)."""
        if len(decisions) <= 1:
            decision, outcome = decisions[0] if decisions else (None, None)
            self.show(decision, timings=timings, outcome=outcome)
            return
        self.update(render_several(decisions, timings=timings, locale=self.locale))
