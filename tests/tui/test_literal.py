"""What customers and agents type is shown as typed: never Rich markup, never terminal escapes."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.widgets import Input

from chatbot.desk.service import DeskService
from chatbot.tui.localize import styled
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.message_bubble import MessageBubble
from chatbot.tui.widgets.queue_list import QueueList
from chatbot.tui.widgets.transcript import Transcript
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.helpers import (
    RecordingDriver,
    ask,
    flat,
    screen_text,
    terminal_output,
    type_into,
    wait_until,
)

MARKUP = "[bold red]x[/] and [link=https://example.com]click[/link]"
ESCAPE = "\x1b[31mred\x1b[0m and a bell\x07"
ESCAPE_SHOWN = "\\x1b[31mred\\x1b[0m and a bell\\x07"


async def test_customer_text_is_shown_literally_to_customer_and_agent(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("all")
    app.driver_class = RecordingDriver
    async with app.run_test(size=SIZE, headless=False) as pilot:
        await pilot.press("ctrl+t")  # A person, so the bot stays out of the way.
        await ask(pilot, MARKUP)
        # Escapes pasted into the question box never reach the terminal, even while the box
        # holds them: it keeps the words and drops the codes (colour copied from a terminal).
        box = app.screen.query_one("#question", Input)
        box.focus()
        app.post_message(events.Paste(ESCAPE))
        await wait_until(pilot, lambda: box.value == "red and a bell")
        await pilot.pause()
        assert "\x1b[31mred" not in terminal_output(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(other.messages(1)) == 2)
        assert other.messages(1)[-1].text == "red and a bell"
        # Escapes that reach the desk another way (an older client, the API) are spelled out.
        other.ask(1, ESCAPE)
        panel = app.screen.query_one(ChatPanel)
        await wait_until(pilot, lambda: ESCAPE_SHOWN in flat(screen_text(app, panel)))
        chat = flat(screen_text(app, panel))
        assert MARKUP in chat
        assert "\x1b" not in app.export_screenshot()

        # The bubble holds a Text object: nothing parsed it as markup on the way.
        bodies = [b.query_one(".bubble-text").render() for b in app.screen.query(MessageBubble)]
        assert any(str(body) == MARKUP for body in bodies)

        await app.open_conversation(1)
        await pilot.pause()
        await pilot.press("ctrl+l")
        await type_into(pilot, "#reply", "[i]agent[/i] \x1b[2Jthere")
        view = app.screen.query_one(ConversationView)
        transcript = flat(screen_text(app, view.query_one(Transcript)))
        assert MARKUP in transcript
        assert ESCAPE_SHOWN in transcript
        assert "[i]agent[/i] there" in transcript
        await wait_until(pilot, lambda: "[i]agent[/i] there" in flat(screen_text(app, panel)))
        assert "\x1b[2Jthere" not in terminal_output(app)


async def test_the_queue_shows_the_question_literally(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation = other.start_conversation()
        other.talk_to_person(conversation.id)
        other.ask(conversation.id, "[b]bold?[/b] \x1b[5mblink")
        queue = app.screen.query_one(QueueList)
        await wait_until(pilot, lambda: "[b]bold?[/b] \\x1b[5mblink" in screen_text(app, queue))


def test_text_objects_are_what_the_widgets_get() -> None:
    # A guard on the helper every widget uses: markup stays characters, escapes are spelled out.
    from chatbot.tui.widgets.message_bubble import literal

    shown = literal(MARKUP + ESCAPE)
    assert isinstance(shown, Text)
    assert shown.plain == MARKUP + ESCAPE_SHOWN
    assert not shown.spans


def test_a_translated_sentence_keeps_its_styled_value_where_the_translation_puts_it() -> None:
    # The value may come first or last in another language; it is drawn literally, markup and all.
    for template in ("Answered from {passage}", "依据 {passage} 回答"):
        text = styled(template, {"passage": "bold"}, passage="[red]x[/red]")
        assert text.plain == template.replace("{passage}", "[red]x[/red]")
        start = text.plain.index("[red]")
        [span] = text.spans
        assert (span.start, span.end, span.style) == (start, start + len("[red]x[/red]"), "bold")


async def test_a_paste_into_the_command_palette_reaches_the_terminal_as_text(
    make_app: MakeApp,
) -> None:
    """The palette's box is Textual's, which draws what it holds as it is: it gets a paste as
    the app's own boxes keep it."""
    app = make_app("chat", bot=False)
    app.driver_class = RecordingDriver
    async with app.run_test(size=SIZE, headless=False) as pilot:
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.focused, Input))
        box = app.focused
        assert isinstance(box, Input)
        app.post_message(events.Paste("talk to\n\x1b[2Ja person"))
        await wait_until(pilot, lambda: box.value == "talk to a person")
        await pilot.pause()
        assert "\x1b[2Ja person" not in terminal_output(app)
