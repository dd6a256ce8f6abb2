"""The editor and someone else's change to the open passage: opening it by search as it is
typed, reading the form, and another process saving the passage."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input, Static, TextArea

from chatbot.knowledge_base.store import PassageStore
from chatbot.tui.screens.editor import EditorScreen
from tests.tui.helpers import type_text


async def open_editor(pilot: Pilot[None]) -> EditorScreen:
    await pilot.press("f2")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, EditorScreen)
    return screen


async def open_passage(pilot: Pilot[None], query: str) -> None:
    """Search the list and open the first match, as an editor would."""
    search = pilot.app.screen.query_one("#passage-search", Input)
    search.focus()
    search.clear()
    await type_text(pilot, query)
    await pilot.press("enter")
    await pilot.pause()


def text(editor: EditorScreen) -> str:
    return editor.query_one("#form-text", TextArea).text


def problem(editor: EditorScreen) -> str:
    return str(editor.query_one("#form-problem", Static).render())


def save_elsewhere(kb: Path, passage_id: str, new_text: str) -> None:
    """Another process (another editor, `helpdesk kb edit`) saves the passage."""
    other = PassageStore(kb)
    seen = other.get(passage_id)
    other.save(seen.passage.model_copy(update={"text": new_text}), based_on=seen.revision)
