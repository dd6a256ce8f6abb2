"""The customer chat: answers with their source, escalations, the working indicator, feedback,
"talk to a person", inline errors, and a person's replies arriving live."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.message import Message
from textual.widgets import Input, Static

from chatbot.engine.engine import Engine
from chatbot.engine.models import Decision, Reason
from chatbot.store import ASKED_NOTICE, ESCALATED_NOTICE, Author, Feedback, State, Store
from chatbot.tui.messages import StoreWritten
from chatbot.tui.widgets.bot_working import BotWorking
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.message_bubble import MessageBubble
from chatbot.tui.widgets.queue_list import QueueList
from tests.tui.conftest import Q1, Q3, SIZE, MakeApp
from tests.tui.helpers import ask, flat, screen_text, wait_until

CHARGED_TEXT = "Charged twice for one ride? The first charge is a temporary hold of 1 euro"


class GatedEngine(Engine):
    """The real engine, holding each answer until the test opens the gate."""

    def __init__(self, inner: Engine) -> None:
        super().__init__(retriever=inner.retriever, judge=inner.judge,
                         threshold=inner.threshold, k=inner.k)  # fmt: skip
        self.gate = asyncio.Event()

    async def answer(self, question: str) -> Decision:
        await self.gate.wait()
        return await super().answer(question)


def chat_text(app: object) -> str:
    """What the customer's side of the screen shows, line wrapping undone."""
    return flat(screen_text(app, app.screen.query_one(ChatPanel)))  # type: ignore[arg-type, attr-defined]


def queue_rows(app: object) -> list[list[str]]:
    queue = app.screen.query_one(QueueList)  # type: ignore[attr-defined]
    table = queue.table
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_seed_question_1_is_answered_with_the_passage_and_its_source(
    make_app: MakeApp,
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)
        bot = [b for b in app.screen.query(MessageBubble) if b.message.author is Author.BOT]
        assert len(bot) == 1
        assert bot[0].message.passage_id == "card-charged-twice"
        shown = chat_text(app)
        assert CHARGED_TEXT in shown
        assert "Source: Charged twice for one ride (card-charged-twice)" in shown
        store = app.services.store
        [decision] = store.decisions(1)
        assert decision.decision.answer is not None
        assert store.conversation(1).state is State.BOT


async def test_the_question_is_stored_then_judged_while_an_indicator_shows(
    make_app: MakeApp,
) -> None:
    app = make_app("chat")
    posted: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=posted.append) as pilot:
        gated = GatedEngine(app.services.engine)
        app.services.engine = gated
        await ask(pilot, Q1, wait=False)
        # Stored before the engine has answered, and the customer sees it with the indicator.
        assert [m.text for m in app.services.store.messages(1)] == [Q1]
        assert app.screen.query_one(BotWorking).display
        field = app.screen.query_one("#question", Input)
        assert not field.disabled
        await pilot.press("h", "i")  # The input stays usable while the bot works.
        assert field.value == "hi"

        gated.gate.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not app.screen.query_one(BotWorking).display
    # The hook sees a message at each node it bubbles through; count each message once.
    judged = list({id(m): m for m in posted if isinstance(m, ChatPanel.Judged)}.values())
    assert [j.decision.answer.id for j in judged if j.decision.answer] == ["card-charged-twice"]
    assert any(isinstance(m, StoreWritten) for m in posted)


async def test_a_second_question_does_not_cancel_the_first(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        gated = GatedEngine(app.services.engine)
        app.services.engine = gated
        await ask(pilot, Q1, wait=False)
        await ask(pilot, Q3, wait=False)
        assert app.screen.query_one(BotWorking).display
        gated.gate.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        # Each stored question got its own decision; neither was dropped.
        decisions = app.services.store.decisions(1)
        assert sorted(d.decision.question for d in decisions) == sorted([Q1, Q3])
        assert not app.screen.query_one(BotWorking).display


async def test_seed_question_3_escalates_into_the_queue_panel(make_app: MakeApp) -> None:
    app = make_app("all")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q3)
        assert ESCALATED_NOTICE in chat_text(app)
        [row] = queue_rows(app)
        assert row[0] == "1"
        assert row[2] == "low-score"
        assert row[3] == "0.64"
        assert row[4] == "waiting"
        assert row[5].startswith("There were no free")  # Cut to the half-screen panel.
        assert "Waiting for a person" in chat_text(app)


