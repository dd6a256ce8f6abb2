"""The passages the bot considered for a question, with Valen's probability drawn as a bar."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from chatbot.engine.models import Decision
from chatbot.text import printable

BAR_WIDTH = 20


def bar(probability: float, *, threshold: float) -> Text:
    """A bar of `BAR_WIDTH` cells, green when the passage reached the answer threshold."""
    filled = round(probability * BAR_WIDTH)
    style = "green" if probability >= threshold else "yellow"
    return Text.assemble(("█" * filled, style), ("░" * (BAR_WIDTH - filled), "dim"))


def describe(decision: Decision, *, timings: bool) -> Text:
    """One line: what the bot did and why."""
    if decision.answer is not None:
        verdict = Text.assemble("Answered from ", (printable(decision.answer.id), "bold"))
    else:
        assert decision.reason is not None
        verdict = Text.assemble("Escalated: ", (decision.reason.value, "bold"))
    verdict.append(f" · threshold {decision.threshold:.2f}")
    if timings:
        verdict.append(f" · {decision.latency_ms:.0f} ms")
    return verdict


def render_decision(decision: Decision, *, timings: bool = True) -> RenderableType:
    """The decision line, then one row per candidate: bar and probability, or why not judged."""
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
            table.add_row(name, Text("not judged", style="red"), Text("–"))
    parts: list[RenderableType] = [describe(decision, timings=timings), Text(""), table]
    if not decision.candidates:
        parts.append(Text(decision.why_no_passages(), style="dim"))
    errors = [c for c in decision.candidates if c.error]
    if errors:
        parts.append(Text(""))
        parts.append(Text("Errors", style="bold"))
        for candidate in errors:
            assert candidate.error is not None
            parts.append(Text(f"{printable(candidate.id)}: {printable(candidate.error)}", "red"))
    return Group(*parts)


class CandidateBars(Static):
    """Shows one decision; `show(None)` when the bot has not judged anything yet."""

    def show(self, decision: Decision | None, *, timings: bool = True) -> None:
        if decision is None:
            self.update(Text("The bot has not judged a question here.", style="dim"))
        else:
            self.update(render_decision(decision, timings=timings))
