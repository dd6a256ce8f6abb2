"""Try it: what the bot would do with a question on the current knowledge base, without a
conversation being stored."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, DataTable, Input, Static

from chatbot.engine.engine import Engine
from chatbot.engine.models import Decision
from chatbot.errors import HelpdeskError
from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.notices import why_no_passages
from chatbot.text import printable
from chatbot.tui.widgets.candidate_bars import describe
from chatbot.tui.widgets.plain_input import PlainInput

JUDGED_BY = {
    "on": N_("replayed from recorded answers"),
    "off": N_("asked live"),
    "record": N_("asked live and recorded"),
}
COLUMNS = (N_("passage"), "BM25", N_("probability"), N_("judgment"))


def judgment(
    error_kind: str | None,
    probability: float | None,
    threshold: float,
    *,
    locale: Locale = DEFAULT_LOCALE,
) -> Text:
    """The table's cell: the failure's kind only (`replay-miss`, `timeout`), which fits 80
    columns; the whole reason is said under the table (`notes`)."""
    t = translations(locale)
    if probability is None:
        # The kind is the engine's code; only the lead-in is ours.
        kind = printable(error_kind or "error")
        return Text(t.gettext("not judged: {error}").format(error=kind), style="red")
    return Text(t.gettext("can answer") if probability >= threshold else t.gettext("cannot answer"),
                style="green" if probability >= threshold else "yellow")  # fmt: skip


class TryItPanel(Vertical):
    """A question box and the decision the engine of this moment makes on it."""

    @dataclass
    class Answered(Message):
        """The engine decided on a tried question (also what tests wait for)."""

        decision: Decision

    def __init__(
        self,
        *,
        engine: Callable[[str], Engine],
        timings: bool = True,
        locale: Locale = DEFAULT_LOCALE,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.locale: Locale = locale
        # A getter, not an engine: after a save the app's engine is replaced, and the next try
        # must use the new one; given the question, as its language picks the passages.
        self._engine = engine
        self._timings = timings

    def gettext(self, message: str) -> str:
        """`message` in the editor's language."""
        return translations(self.locale).gettext(message)

    def compose(self) -> ComposeResult:
        with Horizontal(id="try-ask"):
            yield PlainInput(
                placeholder=self.gettext("Ask as a customer would, then press Enter"),
                id="try-question",
            )
            yield Button(self.gettext("Try"), variant="primary", id="try-run")
        yield Static("", id="try-decision", markup=False)
        table: DataTable[Text | str] = DataTable(id="try-candidates", cursor_type="row")
        yield table
        yield Static("", id="try-answer", markup=False)

    def on_mount(self) -> None:
        table = self.query_one("#try-candidates", DataTable)
        table.add_columns(*(self.gettext(column) for column in COLUMNS))
        table.display = False  # Until a question is tried.

    @on(Input.Submitted, "#try-question")
    @on(Button.Pressed, "#try-run")
    def _try(self, event: Input.Submitted | Button.Pressed) -> None:
        event.stop()
        question = self.query_one("#try-question", Input).value
        if not question.strip():
            # A question still being tried would fill the results in again under the refusal.
            self.workers.cancel_group(self, "try-it")
            self.refuse(self.gettext("Type a question first."))
            return
        self.query_one("#try-decision", Static).update(self.gettext("Thinking…"))
        self.run_question(question)

    @work(exclusive=True, group="try-it")
    async def run_question(self, question: str) -> None:
        engine = self._engine(question)
        try:
            decision = await engine.answer(question)
        except HelpdeskError as error:  # A question over the length limit, say.
            self.refuse(printable(str(error)))
            return
        replay = engine.judge.replay
        judged_by = self.gettext(JUDGED_BY[replay]) if replay in JUDGED_BY else replay
        self.show(decision, judged_by=judged_by)
        self.post_message(self.Answered(decision))

    def refuse(self, message: str) -> None:
        """Say why the question was not tried, alone: the table and answer of the question tried
        before read as this one's under it."""
        self.query_one("#try-decision", Static).update(message)
        table = self.query_one("#try-candidates", DataTable)
        table.clear()
        table.display = False  # Its headings alone read as the last question's results.
        self.query_one("#try-answer", Static).update("")

    def show(self, decision: Decision, *, judged_by: str) -> None:
        line = describe(decision, timings=self._timings, locale=self.locale)
        if any(c.probability is not None for c in decision.candidates):
            # Only when Valen judged a passage: "judgments replayed" after "no-passages" spoke of
            # judgments none were made of.
            line.append(" · " + self.gettext("judgments {judged_by}").format(judged_by=judged_by))
        self.query_one("#try-decision", Static).update(line)
        table = self.query_one("#try-candidates", DataTable)
        table.clear()
        for c in decision.candidates:
            probability = "–" if c.probability is None else f"{c.probability:.3f}"
            table.add_row(
                Text(printable(c.id), style="bold"),
                f"{c.bm25:.3f}",
                probability,
                judgment(c.error_kind, c.probability, decision.threshold, locale=self.locale),
                key=c.id,
            )
        table.display = bool(decision.candidates)
        if decision.answer is not None:
            said = Text(printable(decision.answer.text))
        elif not decision.candidates:
            said = Text(why_no_passages(decision, locale=self.locale), style="dim")
        else:
            said = Text(self.gettext("A person would answer this one."), style="dim")
        self.query_one("#try-answer", Static).update(
            Text("\n\n").join([said, *self.notes(decision)])
        )

    def notes(self, decision: Decision) -> list[Text]:
        """Why passages were not judged, whole: a replay miss is no failure, and an editor new to
        replay mode would read its red "not judged" as one; any other reason as the engine said
        it (English, as core errors are)."""
        notes: list[Text] = []
        if any(c.error_kind == "replay-miss" for c in decision.candidates):
            notes.append(Text(self.gettext(
                "replay-miss is not a failure: in replay mode the bot uses only recorded Valen "
                "answers, and none is recorded for this question and passage. Valen judges it "
                "live when the app runs with --replay off."
            ), style="dim"))  # fmt: skip
        for c in decision.candidates:
            if c.error is not None and c.error_kind != "replay-miss":
                notes.append(Text(f"{printable(c.id)}: {printable(c.error)}", style="red"))
        return notes