async def test_talk_to_a_person_at_any_moment(make_app: MakeApp) -> None:
    app = make_app("all")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+t")  # Before any question at all.
        await pilot.pause()
        assert ASKED_NOTICE in chat_text(app)
        [row] = queue_rows(app)
        assert row[2] == "customer-asked"
        assert app.services.store.conversation(1).reason is Reason.CUSTOMER_ASKED


async def test_talk_to_a_person_while_the_bot_is_working(make_app: MakeApp) -> None:
    app = make_app("all")
    async with app.run_test(size=SIZE) as pilot:
        gated = GatedEngine(app.services.engine)
        app.services.engine = gated
        await ask(pilot, Q1, wait=False)
        await pilot.press("ctrl+t")
        await pilot.pause()
        gated.gate.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        store = app.services.store
        # The late answer is kept for the agent but never shown: a person has the conversation.
        assert store.conversation(1).state is State.WAITING
        assert len(store.decisions(1)) == 1
        assert Author.BOT not in [m.author for m in store.messages(1)]


async def test_not_helpful_escalates_with_customer_asked(make_app: MakeApp) -> None:
    app = make_app("all")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)
        await pilot.click("#not-helpful")
        await pilot.pause()
        [row] = queue_rows(app)
        assert (row[2], row[3]) == ("customer-asked", "0.90")
        shown = chat_text(app)
        assert "You marked this not helpful" in shown
        bot = app.services.store.messages(1)[1]
        assert bot.feedback is Feedback.NOT_HELPFUL


async def test_helpful_from_the_keyboard(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert app.services.store.messages(1)[1].feedback is Feedback.HELPFUL
        assert app.services.store.conversation(1).state is State.BOT
        assert "You marked this helpful" in chat_text(app)


async def test_empty_input_gets_an_inline_message(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "   ")
        error = app.screen.query_one("#chat-error", Static)
        assert error.display
        assert "Please type a question first." in chat_text(app)
        assert app.services.store.queue() == []
        await ask(pilot, Q1)  # The next real question clears it.
        assert not error.display


async def test_a_person_replies_live_from_another_process(make_app: MakeApp, db_path) -> None:  # type: ignore[no-untyped-def]
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q3)
        # An agent in another process (its own connection) claims and replies.
        with Store.open(db_path) as agent_side:
            assert agent_side.claim(1, agent="ben").won
            agent_side.reply(1, agent="ben", text="No late fee: we waive it when docks are full.")
        took = await wait_until(pilot, lambda: "we waive it" in chat_text(app))
        assert took < 1.0
        assert "ben (support agent) is helping you." in chat_text(app)


async def test_the_bot_is_silent_while_a_person_owns_the_conversation(
    make_app: MakeApp, db_path: Path
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q3)
        with Store.open(db_path) as agent_side:
            agent_side.claim(1, agent="ben")
        await pilot.pause(0.6)
        await ask(pilot, Q1)  # A question the bot would answer, were it its turn.
        store = app.services.store
        assert [m.author for m in store.messages(1)][-1] is Author.CUSTOMER
        assert len(store.decisions(1)) == 1  # Only the first question was ever judged.
        assert not app.screen.query_one(BotWorking).display


async def test_replay_mode_offers_the_recorded_questions(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        shown = chat_text(app)
        assert "the bot has recorded answers for these questions only" in shown
        assert f"• {Q1}" in shown and f"• {Q3}" in shown
        await pilot.press("ctrl+p")
        await pilot.press(*"ask late fee")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [m.text for m in app.services.store.messages(1)][0] == Q3
        assert app.services.store.conversation(1).state is State.WAITING


class BrokenEngine(Engine):
    """An engine that fails outright, as a bug would (Valen failures never raise)."""

    def __init__(self, inner: Engine) -> None:
        super().__init__(retriever=inner.retriever, judge=inner.judge)

    async def answer(self, question: str) -> Decision:
        raise RuntimeError("boom")


async def test_an_engine_crash_hands_the_customer_to_a_person(make_app: MakeApp) -> None:
    app = make_app("all")
    async with app.run_test(size=SIZE) as pilot:
        app.services.engine = BrokenEngine(app.services.engine)
        await ask(pilot, Q1)
        await pilot.pause()
        conversation = app.services.store.conversation(1)
        assert (conversation.state, conversation.reason) == (State.WAITING, Reason.VALEN_ERROR)
        assert not app.screen.query_one(BotWorking).display
        assert "A person will reply here." in chat_text(app)
        assert app.is_running  # The app stays up.
