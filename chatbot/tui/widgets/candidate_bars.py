"""The passages the bot considered for a question, with Valen's probability drawn as a bar."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from chatbot.engine.models import Decision
from chatbot.i18n import DEFAULT_LOCALE, Locale, translations
from chatbot.notices import why_no_passages
from chatbot.text import clip, printable
from chatbot.tui.localize import styled

if TYPE_CHECKING:
    from chatbot.desk.models import Outcome

BAR_WIDTH = 20
QUESTION_CELLS = 80
"""A question quoted above its decision (where more than one is shown) is cut to this."""
MIN_BAR_WIDTH = 5
"""A pane too narrow for the whole bar shortens it down to this, and keeps the score whole."""


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


def describe(
    decision: Decision,
    *,
    timings: bool,
    locale: Locale = DEFAULT_LOCALE,
    outcome: Outcome | None = None,
) -> Text:
    """One line: what the bot did and why. `outcome` is what came of the decision where it is
    known: `kept` (a person had the conversation by then) is said as what the bot would have
    done, for it said nothing."""
    t = translations(locale)
    kept = outcome == "kept"
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
        verdict.append(f" · {decision.latency_ms:.0f} ms")
    return verdict


def render_decision(
    decision: Decision,
    *,
    timings: bool = True,
    locale: Locale = DEFAULT_LOCALE,
    outcome: Outcome | None = None,
) -> RenderableType:
    """The decision line, then one row per candidate: bar and probability, or why not judged."""
    t = translations(locale)
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column()  # The bar: the one column a narrow table takes cells from.
    table.add_column(justify="right", no_wrap=True)
    for candidate in decision.candidates:
        name = Text(printable(candidate.id), style="bold")
        if candidate.probability is not None:
            table.add_row(
                name,
                Bar(candidate.probability, decision.threshold),
                Text(f"{candidate.probability:.2f}"),
            )
        else:
            not_judged = Text(
                t.gettext("not judged"), style="red", no_wrap=True, overflow="ellipsis"
            )
            table.add_row(name, not_judged, Text("–"))
    parts: list[RenderableType] = [
        describe(decision, timings=timings, locale=locale, outcome=outcome),
        Text(""),
        table,
    ]
    if not decision.candidates:
        parts.append(Text(why_no_passages(decision, locale=locale), style="dim"))
    errors = [c for c in decision.candidates if c.error]
    if errors:
        parts.append(Text(""))
        parts.append(Text(t.gettext("Errors"), style="bold"))
        for candidate in errors:
            assert candidate.error is not None
            parts.append(Text(f"{printable(candidate.id)}: {printable(candidate.error)}", "red"))
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
        """Each decision with what came of it, oldest first, as `show` shows one. Where there
        are several, each is headed by the customer's question it decided, quoted: the verdict
        lines alone did not say which question each was for."""
        if len(decisions) <= 1:
            decision, outcome = decisions[0] if decisions else (None, None)
            self.show(decision, timings=timings, outcome=outcome)
            return
        parts: list[RenderableType] = []
        for decision, outcome in decisions:
            if parts:
                parts.append(Text(""))
            question = clip(" ".join(printable(decision.question).split()), QUESTION_CELLS)
            parts.append(Text(f"“{question}”", style="italic"))
            parts.append(
                render_decision(decision, timings=timings, locale=self.locale, outcome=outcome)
            )
        self.update(Group(*parts))
