"""Ctrl+Home and Ctrl+End in the passage's text box go to the start and the end of the text
(Shift with them selects up to there): Ctrl+End did nothing, and the words typed after it went
in mid-sentence."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.config import Settings
from chatbot.i18n import translations
from chatbot.tui.widgets.plain_text_area import PlainTextArea
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_helpers import writing_card_charged
from tests.tui.helpers import type_text, wait_until


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


async def test_ctrl_end_and_ctrl_home_go_to_the_ends_of_the_text(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        _editor, text = await writing_card_charged(pilot)  # The cursor at the end.
        before = text.text
        assert "\n" in before or len(before) > 40  # The end is not on the first line's row.
        text.move_cursor((0, 4))
        await pilot.press("ctrl+end")
        await type_text(pilot, " Thanks")
        await wait_until(pilot, lambda: text.text == before + " Thanks")

        await pilot.press("ctrl+home")
        await type_text(pilot, "Hi.")
        await wait_until(pilot, lambda: text.text == "Hi." + before + " Thanks")

        await pilot.press("ctrl+shift+end")  # From just after "Hi." to the end.
        await wait_until(pilot, lambda: text.selected_text == before + " Thanks")
        await pilot.press("ctrl+end", "ctrl+shift+home")
        await wait_until(pilot, lambda: text.selected_text == text.text)


def test_the_keys_are_described_in_the_editor_s_language() -> None:
    """As the keys panel (F1) lists them."""
    box = PlainTextArea(locale="zh")
    described = {
        binding.action: binding.description
        for bindings in box._bindings.key_to_bindings.values()
        for binding in bindings
    }
    chinese = translations("zh")
    assert described["cursor_text_end"] == chinese.gettext("End of the text") != "End of the text"
    assert described["cursor_text_start"] == chinese.gettext("Start of the text")
