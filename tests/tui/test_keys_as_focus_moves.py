"""Keys typed in a burst where the focus is about to move: a burst typed on the editor's buttons
goes into the text whole, spaces included; Down in the find box reaches the results; and the
editor's confirmation keeps both its buttons on screen in a narrow window."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button, Input, OptionList, TextArea

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.tui.screens.editor import Confirm, EditorScreen
from chatbot.tui.screens.find import FindScreen
from chatbot.tui.widgets.agent_console import AgentConsole
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.desk_helpers import waiting
from tests.tui.editor_helpers import on_form_button, open_editor, type_into
from tests.tui.helpers import type_text, wait_until
from tests.tui.text_burst_helpers import BACKSPACE, burst

SIZE = (80, 24)
SENTENCE = "Contact us if it stays longer."


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


@pytest.mark.parametrize("button", ["#form-save", "#form-new", "#form-delete"])
async def test_a_burst_typed_on_a_form_button_keeps_its_spaces(
    make_app: MakeApp, button: str
) -> None:
    """A tester's `send-keys -l` on a button after Tab: the letters reached the text, every
    space stayed with the button, which does nothing with one ("Contactusifitstayslonger.")."""
    app = make_app("agent")
    pressed: list[str | None] = []

    def hook(message: object) -> None:
        if isinstance(message, Button.Pressed):
            pressed.append(message.button.id)

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        editor, text = await on_form_button(pilot, button)
        before = text.text
        await type_text(pilot, SENTENCE)
        await wait_until(pilot, lambda: text.text.endswith("."))
        assert text.text == before + SENTENCE
        assert app.focused is text and pressed == []
        assert isinstance(app.screen, EditorScreen)


async def test_enter_and_backspace_in_the_burst_act_in_the_text_in_turn(
    make_app: MakeApp,
) -> None:
    """Enter typed on Save behind letters went to the button (a save of half the words), and
    Backspace ran once the letters behind it were in."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor, text = await on_form_button(pilot, "#form-save")
        before = text.text
        burst(app, "Ask ux", BACKSPACE, "s", ("enter", "\r"), "Thanks")
        await wait_until(pilot, lambda: text.text.endswith("Thanks"))
        assert text.text == before + "Ask us\nThanks"
        assert editor.form.dirty  # Not saved: Enter pressed no button.


async def test_a_burst_typed_on_the_synonyms_save_keeps_its_spaces(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+o")
        box = editor.query_one("#synonyms-text", TextArea)
        box.focus()
        await wait_until(pilot, lambda: app.focused is box)
        await pilot.press("tab")
        assert app.focused is editor.query_one("#synonyms-save")
        before = box.text
        await type_text(pilot, "ebike = e bike, electric bike")
        await wait_until(pilot, lambda: box.text.endswith("bike"))
        assert box.text == before + "ebike = e bike, electric bike"
        assert app.focused is box


async def test_down_in_the_find_box_goes_to_the_results(
    make_app: MakeApp, other: DeskService
) -> None:
    """The box's scroll binding took Down, which it cannot scroll by, and stopped it: the
    screen's Down-to-results never ran."""
    app = make_app("agent")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: bool(app.screen.query(AgentConsole)))
        waiting(other, "Where is my helmet?")
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        find = app.screen
        assert isinstance(find, FindScreen)
        await type_into(pilot, "#find-input", "helmet")
        await wait_until(pilot, lambda: len(find.hits) == 1)
        assert app.focused is find.query_one("#find-input", Input)
        await pilot.press("down")
        await wait_until(pilot, lambda: app.focused is find.query_one("#find-results", OptionList))


async def test_the_confirmation_wraps_its_buttons_in_a_narrow_window(make_app: MakeApp) -> None:
    """At 36 columns the confirmation's buttons, side by side, went past its border: Cancel was
    cut off. They go on to a second row instead."""
    app = make_app("agent")
    async with app.run_test(size=(36, 24)) as pilot:
        await open_editor(pilot)
        await type_into(pilot, "#passage-search", "damage fee")
        await pilot.press("enter")
        await pilot.press("f8")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        confirm = app.screen
        await pilot.pause()
        inside = confirm.query_one("#confirm-dialog").content_region
        for selector in ("#confirm-yes", "#confirm-no"):
            region = confirm.query_one(selector, Button).region
            assert region.width > 0 and inside.contains_region(region), selector
