"""A session whose app is blurred (a browser session starts so, and the page's focus may come
before its driver's blur) shows its footer keys: Textual's footer drew none while the app was
blurred, and the editor's stayed empty until a key was pressed (4 of 16 browser loads)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from chatbot.config import Settings
from chatbot.tui import HelpDeskApp
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


@pytest.mark.parametrize("web", [True, False])
async def test_the_pages_focus_outlives_the_web_drivers_first_blur(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch, web: bool
) -> None:
    """The page focuses its terminal once the app draws; the web driver's own blur, queued as
    it starts, could arrive after that focus and leave the app drawn inactive, its paste lost
    (3 of 4 reloads). In a terminal no driver blurs at the start: every blur is real."""
    monkeypatch.setattr(HelpDeskApp, "is_web", property(lambda _app: web))
    app = make_app("chat")
    async with app.run_test(size=(110, 32)) as pilot:
        app.post_message(events.AppFocus())  # The page's.
        app.post_message(events.AppBlur())  # The driver's first, behind it (in a browser).
        await pilot.pause()
        assert app.app_focus is web
        app.post_message(events.AppFocus())
        app.post_message(events.AppBlur())  # The customer went to another window.
        await wait_until(pilot, lambda: not app.app_focus)
