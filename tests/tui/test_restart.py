"""Everything lives in the database: a new app on the same file finds the conversation, its
decision and the queue as they were."""

from __future__ import annotations

from chatbot.store import State
from chatbot.tui.widgets.candidate_bars import CandidateBars
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.message_bubble import MessageBubble
from chatbot.tui.widgets.queue_list import QueueList
from chatbot.tui.widgets.transcript import Transcript
from tests.tui.conftest import Q1, Q3, SIZE, MakeApp
from tests.tui.helpers import ask, flat, screen_text


async def test_a_restarted_app_finds_conversation_decision_and_queue(make_app: MakeApp) -> None:
    first = make_app("all")
    async with first.run_test(size=SIZE) as pilot:
        await ask(pilot, Q3)
        assert first.services.store.conversation(1).state is State.WAITING

    second = make_app("agent")  # A new process would do the same: open the file, read it back.
    async with second.run_test(size=SIZE) as pilot:
        await pilot.pause()
        [item] = second.screen.query_one(QueueList).items
        assert (item.conversation_id, item.reason, item.first_question) == (1, "low-score", Q3)
        await second.open_conversation(1)
        await pilot.pause()
        view = second.screen.query_one(ConversationView)
        bars = flat(screen_text(second, view.query_one(CandidateBars)))
        assert "Escalated: low-score · threshold 0.70" in bars
        assert "late-return █████████████░░░░░░░ 0.64" in bars
        transcript = flat(screen_text(second, view.query_one(Transcript)))
        assert f"Customer {Q3}" in transcript
        [stored] = second.services.store.decisions(1)
        assert stored.decision.top_probability is not None
        assert round(stored.decision.top_probability, 2) == 0.64


async def test_the_customer_chat_resumes_a_conversation(make_app: MakeApp) -> None:
    first = make_app("chat")
    async with first.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)

    second = make_app("chat", conversation_id=1)
    async with second.run_test(size=SIZE) as pilot:
        await pilot.pause()
        bubbles = list(second.screen.query(MessageBubble))
        assert [b.message.text for b in bubbles][0] == Q1
        assert bubbles[1].message.passage_id == "card-charged-twice"
        assert bubbles[1].asks_for_feedback  # Still waiting for the customer's verdict.
        await ask(pilot, "Thanks, and how long do refunds take?")
        assert len(second.services.store.messages(1)) >= 3
