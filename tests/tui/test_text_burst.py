"""Editing keys typed in a burst (a slow link, the browser) act in the order they were typed:
Backspace, arrows and the like are bindings, which ran only after the characters typed behind
them were already in the box, so `helmt` Backspace `et` gave `helmtet`."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Input, TextArea

from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from chatbot.tui.screens.find import FindScreen
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.plain_input import PlainInput
from chatbot.tui.widgets.plain_text_area import PlainTextArea
from chatbot.tui.widgets.transcript import Transcript
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.desk_helpers import claimed, notes, replies, waiting
from tests.tui.helpers import wait_until
from tests.tui.text_burst_helpers import BACKSPACE, burst

LEFT = ("left", None)
HOME = ("home", None)


async def test_the_customers_question_box_takes_a_burst_in_order(make_app: MakeApp) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one("#question", Input)
        box.focus()
        await pilot.pause()
        burst(app, "Where is my helmt", BACKSPACE, "et stored?")
        await wait_until(pilot, lambda: box.value.endswith("?"))
        assert box.value == "Where is my helmet stored?"


async def test_a_plain_box_and_a_text_area_take_arrows_and_backspace_in_order(
    make_app: MakeApp,
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        line = PlainInput(id="line")
        area = PlainTextArea(id="area")
        await app.screen.mount(line, area)
        line.focus()
        await pilot.pause()
        burst(app, "abcdef", BACKSPACE, BACKSPACE, BACKSPACE, "XYZ", HOME, "<", LEFT, "!")
        await wait_until(pilot, lambda: "!" in line.value)
        assert line.value == "!<abcXYZ"

        area.focus()
        await pilot.pause()
        burst(app, "Helmets are avialable", *[BACKSPACE] * 7, "ailable.", HOME, ">")
        await wait_until(pilot, lambda: ">" in area.text)
        assert area.text == ">Helmets are available."
        assert isinstance(area, TextArea)


async def test_words_typed_after_an_enter_pressed_mid_text_stay_apart_from_the_sent_ones(
    make_app: MakeApp,
) -> None:
    """Enter pressed with the cursor inside the question: the keys after it went in at that
    cursor, inside the words being sent, which then could not be taken off the box's front: it
    kept "brakes wonext rn" and the next Enter sent that."""
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one("#question", Input)
        box.focus()
        await pilot.pause()
        burst(app, "brakes wrn", LEFT, LEFT, "o", ("enter", "\r"), "next q", BACKSPACE)
        await wait_until(pilot, lambda: box.value == "next ")
        panel = app.screen.query_one(ChatPanel)
        await wait_until(pilot, lambda: panel.conversation_id is not None)


async def test_a_note_typed_in_a_burst_on_the_transcript_is_saved(
    make_app: MakeApp, other: DeskService
) -> None:
    """Ctrl+N then a note, in one burst with the transcript focused (a waiting conversation just
    opened): Ctrl+N, a binding, ran after the note's words had gone to the reply's draft, and
    the note was lost. The view now takes its own keys in turn. (The arrow acts where the focus
    was when it arrived, the transcript; the words are what matters.)"""
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        conversation = waiting(other)
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: app.focused is view.query_one(Transcript))
        burst(app, ("ctrl+n", "\x0e"), "arrow burst", LEFT, "X", ("enter", "\r"))
        await wait_until(pilot, lambda: len(notes(other, conversation)) == 1)
        [note] = notes(other, conversation)
        assert note.replace("X", "") == "arrow burst" and "X" in note
        assert replies(other, conversation) == []


@pytest.mark.parametrize(
    ("keys", "state"),
    [((("ctrl+r", "\x12"),), State.RESOLVED), ((("ctrl+g", "\x07"),) * 2, State.BOT)],
    ids=["resolve", "hand-back"],
)
async def test_a_reply_then_a_move_in_one_burst_sends_the_reply_first(
    make_app: MakeApp, other: DeskService, keys: tuple[tuple[str, str], ...], state: State
) -> None:
    """ "thanks, bye", Enter, Ctrl+R in one write: the view ran Ctrl+R as the key reached it,
    before the Enter's words did; the conversation was resolved and the goodbye never sent."""
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        conversation, view = await claimed(app, pilot, other)
        burst(app, "thanks, bye", ("enter", "\r"), *keys)
        await wait_until(pilot, lambda: other.conversation(conversation).state is state)
        await wait_until(pilot, lambda: replies(other, conversation) == ["thanks, bye"])
        # The view shows what it did (the app may also close in the middle of it: see reload).
        await wait_until(
            pilot, lambda: view.conversation is not None and view.conversation.state is state
        )


async def test_a_reply_typed_after_f6_in_one_burst_goes_to_the_next_customer(
    make_app: MakeApp, other: DeskService
) -> None:
    """F6 then a reply in one write: F6 opened the next conversation, but the reply, typed
    behind it, reached the open one first and went to the customer being left."""
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        first, view = await claimed(app, pilot, other)
        second = waiting(other)
        burst(app, ("f6", None), "next one", ("enter", "\r"))
        await wait_until(pilot, lambda: replies(other, second) == ["next one"])
        assert replies(other, first) == [] and view.conversation_id == second


async def test_words_typed_after_ctrl_f_in_one_burst_search_and_reach_no_customer(
    make_app: MakeApp, other: DeskService
) -> None:
    """Ctrl+F, "helmet", Enter in one write from the reply box: the find dialog opened after
    the words had gone into the reply box, and Enter sent "helmet" to the customer."""
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        conversation, view = await claimed(app, pilot, other)
        burst(app, ("ctrl+f", "\x06"), "helmet", ("enter", "\r"))
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        await wait_until(
            pilot, lambda: app.screen.query_one("#find-input", Input).value == "helmet"
        )
        assert replies(other, conversation) == [] and view.reply_input.value == ""


async def test_ctrl_j_submits_a_plain_box_as_enter_does() -> None:
    """A line feed (Enter typed before the app had the terminal) reaches a box as Ctrl+J: it
    submits, in turn with the keys typed before it."""

    class OneBox(App[None]):
        def __init__(self) -> None:
            super().__init__()
            self.submitted: list[str] = []

        def compose(self) -> ComposeResult:
            yield PlainInput(id="line")

        def on_input_submitted(self, event: Input.Submitted) -> None:
            self.submitted.append(event.value)

    app = OneBox()
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(PlainInput).focus()
        await pilot.pause()
        burst(app, "bike hire", ("ctrl+j", "\n"))
        await wait_until(pilot, lambda: bool(app.submitted))
        assert app.submitted == ["bike hire"]
