"""Ctrl+G in the agent console says which message the bot will answer before handing back, the
one the desk will give it (`question_for_bot`): the customer's latest real question since the
last reply, never "talk to a person" or a thank-you. With none, it hands back at once and says
the bot will answer the customer's next message.

The console quoted "the customer's last message": "talk to a person" when the question before it
was the one left unanswered, and "thanks Wendy 👍" after the agent's answer, each of which the
bot then judged and sent back to the queue."""

from __future__ import annotations

from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from chatbot.tui.widgets.conversation_view import ConversationView
from tests.desk.helpers import WORKER
from tests.tui.conftest import Q1, SIZE, MakeApp
from tests.tui.helpers import ask, chat_text, flat, screen_text, wait_until

HELMETS = "Are there helmets for kids?"


def hint_text(view: ConversationView) -> str:
    return flat(screen_text(view.app, view.query_one("#reply-hint")))  # type: ignore[arg-type]


async def test_the_question_before_talk_to_a_person_is_quoted_and_handed_back(
    make_app: MakeApp, other: DeskService
) -> None:
    asked = other.ask(None, HELMETS)  # No bot runs: it waits, as behind a slow Valen.
    conversation = asked.conversation.id
    other.ask(conversation, "talk to a person")
    other.claim(conversation, agent="ana")
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: view.is_mine and "talk to a person" in flat(
            screen_text(app, view)))  # fmt: skip
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: "Ctrl+G again" in hint_text(view))
        assert hint_text(view) == (
            f"The bot will answer the customer's message “{HELMETS}”. Ctrl+G again hands back; "
            "Ctrl+R resolves instead."
        )
        assert other.conversation(conversation).state is State.CLAIMED
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: other.conversation(conversation).state is State.BOT)
    [question] = other.lease(WORKER, limit=5, lease_s=30)
    assert (question.id, question.text) == (asked.message.id, HELMETS)


async def test_after_a_thank_you_it_hands_back_at_once(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = other.start_conversation().id
    other.talk_to_person(conversation)
    other.ask(conversation, "Where is my helmet?")
    other.claim(conversation, agent="ana")
    other.reply(conversation, agent="ana", text="In the locker by dock 4.")
    other.ask(conversation, "thanks Wendy 👍")
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: view.is_mine and "thanks Wendy" in flat(
            screen_text(app, view)))  # fmt: skip
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: other.conversation(conversation).state is State.BOT)
        await wait_until(pilot, lambda: "next message" in hint_text(view))
        assert hint_text(view) == "Handed back: the bot will answer the customer's next message."
        assert other.lease(WORKER, limit=5, lease_s=30) == []  # Nothing for the bot to judge.
        # The next message comes: the line has said its piece.
        other.ask(conversation, "How do I unlock a bike?")
        await wait_until(
            pilot, lambda: hint_text(view) == "The bot is answering this conversation."
        )


async def test_a_question_before_the_page_shown_is_quoted(
    make_app: MakeApp, other: DeskService
) -> None:
    """The transcript opens on the newest 100 entries: the question lies before them."""
    asked = other.ask(None, HELMETS)
    conversation = asked.conversation.id
    other.ask(conversation, "talk to a person")
    other.claim(conversation, agent="ana")
    for _ in range(110):
        other.ask(conversation, "ok")
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: view.is_mine and view.transcript.hidden > 0)
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: "Ctrl+G again" in hint_text(view))
        assert f"“{HELMETS}”" in hint_text(view)
        assert other.conversation(conversation).state is State.CLAIMED


async def test_the_customer_who_says_thanks_is_answered_by_the_desk(
    make_app: MakeApp, other: DeskService
) -> None:
    """In the chat (the app's own bot answering), a thank-you after the answer gets the desk's
    word back, not "The bot could not answer this", and no place in the queue."""
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)
        await ask(pilot, "thanks!")
        await wait_until(pilot, lambda: "You're welcome." in chat_text(app))
        assert "could not answer" not in chat_text(app)
        assert "You're welcome. Ask anything else here, or ask for a person." in chat_text(app)
        assert "You are talking to the bot." in chat_text(app)
    assert other.queue() == []
