"""The passages the bot considered for a question, with Valen's probability drawn as a bar."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from chatbot.engine.models import Decision
from chatbot.i18n import DEFAULT_LOCALE, Locale, translations
from chatbot.notices import why_no_passages
from chatbot.text import printable
from chatbot.tui.localize import styled

BAR_WIDTH = 20


def bar(probability: float, *, threshold: float) -> Text:
    """A bar of `BAR_WIDTH` cells, green when the passage reached the answer threshold."""
    filled = round(probability * BAR_WIDTH)
    style = "green" if probability >= threshold else "yellow"
    return Text.assemble(("█" * filled, style), ("░" * (BAR_WIDTH - filled), "dim"))


def describe(decision: Decision, *, timings: bool, locale: Locale = DEFAULT_LOCALE) -> Text:
    """One line: what the bot did and why."""
    t = translations(locale)
    if decision.answer is not None:
        verdict = styled(
            t.gettext("Answered from {passage}"),
            {"passage": "bold"},
            passage=printable(decision.answer.id),
        )
    else:
        assert decision.reason is not None
        verdict = styled(
            t.gettext("Escalated: {reason}"), {"reason": "bold"}, reason=decision.reason.value
        )
    verdict.append(" · ")
    verdict.append(t.gettext("threshold {threshold}").format(threshold=f"{decision.threshold:.2f}"))
    if timings:
        verdict.append(f" · {decision.latency_ms:.0f} ms")
    return verdict


def render_decision(
    decision: Decision, *, timings: bool = True, locale: Locale = DEFAULT_LOCALE
) -> RenderableType:
    """The decision line, then one row per candidate: bar and probability, or why not judged."""
    t = translations(locale)
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(justify="right", no_wrap=True)
    for candidate in decision.candidates:
        name = Text(printable(candidate.id), style="bold")
        if candidate.probability is not None:
            table.add_row(
                name,
                bar(candidate.probability, threshold=decision.threshold),
                Text(f"{candidate.probability:.2f}"),
            )
        else:
            table.add_row(name, Text(t.gettext("not judged"), style="red"), Text("–"))
    parts: list[RenderableType] = [
        describe(decision, timings=timings, locale=locale),
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

    def show(self, decision: Decision | None, *, timings: bool = True) -> None:
        if decision is None:
            t = translations(self.locale)
            self.update(Text(t.gettext("The bot has not judged a question here."), style="dim"))
        else:
            self.update(render_decision(decision, timings=timings, locale=self.locale))
