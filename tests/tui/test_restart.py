"""Everything lives in the database: a new app on the same file finds the conversation, its
decision and the queue as they were; a question asked before the app closed is answered."""

from __future__ import annotations

import asyncio

from chatbot.desk.models import Author, State
from chatbot.desk.service import DeskService
from chatbot.engine.engine import Engine
from chatbot.engine.models import Decision
from chatbot.tui.widgets.candidate_bars import CandidateBars
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.message_bubble import MessageBubble
from chatbot.tui.widgets.queue_list import QueueList
from chatbot.tui.widgets.transcript import Transcript
from tests.tui.conftest import Q1, Q3, SIZE, MakeApp
from tests.tui.helpers import ask, engine_ready, flat, screen_text, wait_until


async def test_a_restarted_app_finds_conversation_decision_and_queue(
    make_app: MakeApp, other: DeskService
) -> None:
    first = make_app("all")
    async with first.run_test(size=SIZE) as pilot:
        await ask(pilot, Q3)
        assert other.conversation(1).state is State.WAITING

    second = make_app("agent")  # A new process would do the same: open the file, read it back.
    async with second.run_test(size=SIZE) as pilot:
        queue = second.screen.query_one(QueueList)
        await wait_until(pilot, lambda: bool(queue.items))
        [item] = queue.items
        assert (item.conversation_id, item.reason, item.question) == (1, "low-score", Q3)
        await second.open_conversation(1)
        await pilot.pause()
        view = second.screen.query_one(ConversationView)
        bars = flat(screen_text(second, view.query_one(CandidateBars)))
        assert "Escalated: low-score · threshold 0.70" in bars
        assert "late-return █████████████░░░░░░░ 0.64" in bars
        transcript = flat(screen_text(second, view.query_one(Transcript)))
        assert f"Customer 09:00 {Q3}" in transcript
        [stored] = other.decisions(1)
        assert stored.decision.top_probability is not None
        assert round(stored.decision.top_probability, 2) == 0.64


async def test_the_customer_chat_resumes_a_conversation(
    make_app: MakeApp, other: DeskService
) -> None:
    first = make_app("chat")
    async with first.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)

    second = make_app("chat", conversation_id=1)
    async with second.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(second.screen.query(MessageBubble)) == 2)
        bubbles = list(second.screen.query(MessageBubble))
        assert [b.message.text for b in bubbles][0] == Q1
        assert bubbles[1].message.passage_id == "card-charged-twice"
        assert bubbles[1].asks_for_feedback  # Still waiting for the customer's verdict.
        await ask(pilot, "Thanks, and how long do refunds take?")
        assert len(other.messages(1)) >= 3


class StuckEngine(Engine):
    """Judges forever: the app is closed while its bot is still thinking."""

    def __init__(self, inner: Engine) -> None:
        super().__init__(retriever=inner.retriever, judge=inner.judge,
                         threshold=inner.threshold, k=inner.k)  # fmt: skip
        self.started = asyncio.Event()

    async def answer(self, question: str) -> Decision:
        self.started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_a_question_left_mid_judgment_is_answered_on_reopening(
    make_app: MakeApp, other: DeskService
) -> None:
    """Closing the app while its bot judges loses nothing: the question goes back to the store,
    and the app opened again on the conversation answers it."""
    first = make_app("chat")
    async with first.run_test(size=SIZE) as pilot:
        await engine_ready(first)  # Built after the first screen.
        stuck = StuckEngine(first.services.engine)
        first.services.engine = stuck
        await ask(pilot, Q1, wait=False)
        await wait_until(pilot, stuck.started.is_set)
    [question] = other.messages(1)
    assert question.pending  # Given back unjudged, not lost.

    second = make_app("chat", conversation_id=1)
    async with second.run_test(size=SIZE) as pilot:

        def bots() -> list[MessageBubble]:
            return [b for b in second.screen.query(MessageBubble) if b.message.author is Author.BOT]

        await wait_until(pilot, lambda: bool(bots()))
        assert bots()[0].message.passage_id == "card-charged-twice"
    assert len(other.decisions(1)) == 1
