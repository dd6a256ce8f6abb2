"""Escape in an editor-only session (the browser's editor account, `helpdesk editor`): the
editor is all there is, so its top level offers no Back. `esc Back` closed it, leaving a screen
that only said it was closed; one stray Escape or click took an editor there. Dialogs still
cancel with Escape, and where the editor opens over the chat (`helpdesk`), Escape goes back."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import TextArea

from chatbot.config import Settings
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.desk import DeskScreen
from chatbot.tui.screens.editor import Confirm, EditorScreen
from chatbot.tui.screens.stats import StatsScreen
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_helpers import settle
from tests.tui.helpers import footer_line, footer_offers, wait_until

SIZES = [(100, 30), (80, 24)]


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


async def the_editor(app: HelpDeskApp, pilot: Pilot[None]) -> EditorScreen:
    await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
    await settle(pilot)
    editor = app.screen
    assert isinstance(editor, EditorScreen)
    return editor


async def stays(pilot: Pilot[None], editor: EditorScreen) -> None:
    """Escape pressed, and the editor still on screen once the app has handled it."""
    await pilot.press("escape")
    await pilot.pause()
    assert pilot.app.screen is editor


@pytest.mark.parametrize("size", SIZES, ids=["100x30", "80x24"])
async def test_escape_does_not_close_the_editor_of_an_editor_only_session(
    make_app: MakeApp, size: tuple[int, int]
) -> None:
    app = make_app("editor")
    async with app.run_test(size=size) as pilot:
        editor = await the_editor(app, pilot)
        assert "Back" not in await footer_line(pilot)
        assert not footer_offers(app, "close")
        await stays(pilot, editor)  # On the search, where the editor opens.

        # In a passage's text, with changes: nothing asks to throw them away, nothing closes.
        await pilot.press("enter")
        text = editor.query_one("#form-text", TextArea)
        await wait_until(pilot, lambda: app.focused is text)
        await pilot.press("x")
        assert editor.form.dirty
        await stays(pilot, editor)
        assert editor.form.dirty and app.focused is text

        # A dialog's Escape is still its Cancel.
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is editor)
        assert editor.form.dirty

        # As is the analytics' Back, to the editor.
        await pilot.press("f5")
        await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is editor)
        assert "Back" not in await footer_line(pilot)


async def test_escape_still_goes_back_to_the_chat_where_the_editor_opens_over_it(
    make_app: MakeApp,
) -> None:
    app = make_app("all")
    async with app.run_test(size=SIZES[1]) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, DeskScreen))
        await pilot.press("f2")
        await the_editor(app, pilot)
        assert "esc Back" in await footer_line(pilot)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, DeskScreen))
