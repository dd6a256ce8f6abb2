"""A long conversation opens on its newest messages; earlier ones are shown on request, and new
ones still arrive live."""

from __future__ import annotations

from chatbot.store import Author, ChatMessage, Store
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.transcript import PAGE, Transcript
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.helpers import screen_text

MESSAGES = PAGE * 2 + 50


def long_conversation(store: Store, messages: int) -> int:
    """A conversation ana has claimed, `messages` long, each message naming its number."""
    conversation = store.start_conversation().id
    store.add_customer_message(conversation, "Message 1: my bike will not unlock.")
    store.escalate(conversation)
    store.claim(conversation, agent="ana")
    for number in range(len(store.messages(conversation)) + 1, messages + 1):
        if number % 2:
            store.add_customer_message(conversation, f"Message {number}: still locked.")
        else:
            store.reply(conversation, agent="ana", text=f"Message {number}: try dock 4.")
    return conversation


def shown(message: ChatMessage) -> str:
    """The line a short message's text is written as."""
    return f"— {message.text}" if message.author is Author.SYSTEM else message.text


def written(transcript: Transcript) -> list[str]:
    """Every line the transcript holds, scrolled into view or not, without the trailing blank."""
    lines = [line.text.rstrip() for line in transcript.lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def footer(app: HelpDeskApp) -> str:
    return screen_text(app).splitlines()[-1]


async def test_older_messages_are_hidden_on_open_and_shown_on_request(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation = long_conversation(app.services.store, MESSAGES)
        view = await app.open_conversation(conversation)
        await pilot.pause()
        transcript = view.query_one(Transcript)
        texts = [shown(message) for message in app.services.store.messages(conversation)]
        hidden = MESSAGES - PAGE
        lines = written(transcript)
        assert lines[0] == f"— {hidden} earlier messages — press F3 to show {PAGE} more"
        assert texts[hidden] in lines
        assert not set(texts[:hidden]) & set(lines)
        assert "Earlier messages" in footer(app)

        # The message at the top of the view stays there while earlier ones are written above.
        transcript.scroll_to(y=40, animate=False, immediate=True)
        await pilot.pause()
        top = written(transcript)[transcript.scroll_offset.y]
        await pilot.press("f3")
        await pilot.pause()
        lines = written(transcript)
        assert lines[0] == "— 50 earlier messages — press F3 to show them"
        assert texts[hidden - PAGE] in lines
        assert not set(texts[: hidden - PAGE]) & set(lines)
        assert lines[transcript.scroll_offset.y] == top

        await pilot.press("f3")
        await pilot.pause()
        lines = written(transcript)
        assert lines[:2] == ["Customer", "Message 1: my bike will not unlock."]
        assert [line for line in lines if "earlier message" in line] == []
        assert all(text in lines for text in texts)
        assert transcript.hidden == 0
        assert "Earlier messages" not in footer(app)


async def test_new_messages_append_while_earlier_ones_are_hidden(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        store = app.services.store
        conversation = long_conversation(store, MESSAGES)
        view = await app.open_conversation(conversation)
        await pilot.pause()
        store.add_customer_message(conversation, "[b]Live[/b]: it unlocked!")
        app.poll_store()
        await pilot.pause()
        transcript = view.query_one(Transcript)
        lines = written(transcript)
        assert lines[-2:] == ["Customer", "[b]Live[/b]: it unlocked!"]
        assert transcript.hidden == MESSAGES - PAGE  # Arriving messages reveal nothing earlier.

        await pilot.press("f3")
        await pilot.press("f3")
        await pilot.pause()
        lines = written(transcript)
        assert lines[-2:] == ["Customer", "[b]Live[/b]: it unlocked!"]
        assert lines.count("[b]Live[/b]: it unlocked!") == 1
        assert all(shown(message) in lines for message in store.messages(conversation))


async def test_a_short_conversation_shows_everything_and_offers_nothing_earlier(
    make_app: MakeApp,
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation = long_conversation(app.services.store, PAGE)
        view = await app.open_conversation(conversation)
        await pilot.pause()
        lines = written(view.query_one(Transcript))
        assert lines[:2] == ["Customer", "Message 1: my bike will not unlock."]
        assert "Earlier messages" not in footer(app)
        assert not view.check_action("show_earlier", ())
        assert isinstance(app.screen.query_one(ConversationView), ConversationView)
