"""A tester's findings with the agent console's dialogs that open on a key pressed mid-sentence,
after the fixes of test_dialog_typing:

- The quit dialog (Ctrl+Q with claims held) still answered on its letters. An agent who hit
  Ctrl+Q by mistake while replying and typed on ("have a nice day") handed back every claim with
  its `h` (each customer told the agent stepped away), or kept them with `k`, and the app quit
  with the words lost. Typing in a burst under way as it opens cancels it now and goes on into
  the reply box, whole; a letter pressed once it has been read is still its button's key.
- Ctrl+N before the agent had a name asked for it first, and the note typed on at once went into
  the reply's draft, not the note asked for. It goes into the note now, and nothing is sent until
  the note's own Enter, once the name is known."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from chatbot.desk.models import ChatEvent, Note, State
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.dialogs import ClaimsOnQuit, NameDialog
from chatbot.tui.widgets.conversation_view import ConversationView
from tests.tui.conftest import FrozenClock, MakeApp
from tests.tui.desk_helpers import agent_words
from tests.tui.helpers import burst, focus_of, read, type_text, unnamed_agent, wait_until

SIZE = (80, 24)
STARTED = "Your refund is on its way, "


def waiting(desk: DeskService, question: str = "Where is my refund?") -> int:
    """A customer in another process who asked for a person, then asked `question`."""
    conversation = desk.start_conversation().id
    desk.talk_to_person(conversation)
    desk.ask(conversation, question)
    return conversation


def notes(desk: DeskService, conversation: int) -> list[Note]:
    return [e.event for e in desk.entries(conversation)
            if isinstance(e, ChatEvent) and isinstance(e.event, Note)]  # fmt: skip


# The quit dialog --------------------------------------------------------------------------------


async def quit_asked_mid_reply(pilot: Pilot[None], other: DeskService) -> tuple[list[int], Input]:
    """Ana holds two claims, and is writing a reply in one of them when she presses Ctrl+Q: the
    dialog asks. Returns the claims and the reply box."""
    app = pilot.app
    assert isinstance(app, HelpDeskApp)
    claims = [waiting(other), waiting(other, "The dock is broken")]
    for conversation in claims:
        assert other.claim(conversation, agent="ana").won
    view = await app.open_conversation(claims[0])
    await wait_until(pilot, lambda: view.is_mine)
    view.reply_input.focus()
    await type_text(pilot, STARTED)
    await pilot.press("ctrl+q")
    await wait_until(pilot, lambda: isinstance(app.screen, ClaimsOnQuit))
    return claims, view.reply_input


@pytest.mark.parametrize("words", ["have a nice day", "keep calm, ask again"])
async def test_a_reply_typed_on_after_ctrl_q_goes_on_in_the_box_and_nothing_is_handed_back(
    make_app: MakeApp, other: DeskService, words: str
) -> None:
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        claims, reply = await quit_asked_mid_reply(pilot, other)
        # Typed on at once: its `h` (hand back) or `k` (keep), `a` and `c` are the reply's.
        await burst(pilot, *words)
        await wait_until(pilot, lambda: reply.value == STARTED + words)
        assert not isinstance(app.screen, ClaimsOnQuit) and focus_of(app) is reply
        assert app.is_running and app.return_code is None
        assert [other.conversation(c).agent for c in claims] == ["ana", "ana"]
        assert [other.conversation(c).state for c in claims] == [State.CLAIMED] * 2
        assert agent_words(other, claims[0]) == []
        # The reply goes out with its own Enter, as it would have without the slip.
        await pilot.press("enter")
        await wait_until(pilot, lambda: agent_words(other, claims[0]) == [STARTED + words])


@pytest.mark.parametrize(("key", "state"), [("k", State.CLAIMED), ("h", State.WAITING)])
async def test_a_letter_pressed_once_the_quit_dialog_is_read_answers_it(
    make_app: MakeApp, other: DeskService, key: str, state: State
) -> None:
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        claims, reply = await quit_asked_mid_reply(pilot, other)
        read(app.screen)
        await pilot.press(key)
        await wait_until(pilot, lambda: app.return_code is not None)
        assert reply.value == STARTED
    assert [other.conversation(c).state for c in claims] == [state] * 2


async def test_a_key_of_the_dialogs_own_ends_the_burst(
    make_app: MakeApp, other: DeskService
) -> None:
    """Tab (moving to Keep) is the dialog being used: the letter after it is its key again."""
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        claims, reply = await quit_asked_mid_reply(pilot, other)
        await burst(pilot, "tab", "k")
        await wait_until(pilot, lambda: app.return_code is not None)
        assert reply.value == STARTED
    assert [other.conversation(c).state for c in claims] == [State.CLAIMED] * 2


async def test_a_backspace_mending_the_reply_after_ctrl_q_goes_on_in_the_box(
    make_app: MakeApp, other: DeskService
) -> None:
    """A tester's first key after the slip was Backspace (a typo mended): the burst was over,
    and the `h` after it handed the claims back and quit, the words going to the shell."""
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        claims, reply = await quit_asked_mid_reply(pilot, other)
        await burst(pilot, "backspace", *"! have a nice day")
        await wait_until(pilot, lambda: reply.value == STARTED[:-1] + "! have a nice day")
        assert not isinstance(app.screen, ClaimsOnQuit) and app.return_code is None
        assert [other.conversation(c).state for c in claims] == [State.CLAIMED] * 2


async def test_an_enter_sending_the_reply_after_ctrl_q_sends_it_and_hands_nothing_back(
    make_app: MakeApp, other: DeskService
) -> None:
    """Enter pressed at once pressed the dialog's first button: every claim handed back, the
    app quit, the reply never sent."""
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        claims, reply = await quit_asked_mid_reply(pilot, other)
        await pilot.press("enter")
        await wait_until(pilot, lambda: agent_words(other, claims[0]) == [STARTED])
        assert not isinstance(app.screen, ClaimsOnQuit) and app.return_code is None
        assert [other.conversation(c).state for c in claims] == [State.CLAIMED] * 2


async def test_on_the_queue_an_enter_at_once_still_answers(
    make_app: MakeApp, other: DeskService
) -> None:
    """With nothing being typed (the queue has the focus), Ctrl+Q then Enter is the agent
    quitting: the first choice, at once."""
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        claims = [waiting(other)]
        assert other.claim(claims[0], agent="ana").won
        await wait_until(pilot, lambda: app.focused is not None)
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, ClaimsOnQuit))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.return_code is not None)
    assert other.conversation(claims[0]).state is State.WAITING


# A note asked for before the agent has a name ---------------------------------------------------

NOTE = "Customer is upset, refund twice"


async def note_asked_unnamed(
    pilot: Pilot[None], other: DeskService, *, in_box: bool
) -> tuple[int, ConversationView]:
    """A waiting conversation open (its transcript focused, or `in_box` its reply box) and Ctrl+N
    pressed by an agent with no name yet: the name dialog asks."""
    app = pilot.app
    assert isinstance(app, HelpDeskApp)
    conversation = waiting(other)
    view = await app.open_conversation(conversation)
    await wait_until(pilot, lambda: view.conversation is not None)
    if in_box:
        view.reply_input.focus()
        await wait_until(pilot, lambda: focus_of(app) is view.reply_input)
    else:
        await wait_until(pilot, lambda: focus_of(app) is view.transcript)
    await pilot.press("ctrl+n")
    await wait_until(pilot, lambda: isinstance(app.screen, NameDialog))
    return conversation, view


@pytest.mark.parametrize("in_box", [False, True], ids=["on-the-transcript", "in-the-reply-box"])
async def test_a_note_typed_on_after_ctrl_n_goes_into_the_note_and_nothing_is_sent(
    tmp_path: Path, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService, in_box: bool
) -> None:
    app = unnamed_agent(tmp_path, http, clock)
    async with app.run_test(size=SIZE) as pilot:
        conversation, view = await note_asked_unnamed(pilot, other, in_box=in_box)
        dialog = app.screen
        assert isinstance(dialog, NameDialog)
        box = view.reply_input
        # Typed on at once, Enter too: the note's words, in the note; nothing saved without a
        # name, and no reply.
        await burst(pilot, *NOTE, "enter")
        await wait_until(pilot, lambda: box.value == NOTE)
        assert view.note_mode and dialog.is_active
        assert dialog.query_one("#name-input", Input).value != NOTE
        assert notes(other, conversation) == [] and agent_words(other, conversation) == []
        # The name, typed once the dialog is read: the note stays a note, in its box.
        read(dialog)
        dialog.query_one("#name-input", Input).clear()
        await type_text(pilot, "Ana Lima")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.services.agent == "Ana Lima")
        await wait_until(pilot, lambda: focus_of(app) is box)
        assert view.note_mode and box.value == NOTE
        assert notes(other, conversation) == [] and agent_words(other, conversation) == []
        # Its own Enter saves it, under the name; the reply's box is as it was, empty.
        await pilot.press("enter")
        await wait_until(pilot, lambda: notes(other, conversation) != [])
        assert notes(other, conversation) == [Note(agent="Ana Lima", text=NOTE)]
        await wait_until(pilot, lambda: not view.note_mode)
        assert box.value == "" and agent_words(other, conversation) == []
        assert other.conversation(conversation).state is State.WAITING


async def test_cancelling_the_name_leaves_the_note_in_its_draft_never_the_reply(
    tmp_path: Path, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    app = unnamed_agent(tmp_path, http, clock)
    async with app.run_test(size=SIZE) as pilot:
        conversation, view = await note_asked_unnamed(pilot, other, in_box=True)
        await burst(pilot, *NOTE)
        await wait_until(pilot, lambda: view.reply_input.value == NOTE)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, NameDialog))
        await wait_until(pilot, lambda: not view.note_mode)
        assert view.reply_input.value == "" and app.services.agent is None
        # Asked for again, the note comes back in its box.
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, NameDialog))
        assert view.note_mode and view.reply_input.value == NOTE
        assert notes(other, conversation) == [] and agent_words(other, conversation) == []
