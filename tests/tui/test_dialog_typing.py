"""A tester's findings with dialogs that open on a key pressed mid-sentence, as the new-chat dialog
did (test_new_chat_dialog_typing):

- The editor's confirmations answered `y`. An editor who pressed Ctrl+S while someone else had
  saved the passage, and typed on ("… and my bike"), replaced the other editor's version with the
  `y` of "my", and the words typed were lost. No letter answers them now: typing cancels and goes
  back into the field, in order; only the yes button (Tab, Enter) goes ahead.
- The agent's name dialog, asked on the first Ctrl+L: the reply typed on after Ctrl+L went into
  the name box, and its Enter made "Hi, I'm on it" the name customers see. A burst under way as
  the dialog opens goes to the reply box; a name typed once the dialog is read is the name."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from chatbot.config import Settings
from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.dialogs import BURST_S, NameDialog
from chatbot.tui.screens.editor import Confirm, EditorScreen
from tests.tui.conftest import FrozenClock, MakeApp, editor_settings
from tests.tui.desk_helpers import agent_words, waiting
from tests.tui.editor_follows_helpers import (
    open_editor,
    open_passage,
    problem,
    save_elsewhere,
    text,
)
from tests.tui.helpers import (
    burst,
    focus_of,
    footer_line,
    footer_offers,
    type_text,
    unnamed_agent,
    wait_until,
)

SIZE = (80, 24)
THEIRS = "Helmets are free at every station; theirs."


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


# The editor's confirmations ---------------------------------------------------------------------


async def confirm_open(pilot: Pilot[None]) -> Confirm:
    """The confirmation asks, its Cancel focused."""
    app = pilot.app
    assert isinstance(app, HelpDeskApp)
    await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
    dialog = app.screen
    assert isinstance(dialog, Confirm)
    # Its buttons once composed: the screen is on the stack a moment before (a query then found
    # nothing, and raised, on a loaded machine).
    await wait_until(
        pilot, lambda: bool(no := dialog.query("#confirm-no")) and focus_of(app) is no.first()
    )
    return dialog


async def typing_on_the_passage(pilot: Pilot[None]) -> EditorScreen:
    editor = await open_editor(pilot)
    await open_passage(pilot, "helmet")
    editor.form.text_area.focus()
    editor.form.text_area.move_cursor((0, 0))
    await type_text(pilot, "Mine: ")
    return editor


async def test_words_typed_on_replace_their_version_go_on_in_the_text_and_replace_nothing(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await typing_on_the_passage(pilot)
        save_elsewhere(kb_copy, "helmet", THEIRS)
        await wait_until(pilot, lambda: "meanwhile" in problem(editor), timeout=15)
        # Ctrl+S mid-sentence: the question opens, and the sentence goes on.
        await pilot.press("ctrl+s")
        dialog = await confirm_open(pilot)
        assert "Replace their version of 'helmet' with yours?" in dialog.question
        line = await footer_line(pilot)
        assert "esc Cancel" in line and "y " not in line and "Replace" not in line, line
        await burst(pilot, *"and my bike")
        await wait_until(pilot, lambda: text(editor).startswith("Mine: and my bike"))
        assert app.screen is editor and focus_of(app) is editor.form.text_area
        assert PassageStore(kb_copy).get("helmet").passage.text == THEIRS
        assert editor.form.dirty and editor.form.changed_elsewhere
        mine = text(editor)
        # Enter by habit (on the focused Cancel), and Escape, replace nothing either.
        for key in ("enter", "escape"):
            await pilot.press("ctrl+s")
            await confirm_open(pilot)
            await pilot.press(key)
            await wait_until(pilot, lambda: app.screen is editor)
            assert PassageStore(kb_copy).get("helmet").passage.text == THEIRS
        assert text(editor) == mine
        # Its button, reached with Tab, replaces; theirs stays in the history.
        await pilot.press("ctrl+s")
        await confirm_open(pilot)
        await pilot.press("tab")
        await wait_until(pilot, lambda: focus_of(app) is app.screen.query_one("#confirm-yes"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: PassageStore(kb_copy).get("helmet").passage.text == mine)
        assert PassageStore(kb_copy).history("helmet")[-1].passage().text == THEIRS


@pytest.mark.parametrize(
    "key",
    ["f8", "ctrl+n", "f9", "ctrl+q", None],
    ids=["delete", "discard", "switch-language", "quit", "restore"],
)
async def test_a_letter_typed_on_any_confirmation_cancels_it_and_stays_in_the_text(
    make_app: MakeApp, kb_copy: Path, key: str | None
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await typing_on_the_passage(pilot)
        await pilot.press("ctrl+s")  # Saved once: a version in the history to restore.
        await wait_until(pilot, lambda: not editor.form.dirty)  # Reopened, the cursor at the end.
        await type_text(pilot, "again ")
        assert editor.form.dirty
        if key is None:
            editor.action_restore()  # History's Restore (a button, or the palette).
        else:
            await pilot.press(key)
        await confirm_open(pilot)
        line = await footer_line(pilot)
        assert "esc Cancel" in line and "y " not in line, line
        await burst(pilot, *"yes, my ")
        await wait_until(pilot, lambda: text(editor).endswith("again yes, my "))
        assert app.is_running and app.screen is editor and editor.form.dirty
        assert focus_of(app) is editor.form.text_area and editor.edited == "en"
        assert editor.form.passage_id == "helmet" and not editor.form.deleted
        stored = PassageStore(kb_copy).get("helmet").passage.text
        assert stored.startswith("Mine: ") and "again" not in stored


# The agent's display name -----------------------------------------------------------------------


async def name_asked(
    pilot: Pilot[None], other: DeskService, *, in_box: bool = False
) -> tuple[int, Input]:
    """A waiting conversation open (its transcript focused, or `in_box` its reply box) and Ctrl+L
    pressed: the name dialog is asked. Returns the conversation and the reply box."""
    app = pilot.app
    assert isinstance(app, HelpDeskApp)
    conversation = waiting(other)
    view = await app.open_conversation(conversation)
    await wait_until(pilot, lambda: footer_offers(app, "claim"))
    if in_box:
        view.reply_input.focus()
        await wait_until(pilot, lambda: focus_of(app) is view.reply_input)
    else:
        await wait_until(pilot, lambda: focus_of(app) is view.transcript)
    await pilot.press("ctrl+l")
    await wait_until(pilot, lambda: isinstance(app.screen, NameDialog))
    return conversation, view.reply_input


def paused(dialog: NameDialog) -> None:
    """As if the agent paused for longer than a burst's keys are apart: the dialog's last key
    (or its opening) moved back in time, rather than the test waiting a second out."""
    if dialog._burst is not None:
        dialog._burst -= BURST_S + 0.1


@pytest.mark.parametrize("in_box", [False, True], ids=["on-the-transcript", "in-the-reply-box"])
async def test_a_reply_typed_on_after_ctrl_l_goes_to_the_reply_box_not_the_name(
    tmp_path: Path, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService, in_box: bool
) -> None:
    app = unnamed_agent(tmp_path, http, clock)
    async with app.run_test(size=SIZE) as pilot:
        conversation, reply = await name_asked(pilot, other, in_box=in_box)
        dialog = app.screen
        assert isinstance(dialog, NameDialog)
        name_box = dialog.query_one("#name-input", Input)
        # Typed on at once, Enter too, as the reply the agent had started: none of it is the
        # name (nor sent: the conversation is not theirs yet).
        await burst(pilot, *"Hi, I'm on it", "enter")
        await wait_until(pilot, lambda: reply.value == "Hi, I'm on it")
        assert dialog.is_active and name_box.value == ""
        assert other.conversation(conversation).state is State.WAITING
        assert agent_words(other, conversation) == []
        # Read (a pause in the typing), the dialog takes the name.
        paused(dialog)
        name_box.clear()
        await type_text(pilot, "Ana Lima")
        assert name_box.value == "Ana Lima"
        await pilot.press("enter")
        await wait_until(pilot, lambda: other.conversation(conversation).agent == "Ana Lima")
        # The reply is still in its box, sent by its own Enter.
        await wait_until(pilot, lambda: focus_of(app) is reply)
        assert reply.value == "Hi, I'm on it"
        await pilot.press("enter")
        await wait_until(pilot, lambda: agent_words(other, conversation) == ["Hi, I'm on it"])


async def test_a_name_typed_once_the_dialog_is_read_is_the_name(
    tmp_path: Path, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    app = unnamed_agent(tmp_path, http, clock)
    async with app.run_test(size=SIZE) as pilot:
        conversation, reply = await name_asked(pilot, other)
        name_box = app.screen.query_one("#name-input", Input)
        dialog = app.screen
        assert isinstance(dialog, NameDialog)
        paused(dialog)  # Time to read it.
        await burst(pilot, *"Ana Lima", "enter")
        await wait_until(pilot, lambda: other.conversation(conversation).agent == "Ana Lima")
        assert reply.value == "" and not name_box.is_attached


async def test_escape_at_once_still_cancels_the_name(
    tmp_path: Path, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    """Escape, even in the moment a burst would go on, is the dialog's own key: it cancels."""
    app = unnamed_agent(tmp_path, http, clock)
    async with app.run_test(size=SIZE) as pilot:
        conversation, reply = await name_asked(pilot, other)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, NameDialog))
        assert other.conversation(conversation).state is State.WAITING and reply.value == ""
