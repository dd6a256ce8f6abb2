"""Zero-width joiners typed into the app's boxes are kept: Python counts them unprintable, so
Textual's boxes dropped them, and 👨‍👩‍👧 was stored as three faces, a Persian word without the
non-joiner it is written with."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TextArea

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from tests.tui.conftest import SIZE, MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor
from tests.tui.helpers import type_text, wait_until

FAMILY = "👨\u200d👩\u200d👧"
PERSIAN = "می\u200cخواهم"  # "I want", its prefix held apart by a zero-width non-joiner.


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


async def test_a_question_keeps_its_joiners(make_app: MakeApp, other: DeskService) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        question = f"Is there a {FAMILY} pass? {PERSIAN}"
        await type_text(pilot, question)
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(other.conversations()))
        [conversation] = other.conversations()
        assert [m.text for m in other.messages(conversation.id)] == [question]


async def test_a_passage_text_keeps_its_joiners(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+n")
        area = editor.query_one("#form-text", TextArea)
        area.focus()
        await type_text(pilot, f"{PERSIAN} {FAMILY}")
        assert area.text == f"{PERSIAN} {FAMILY}"
