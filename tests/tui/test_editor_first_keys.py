"""A keyboard tester's first keys in the knowledge-base editor (`helpdesk agent`, F2):

- Tab, Enter at opening went to the Title, its whole text selected, and Enter there said "Saved"
  with nothing changed, then put the cursor at the end of the text, where the next Enter wrote a
  line break that Escape asked to discard. Now the editor opens on the search, so Tab then Enter
  opens the highlighted passage (the README's "Tab then Enter opens the first match"), a field
  keeps its text as the focus comes, and Enter on an unchanged passage says there is nothing to
  save and moves nothing.
- At 60 columns the footer left out `esc Back` (and Synonyms) while keeping greyed Save and
  Delete: greyed keys give way first now, and the way back never does.
- A broken passage file was named again at every opening of the editor: once per problem now."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.message import Message
from textual.notifications import Notify
from textual.widgets import Input, OptionList, TextArea

from chatbot.config import Settings
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui.screens.editor import Confirm, EditorScreen
from chatbot.tui.widgets.footer import Footer
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor, settle
from tests.tui.helpers import engine_ready, footer_line, wait_until

TALL = (120, 40)
NARROW = (60, 20)
TITLE = "Charged twice for one ride"


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


def said(notes: list[Message]) -> list[str]:
    return [str(note.notification.message) for note in notes if isinstance(note, Notify)]


async def test_tab_then_enter_on_opening_opens_the_passage_and_escape_leaves(
    make_app: MakeApp, kb_copy: Path
) -> None:
    """The tester's keys, F2 Tab Enter Enter Escape, at 120x40."""
    notes: list[Message] = []
    versions = len(PassageStore(kb_copy).history("card-charged-twice"))
    app = make_app("agent")
    async with app.run_test(size=TALL, message_hook=notes.append) as pilot:
        editor = await open_editor(pilot)
        await wait_until(pilot, lambda: editor.form.passage_id == "card-charged-twice")
        assert app.focused is editor.query_one("#passage-search")
        await pilot.press("tab")  # Into the list, not past it into the form.
        assert app.focused is editor.query_one("#passage-options")
        await pilot.press("enter")  # Opens the highlighted passage, for writing.
        text = editor.query_one("#form-text", TextArea)
        await wait_until(pilot, lambda: app.focused is text)
        assert text.cursor_location == text.document.end
        assert not any(message.startswith("Saved") for message in said(notes))
        # An Enter at the end of the text is no change a save would keep: Escape just leaves.
        await pilot.press("enter")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, EditorScreen))
        assert not isinstance(app.screen, Confirm)
    assert len(PassageStore(kb_copy).history("card-charged-twice")) == versions


async def test_the_title_keeps_its_text_and_enter_on_no_change_saves_nothing(
    make_app: MakeApp, kb_copy: Path
) -> None:
    notes: list[Message] = []
    versions = len(PassageStore(kb_copy).history("card-charged-twice"))
    app = make_app("agent")
    async with app.run_test(size=TALL, message_hook=notes.append) as pilot:
        editor = await open_editor(pilot)
        await wait_until(pilot, lambda: editor.form.passage_id == "card-charged-twice")
        title = editor.query_one("#form-title", Input)
        await pilot.press("tab", "tab")  # The search, the list, then the Title (the id is fixed).
        assert app.focused is title
        assert title.selection.is_empty
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("Nothing to save" in m for m in said(notes)))
        assert "Nothing to save: card-charged-twice is unchanged." in said(notes)
        assert not any(message.startswith("Saved") for message in said(notes))
        assert app.focused is title  # Not sent to the end of the text.
        await pilot.press("Q")
        assert title.value != "Q" and title.value.replace("Q", "", 1) == TITLE
    assert len(PassageStore(kb_copy).history("card-charged-twice")) == versions


async def test_down_on_the_search_goes_through_the_list(make_app: MakeApp) -> None:
    """Opened on the search, the arrows still browse the passages, as on the list."""
    app = make_app("agent")
    async with app.run_test(size=TALL) as pilot:
        editor = await open_editor(pilot)
        options = editor.query_one("#passage-options", OptionList)
        await wait_until(pilot, lambda: options.highlighted == 0)
        await pilot.press("down")
        assert app.focused is options and options.highlighted == 1
        await pilot.press("enter")
        await wait_until(pilot, lambda: editor.form.passage_id == "damage-fee")


async def test_at_60_columns_the_footer_keeps_back_and_greyed_keys_give_way(
    make_app: MakeApp,
) -> None:
    app = make_app("agent")
    async with app.run_test(size=NARROW) as pilot:
        editor = await open_editor(pilot)
        await wait_until(pilot, lambda: editor.form.passage_id == "card-charged-twice")
        line = await footer_line(pilot)
        assert "esc Back" in line and "^q Quit" in line, line
        # A new passage: Save (nothing typed) and Delete (nothing stored) are greyed, and give
        # way before the keys that act.
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: editor.form.is_new)
        line = await footer_line(pilot)
        footer = editor.query_one(Footer)
        assert {"save", "delete"} <= footer._left_out, line
        # (The keys that act stay as far as they fit: F9, the language, leaves no room for ^o.)
        assert "^g Gaps" in line and "esc Back" in line and "^q Quit" in line, line


async def test_a_broken_file_is_named_once_not_at_every_opening(
    make_app: MakeApp, kb_copy: Path
) -> None:
    notes: list[Message] = []
    app = make_app("agent")
    async with app.run_test(size=TALL, message_hook=notes.append) as pilot:
        await engine_ready(app)
        broken = kb_copy / "broken.json"
        broken.write_text("{", encoding="utf-8")

        def listed() -> list[str]:
            return [m for m in said(notes) if m.startswith("Not listed:")]

        await open_editor(pilot)
        await wait_until(pilot, lambda: len(listed()) == 1)
        assert "broken.json: malformed JSON" in listed()[0]
        for _ in range(2):  # Closed and opened again: the same problem is not said again.
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, EditorScreen))
            await open_editor(pilot)
        assert len(listed()) == 1
        # Broken another way: a new problem, said once.
        broken.write_text(json.dumps({"id": "other", "text": "x"}), encoding="utf-8")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, EditorScreen))
        await open_editor(pilot)
        await wait_until(pilot, lambda: len(listed()) == 2)
        assert "broken.json" in listed()[1]
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, EditorScreen))
        await open_editor(pilot)
        await settle(pilot)
        assert len(listed()) == 2
