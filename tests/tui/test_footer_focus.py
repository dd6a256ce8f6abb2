"""A session whose app is blurred (a browser session starts so, and the page's focus may come
before its driver's blur) shows its footer keys: Textual's footer drew none while the app was
blurred, and the editor's stayed empty until a key was pressed (4 of 16 browser loads)."""

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


async def test_a_blurred_app_shows_its_footer_keys_and_gets_them_all_back_on_a_key(
    make_app: MakeApp,
) -> None:
    app = make_app("editor")
    async with app.run_test(size=(110, 32)) as pilot:
        # As textual-serve's driver says at the start, before the editor is shown (it is built
        # once the settings are loaded).
        app.post_message(events.AppBlur())
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
        await wait_until(pilot, lambda: "^q Quit" in bottom_line(app))
        assert not app.app_focus and "^s Save" in bottom_line(app)  # The screen's keys.
        await pilot.press("a")  # Typed into the search box: focused again, by a key.
        assert app.app_focus
        await wait_until(pilot, lambda: "^s Save" in bottom_line(app))
        assert "^q Quit" in bottom_line(app)
