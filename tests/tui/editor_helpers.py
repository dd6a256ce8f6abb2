"""Driving the knowledge-base editor with Pilot: opening it and a passage, typing into its
fields, Try it, and letting the index rebuild settle."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, Static, TabbedContent, TextArea

from chatbot.config import Settings
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.editor import EditorScreen
from chatbot.tui.widgets.synonyms_panel import SynonymsPanel
from tests.tui.conftest import editor_settings
from tests.tui.helpers import offered, type_text, wait_until


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


async def open_editor(pilot: Pilot[None]) -> EditorScreen:
    await pilot.press("f2")
    await settle(pilot)  # The passage list is read in a thread.
    screen = pilot.app.screen
    assert isinstance(screen, EditorScreen)
    return screen


async def synonyms_from_palette(pilot: Pilot[None]) -> SynonymsPanel:
    """The editor's Synonyms tab, opened by its command in the palette (Ctrl+P)."""
    app = pilot.app
    assert isinstance(app, HelpDeskApp)
    await pilot.press("ctrl+p", *"synonyms")
    await wait_until(pilot, lambda: offered(app, "Knowledge base: synonyms"))
    await pilot.press("enter")
    editor = app.screen_stack[-1]
    # The tab's content is built when it is first shown, before the tab shows.
    await wait_until(pilot, lambda: editor.query_one(TabbedContent).active == "synonyms")
    return editor.query_one(SynonymsPanel)


async def try_question(pilot: Pilot[None], question: str) -> None:
    """Ask `question` on the editor's Try it tab, and let the engine answer."""
    await pilot.press("ctrl+t")
    await type_into(pilot, "#try-question", question)
    await pilot.press("enter")
    await settle(pilot)


async def open_passage(pilot: Pilot[None], passage_id: str) -> None:
    """Search the list for `passage_id` and open the first match, as an editor would."""
    await type_into(pilot, "#passage-search", passage_id)
    await pilot.press("enter")
    await pilot.pause()


async def type_into(pilot: Pilot[None], selector: str, text: str) -> None:
    """Focus a field, clear it, and enter `text`: typed key by key when short, pasted (as a
    terminal delivers a paste) when long, which keeps the tests fast."""
    widget = pilot.app.screen.query_one(selector)
    widget.focus()
    if isinstance(widget, Input | TextArea):
        widget.clear()
    if len(text) <= 12:
        await type_text(pilot, text)
    else:
        pilot.app.post_message(events.Paste(text))
    await pilot.pause()


async def settle(pilot: Pilot[None]) -> None:
    """Let the index rebuild thread finish and its engine swap land."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def problem(screen: EditorScreen) -> str:
    return str(screen.query_one("#form-problem", Static).render())


async def writing_card_charged(pilot: Pilot[None]) -> tuple[EditorScreen, TextArea]:
    """F2, Ctrl+F, `card-charged`, Tab, Enter: the passage open for writing, its text focused."""
    editor = await open_editor(pilot)
    await pilot.press("ctrl+f")
    await type_text(pilot, "card-charged")
    await pilot.press("tab", "enter")
    text = editor.query_one("#form-text", TextArea)
    await wait_until(pilot, lambda: pilot.app.focused is text)
    return editor, text


async def on_form_button(pilot: Pilot[None], button: str) -> tuple[EditorScreen, TextArea]:
    """The editor with a passage open, Tab taken from its text to `button`."""
    app = pilot.app
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
    return editor, text
