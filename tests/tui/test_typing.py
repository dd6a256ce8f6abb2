"""Each side of a conversation sees when the other types: the customer sees the agent who holds
it typing a reply, the agent sees the customer typing. The signal is sent at most every few
seconds, withdrawn on sending, lapses by the app's clock, and never comes from a note."""

from __future__ import annotations

from chatbot.desk.models import Author, State
from chatbot.desk.service import DeskService
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.typing_line import TypingLine
from tests.tui.conftest import Q1, Q3, SIZE, FrozenClock, MakeApp
from tests.tui.helpers import (
    ask,
    footer_offers,
    screen_text,
    signals_sent,
    type_text,
    wait_until,
)


def line(app: object, selector: str) -> str:
    """What the typing line shows, "" while it is hidden."""
    widget = app.screen.query_one(selector, TypingLine)  # type: ignore[attr-defined]
    return screen_text(app, widget).strip() if widget.display else ""  # type: ignore[arg-type]


async def test_the_customer_sees_the_agent_typing_until_it_lapses_or_is_sent(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q3)  # Escalated: conversation 1 waits for a person.
        other.claim(1, agent="ben")
        await wait_until(pilot, lambda: "ben" in screen_text(app))
        assert line(app, "#chat-typing") == ""
        other.set_typing(1, author=Author.AGENT)
        await wait_until(pilot, lambda: line(app, "#chat-typing") == "ben is typing…")
        clock.advance(7)  # No word from ben since: the signal lapses, by the app's clock.
        await wait_until(pilot, lambda: line(app, "#chat-typing") == "")
        other.set_typing(1, author=Author.AGENT)
        await wait_until(pilot, lambda: line(app, "#chat-typing") == "ben is typing…")
        other.reply(1, agent="ben", text="No fee when the station is full.")
        other.set_typing(1, author=Author.AGENT, typing=False)  # As the console does on sending.
        await wait_until(pilot, lambda: line(app, "#chat-typing") == "")
        await wait_until(pilot, lambda: "No fee when the station is full." in screen_text(app))


async def test_the_customers_typing_reaches_the_desk_sparingly_and_only_for_a_person(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)  # The bot answers: nobody reads typing.
        await type_text(pilot, "and my helmet")
        await signals_sent(app)
        assert other.typing(1) == {}
        await pilot.press("ctrl+t")  # Waiting for a person: still nobody to tell.
        panel = app.screen.query_one(ChatPanel)
        await wait_until(pilot, lambda: panel.conversation is not None
                         and panel.conversation.state is State.WAITING)  # fmt: skip
        await type_text(pilot, " too")
        await signals_sent(app)
        assert other.typing(1) == {}
        other.claim(1, agent="ben")  # Now a person reads along.
        await wait_until(pilot, lambda: panel.conversation is not None
                         and panel.conversation.state is State.CLAIMED)  # fmt: skip
        await type_text(pilot, "?")
        await wait_until(pilot, lambda: Author.CUSTOMER in other.typing(1))
        # Once every TYPING_EVERY_S at most: withdrawn by hand, more keys at once say nothing.
        other.set_typing(1, author=Author.CUSTOMER, typing=False)
        await type_text(pilot, " please")
        await signals_sent(app)
        assert other.typing(1) == {}
        clock.advance(3)
        await type_text(pilot, "!")
        await wait_until(pilot, lambda: Author.CUSTOMER in other.typing(1))
        await pilot.press("enter")  # Sent: withdrawn at once.
        await wait_until(pilot, lambda: other.typing(1) == {})


async def test_the_agent_sees_the_customer_typing_and_types_only_replies(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = other.start_conversation().id
    other.talk_to_person(conversation)
    other.ask(conversation, "Where is my helmet?")
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        assert isinstance(view, ConversationView)
        await wait_until(pilot, lambda: footer_offers(app, "claim"))
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: view.is_mine)
        other.set_typing(conversation, author=Author.CUSTOMER)
        await wait_until(pilot, lambda: line(app, "#typing-hint") == "The customer is typing…")
        other.ask(conversation, "It was blue.")
        other.set_typing(conversation, author=Author.CUSTOMER, typing=False)
        await wait_until(pilot, lambda: line(app, "#typing-hint") == "")
        await pilot.press("ctrl+n")  # A note: the customer hears nothing of it.
        await type_text(pilot, "Check the lost and found")
        await signals_sent(app)
        assert other.typing(conversation) == {}
        await pilot.press("escape")  # Out of the note.
        await type_text(pilot, "Found it")
        await wait_until(pilot, lambda: Author.AGENT in other.typing(conversation))
        await pilot.press("enter")
        await wait_until(pilot, lambda: other.typing(conversation) == {})
        assert other.messages(conversation)[-1].text == "Found it"
