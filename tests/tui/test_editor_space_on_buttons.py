"""A space typed on a button beside a text box (Tab from the box lands there) goes into the box,
as a letter does: the first space typed after Tab was lost, and the words were saved glued
(`…never collected.If the hold…`). Enter still presses the button."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, TextArea

from chatbot.config import Settings
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui.screens.editor import EditorScreen
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor, settle, writing_card_charged
from tests.tui.helpers import type_text, wait_until

ADDED = " If the hold is still there after 7 days, write to us."
SAVED = (
    "Charged twice for one ride? The first charge is a temporary hold of 1 euro to check your "
    "card. It disappears within 7 days and is never collected. If the hold is still there after "
    "7 days, write to us."
)
FORM_BUTTONS = ("form-save", "form-new", "form-delete")


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


async def tab_from_the_text(pilot: Pilot[None]) -> tuple[EditorScreen, TextArea]:
    """The tester's keys: `writing_card_charged` (the cursor at the end of its text), then Tab
    (onto a button beside the box)."""
    app = pilot.app
    editor, text = await writing_card_charged(pilot)
    assert editor.form.passage_id == "card-charged-twice"
    assert text.cursor_location == text.document.end
    await pilot.press("tab")
    assert isinstance(app.focused, Button) and app.focused.id in FORM_BUTTONS
    return editor, text


def saved_text(kb: Path) -> str:
    return str(json.loads((kb / "card-charged-twice.json").read_text(encoding="utf-8"))["text"])


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
async def test_the_space_typed_first_on_a_button_is_saved(
    make_app: MakeApp, kb_copy: Path, size: tuple[int, int]
) -> None:
    app = make_app("agent")
    async with app.run_test(size=size) as pilot:
        editor, text = await tab_from_the_text(pilot)
        await type_text(pilot, ADDED)
        await wait_until(pilot, lambda: text.text.endswith("us."))
        assert app.focused is text
        await pilot.press("ctrl+s")
        await settle(pilot)
        await wait_until(pilot, lambda: not editor.form.dirty)
        assert saved_text(kb_copy) == SAVED
        assert PassageStore(kb_copy).get("card-charged-twice").passage.text == SAVED


async def test_a_space_pressed_alone_on_a_button_goes_in_and_enter_presses_it(
    make_app: MakeApp, kb_copy: Path
) -> None:
    """Key by key, a slow typist: the space goes into the text, with the focus; Enter on a
    button, typed after Tab back to it, still presses it."""
    app = make_app("agent")
    pressed: list[str | None] = []

    def hook(message: object) -> None:
        if isinstance(message, Button.Pressed):
            pressed.append(message.button.id)

    async with app.run_test(size=(80, 24), message_hook=hook) as pilot:
        editor, text = await tab_from_the_text(pilot)
        before = text.text
        await pilot.press("space")
        await wait_until(pilot, lambda: text.text == before + " ")
        assert app.focused is text and text.cursor_location == text.document.end
        await pilot.press("O", "K")
        assert text.text == before + " OK"
        await pilot.press("tab")  # Back on the first button beside the box.
        button = app.focused
        assert isinstance(button, Button) and button.id == "form-save"
        await pilot.press("enter")
        await settle(pilot)
        assert set(pressed) == {"form-save"}  # Once, seen by each widget it bubbles through.
        assert text.text == before + " OK" and not editor.form.dirty
        assert saved_text(kb_copy) == before + " OK"


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
async def test_the_space_typed_first_on_the_synonyms_save_goes_into_the_lines(
    make_app: MakeApp, kb_copy: Path, size: tuple[int, int]
) -> None:
    app = make_app("agent")
    async with app.run_test(size=size) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+o")
        box = editor.query_one("#synonyms-text", TextArea)
        box.focus()
        await wait_until(pilot, lambda: app.focused is box)
        await type_text(pilot, "ebike = electric")  # A whole group: Save is on.
        await pilot.press("tab")
        assert app.focused is editor.query_one("#synonyms-save")
        await type_text(pilot, " bike")
        await wait_until(pilot, lambda: box.text.endswith("bike"))
        assert box.text.splitlines()[-1] == "ebike = electric bike"
        assert app.focused is box
        await pilot.press("ctrl+s")
        await settle(pilot)
        await wait_until(pilot, lambda: not editor.synonyms.dirty)
        assert "electric bike" in (kb_copy / "synonyms.toml").read_text(encoding="utf-8")
