"""A session whose app starts blurred (a browser tab opened in the background) gets its footer
keys once it is focused, by a key press too: Textual draws them on the focus event alone, and a
key press focuses the app without one, so the editor's footer stayed empty for good."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from chatbot.config import Settings
from chatbot.tui.screens.editor import EditorScreen
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.helpers import screen_text, wait_until


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


def bottom_line(app: object) -> str:
    return screen_text(app).splitlines()[-1]  # type: ignore[arg-type]


async def test_a_key_press_on_a_blurred_app_brings_the_footer_keys(make_app: MakeApp) -> None:
    app = make_app("editor")
    async with app.run_test(size=(110, 32)) as pilot:
        # As textual-serve's page says before its tab is looked at: before the editor is shown
        # (it is built once the settings are loaded).
        app.post_message(events.AppBlur())
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
        await pilot.pause()
        assert "Save" not in bottom_line(app)  # Textual draws no keys while blurred.
        await pilot.press("a")  # Typed into the search box: no binding changes.
        assert app.app_focus
        await wait_until(
            pilot, lambda: "^s Save" in bottom_line(app) and "Quit" in bottom_line(app)
        )
