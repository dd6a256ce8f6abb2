"""The editor's knowledge-base folder moved away while it runs: a new passage is refused in the
form, where it said "Saved" and made a new folder of one passage that every app switched to."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static, TextArea

from chatbot.config import Settings
from chatbot.tui.screens.editor import EditorScreen
from tests.tui.conftest import SIZE, MakeApp, editor_settings
from tests.tui.helpers import type_text, wait_until


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


async def test_a_new_passage_in_a_folder_moved_away_is_refused_in_the_form(
    make_app: MakeApp, kb_copy: Path
) -> None:
    moved = kb_copy.with_name("kb.moved")
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await pilot.app.workers.wait_for_complete()
        editor = pilot.app.screen
        assert isinstance(editor, EditorScreen)
        await pilot.press("ctrl+n")
        editor.query_one("#form-id").focus()
        await type_text(pilot, "lost-item")
        editor.query_one("#form-text").focus()
        await type_text(pilot, "Kept 30 days.")
        kb_copy.rename(moved)
        await pilot.press("ctrl+s")

        def problem() -> str:
            return str(editor.query_one("#form-problem", Static).render())

        await wait_until(pilot, lambda: problem() != "", timeout=5)
        assert problem() == f"{kb_copy}: knowledge base not found"
        assert editor.query_one("#form-text", TextArea).text == "Kept 30 days."  # Kept to retry.
    assert not kb_copy.exists()
    assert not (moved / "lost-item.json").exists()
