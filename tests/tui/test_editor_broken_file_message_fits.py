"""A passage file broken by hand while the editor holds changes to it, then Ctrl+S, at 80x24: the
message ("passage 'helmet' was changed since you opened it, and its file is unreadable now: PATH:
malformed JSON …: Ctrl+R … Ctrl+S …") took six rows under the text, a toast said the same words
again, and the text box was left one row. Now the message keeps to two rows (the file by its
name, the parser's words cut to fit, at 60x20 too once the window is resized), is said once,
and the text box keeps its lines; the next Ctrl+S still asks, then replaces the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.message import Message
from textual.notifications import Notify
from textual.widget import Widget
from textual.widgets import TextArea

from chatbot.config import Settings
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.editor import Confirm, EditorScreen
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_follows_helpers import problem
from tests.tui.editor_helpers import open_editor, open_passage
from tests.tui.helpers import flat, screen_text, type_text, wait_until


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


def on_screen(app: HelpDeskApp, widget: Widget) -> bool:
    region = widget.region
    return bool(region.height and region.width) and app.screen.region.contains_region(region)


def fits(app: HelpDeskApp, editor: EditorScreen) -> None:
    """The message in two rows at most, the buttons below it, and the text box, whole, with
    at least two lines of text."""
    line = editor.query_one("#form-problem")
    assert on_screen(app, line) and line.region.height <= 2
    said = flat(screen_text(app, line))
    assert said.startswith("helmet.json is unreadable now (")
    assert said.endswith("): Ctrl+S saves yours over it.")
    buttons = editor.query_one("#form-buttons")
    assert on_screen(app, buttons) and buttons.region.y >= line.region.bottom
    box = editor.query_one("#form-text", TextArea)
    assert on_screen(app, box) and box.content_region.height >= 2
    assert box.region.bottom <= line.region.y  # Not covered by the message.


async def test_a_broken_file_is_said_in_two_rows_once_and_the_text_box_keeps_its_lines(
    make_app: MakeApp, kb_copy: Path
) -> None:
    notes: list[Message] = []
    app = make_app("editor")
    async with app.run_test(size=(80, 24), message_hook=notes.append) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        editor.form.text_area.focus()
        await type_text(pilot, " Mine.")
        mine = editor.form.text_area.text
        path = kb_copy / "helmet.json"
        path.write_text('{"id": "helmet",', encoding="utf-8")  # Broken from outside.
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "unreadable" in problem(editor))
        await pilot.pause()
        fits(app, editor)
        # Why, as far as it fits (the path left out: the file is named by its name).
        assert "(malformed JSON at line 1 column 17" in flat(problem(editor))
        assert str(path) not in problem(editor)
        # Said in the form only: no toast of the same words. (The app's own notice of a broken
        # file, "… (its last good version is still used)", comes as it notices, save or not.)
        toasts = [str(n.notification.message) for n in notes if isinstance(n, Notify)]
        assert not [toast for toast in toasts if "unreadable now" in toast], toasts

        await pilot.resize_terminal(60, 20)
        await wait_until(pilot, lambda: editor.query_one("#form-problem").region.width < 40)
        await pilot.pause()
        fits(app, editor)

        await pilot.press("ctrl+s")  # Asks, then replaces the broken file.
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: not editor.form.dirty)
        assert PassageStore(kb_copy).get("helmet").passage.text == mine
        assert problem(editor) == ""
