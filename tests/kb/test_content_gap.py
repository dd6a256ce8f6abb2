"""The content-gap loop: an escalated question an agent answered becomes a passage, and the same
question then retrieves that passage first."""

from __future__ import annotations

from pathlib import Path

from chatbot.desk.service import DeskService
from chatbot.engine.engine import Engine
from chatbot.knowledge_base import Passage, load_knowledge_base
from chatbot.knowledge_base.gaps import GAP_TAG, draft_from_gap, fill_gap, suggest_id
from chatbot.knowledge_base.store import PassageStore
from chatbot.retrieval.retrievers import BM25Retriever
from chatbot.store.sqlite import SQLiteStore
from chatbot.valen.cache import ReplayCache
from chatbot.valen.judge import PassageJudge
from tests.conftest import SHIPPED_CACHE

QUESTION = "Can I take my dog with me on the bike?"
REPLY = ("Small dogs may ride in a closed carrier in the front basket, up to 8 kg. "
         "Larger dogs cannot travel on our bikes.")  # fmt: skip


def engine_over(kb: Path) -> Engine:
    judge = PassageJudge(replay="on", cache=ReplayCache(SHIPPED_CACHE))
    return Engine(retriever=BM25Retriever(load_knowledge_base(kb)), judge=judge)


async def test_an_answered_gap_becomes_the_first_passage_for_its_question(
    kb_copy: Path, tmp_path: Path
) -> None:
    engine = engine_over(kb_copy)
    conversations = DeskService(SQLiteStore.open(tmp_path / "helpdesk.sqlite3"))
    try:
        # A customer asks; the bot has nothing that answers, so it escalates.
        conversation = conversations.ask(None, QUESTION).conversation
        [question] = conversations.lease("bot", limit=1, lease_s=30)
        decision = await engine.answer(QUESTION)
        assert decision.escalated
        conversations.record_decision("bot", question, decision)
        # An agent takes it and answers.
        assert conversations.claim(conversation.id, agent="ana").won
        conversations.reply(conversation.id, agent="ana", text=REPLY)

        [gap] = conversations.content_gaps(include_handled=False)
        assert (gap.question, gap.agent_reply, gap.handled) == (QUESTION, REPLY, False)
        store = PassageStore(kb_copy)
        draft = draft_from_gap(gap, taken={p.id for p in store.passages()})
        assert draft.id == "can-i-take-my-dog-with"
        assert (draft.title, draft.text, draft.tags) == (QUESTION, REPLY, (GAP_TAG,))

        passage = Passage(id=draft.id, title=draft.title, text=draft.text, tags=draft.tags)
        fill_gap(store, conversations, gap_id=gap.id, passage=passage)

        assert conversations.content_gaps(include_handled=False) == []
        [handled] = conversations.content_gaps()
        assert handled.handled and handled.passage_id == draft.id
    finally:
        conversations.close()

    # The same question, on an engine rebuilt from the knowledge base as the app does after a save.
    rebuilt = engine.with_passages(store.passages())
    assert rebuilt.retrieve(QUESTION)[0].passage.id == draft.id


def test_suggested_ids_are_safe_and_free() -> None:
    assert suggest_id("Wie lange dauert's?", gap_id=3, taken=set()) == "wie-lange-dauert-s"
    assert suggest_id("退款要多久？", gap_id=7, taken=set()) == "gap-7"
    assert suggest_id("Helmet?", gap_id=1, taken={"helmet", "helmet-2"}) == "helmet-3"
    long = suggest_id("x" * 100, gap_id=1, taken={"x" * 64})
    assert len(long) <= 64 and long.endswith("-2")
    Passage(id=long, text="valid")  # Raises if the suggestion were not a safe slug.


class _Gap:
    def __init__(self, question: str, reply: str | None = None, gap_id: int = 7) -> None:
        self.id, self.question, self.agent_reply = gap_id, question, reply


def test_a_draft_never_suggests_what_no_passage_may_hold() -> None:
    draft = draft_from_gap(_Gap("Con?", "Refunds \x1b[2Jtake\x07 5 days.\n\tOk."), taken=set())
    assert draft.id == "con-7"
    assert Passage(id=draft.id, text=draft.text).id == "con-7"
    assert draft.text == "Refunds take 5 days.\n\tOk."
    draft = draft_from_gap(_Gap("\x1b]0;PWNED\x07 why?\r\nnow"), taken=set())
    assert draft.title == "why? now" and draft.id == "why-now"
