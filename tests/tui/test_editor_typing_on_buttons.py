"""Letters typed on the editor's buttons (Tab from the text lands there) go into the text they
belong to, in order, and the cursor goes with them: they used to be lost without a word."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TextArea

from chatbot.config import Settings
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor, open_passage, settle, type_into
from tests.tui.helpers import type_text, wait_until

SIZE = (80, 24)


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


@pytest.mark.parametrize("button", ["#form-save", "#form-new", "#form-delete"])
async def test_a_burst_typed_on_a_form_button_goes_into_the_passage_text(
    make_app: MakeApp, button: str
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await wait_until(pilot, lambda: editor.form.passage_id == "card-charged-twice")
        await pilot.press("enter")
        text = editor.query_one("#form-text", TextArea)
        await wait_until(pilot, lambda: app.focused is text)
        for _ in range(3):  # Save, New, Delete, in that order.
            if app.focused is editor.query_one(button):
                break
            await pilot.press("tab")
        assert app.focused is editor.query_one(button)
        await type_text(pilot, "xyz")
        await wait_until(pilot, lambda: text.text.endswith("xyz"))
        assert app.focused is text
        assert text.cursor_location == text.document.end


async def test_a_burst_typed_on_the_synonyms_save_goes_into_the_synonyms(
    make_app: MakeApp,
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+o")
        box = editor.query_one("#synonyms-text", TextArea)
        box.focus()
        await wait_until(pilot, lambda: app.focused is box)
        await pilot.press("tab")
        assert app.focused is editor.query_one("#synonyms-save")
        await type_text(pilot, "xyz")
        await wait_until(pilot, lambda: box.text.endswith("xyz"))
        assert app.focused is box


async def test_letters_typed_on_a_deleted_passages_button_do_not_change_it(
    make_app: MakeApp,
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await type_into(pilot, "#passage-search", "damage fee")
        await pilot.press("enter")
        await pilot.press("f8")
        await pilot.pause()
        await pilot.click("#confirm-yes")
        await settle(pilot)
        await open_passage(pilot, "damage-fee")
        text = editor.query_one("#form-text", TextArea)
        assert text.read_only
        before = text.text
        editor.query_one("#form-new").focus()
        await type_text(pilot, "xyz")
        await pilot.pause()
        assert text.text == before
