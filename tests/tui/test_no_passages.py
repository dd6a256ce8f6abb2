"""When retrieval finds nothing, the agent's candidate bars and the editor's Try it say why: the
question's words that are in too many passages to count alone, and those in none."""

from __future__ import annotations

from rich.console import Console
from textual.app import App, ComposeResult
from textual.widgets import Static

from chatbot.engine.engine import Engine
from chatbot.engine.models import Decision
from chatbot.knowledge_base.storage import load_knowledge_base
from chatbot.retrieval import BM25Retriever
from chatbot.tui.widgets.candidate_bars import render_decision
from chatbot.tui.widgets.try_it import TryItPanel
from tests.conftest import SHIPPED_KB
from tests.tui.conftest import SIZE
from tests.tui.helpers import type_into

DOG = "Can I bring my dog on the bike?"
WHY = "“bike” is in 5 of 10 passages, too common to pick one on its own"


def engine() -> Engine:
    from chatbot.valen.judge import PassageJudge

    return Engine(
        retriever=BM25Retriever(load_knowledge_base(SHIPPED_KB)), judge=PassageJudge(replay="on")
    )


async def test_candidate_bars_say_why_nothing_was_retrieved() -> None:
    decision = await engine().answer(DOG)
    assert decision.candidates == () and decision.retrieval is not None
    console = Console(width=200, record=True)
    console.print(render_decision(decision, timings=False))
    text = console.export_text()
    assert WHY in text and "“bring”, “dog” are in no passage" in text
    assert "shares a word" not in text


class TryItApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.decisions: list[Decision] = []
        self._engine = engine()

    def compose(self) -> ComposeResult:
        yield TryItPanel(engine=lambda: self._engine, timings=False)

    def on_try_it_panel_answered(self, message: TryItPanel.Answered) -> None:
        self.decisions.append(message.decision)


async def test_try_it_says_why_nothing_was_retrieved() -> None:
    app = TryItApp()
    async with app.run_test(size=SIZE) as pilot:
        await type_into(pilot, "#try-question", DOG)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.decisions and app.decisions[-1].candidates == ()
        shown = str(app.query_one("#try-answer", Static).render())
        assert WHY in shown and "“bring”, “dog” are in no passage" in shown
