"""When retrieval finds nothing, the agent's candidate bars and the editor's Try it say why: the
question's words that are in too many passages to count alone, and those in none."""

from __future__ import annotations

from rich.console import Console
from textual.app import App, ComposeResult
from textual.widgets import Static

from chatbot.engine.engine import Engine
from chatbot.engine.models import Decision
from chatbot.knowledge_base.storage import load_knowledge_base
from chatbot.notices import why_no_passages
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
    # A Chinese agent reads the same reasons in Chinese, the customer's words as written.
    console = Console(width=200, record=True)
    console.print(render_decision(decision, timings=False, locale="zh"))
    text = console.export_text()
    assert (
        "未检索到段落：“bike”出现在 10 个段落中的 5 个里，太常见，无法单独选出段落；"
        "“bring”、“dog”不在任何段落中。"
    ) in text
    assert "in no passage" not in text and "too common" not in text


async def test_every_reason_reads_in_each_language() -> None:
    """No word to search for; several too common; no trace (the overlap retriever's)."""
    nothing = await engine().answer("Is it there?")
    several = await engine().answer("bike ride")
    assert nothing.candidates == () and several.candidates == ()
    assert why_no_passages(nothing) == (
        "No passage retrieved: every word of the question is too common to search for."
    )
    assert (
        why_no_passages(nothing, locale="zh")
        == "未检索到段落：问题中的每个词都太常见，无法用于搜索。"
    )
    # Punctuation only: there was no word at all, none was dropped as too common.
    none = await engine().answer("???")
    assert none.candidates == ()
    assert why_no_passages(none) == (
        "No passage retrieved: the question has no words to search for."
    )
    assert why_no_passages(none, locale="zh") == "未检索到段落：问题中没有可用于搜索的词。"
    untraced = nothing.model_copy(update={"retrieval": None})
    assert why_no_passages(untraced, locale="zh") == "没有段落与问题有共同的词。"
    assert "are each in half or more of the 10 passages" in why_no_passages(several)
    assert "各自出现在 10 个段落中的一半或以上" in why_no_passages(several, locale="zh")


async def test_a_chinese_word_is_named_once() -> None:
    # A Chinese word searches as its character pairs: "退款多久到账" is five terms, and the reason
    # named the word once per term ("“退款多久到账”, “退款多久到账”, …).
    decision = await engine().answer("退款多久到账？")
    assert decision.candidates == () and decision.retrieval is not None
    assert len(decision.retrieval.terms) > 1
    assert why_no_passages(decision) == "No passage retrieved: “退款多久到账” is in no passage."
    assert why_no_passages(decision, locale="zh") == "未检索到段落：“退款多久到账”不在任何段落中。"


class TryItApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.decisions: list[Decision] = []
        self._engine = engine()

    def compose(self) -> ComposeResult:
        yield TryItPanel(engine=lambda question: self._engine, timings=False)

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
