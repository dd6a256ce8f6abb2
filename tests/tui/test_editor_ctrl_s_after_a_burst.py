"""Ctrl+S pressed straight after a burst of typing (the browser, a slow link, `tmux send-keys`)
saves every key typed before it. Ctrl+S is the app's key, run as it arrives, while the keys
typed just before it may still wait for the box: the Synonyms tab saved `bike = bicycle, c`
(then reloaded the box from that save, so `ycle` vanished from the screen), or said "Nothing to
save" with the line still in the box; the passage form the same. And Ctrl+S twice in a burst
saves once, the second saying there is nothing more to save."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.message import Message
from textual.notifications import Notify
from textual.widgets import TabbedContent, TextArea

from chatbot.config import Settings
from chatbot.knowledge_base.store import PassageStore
from chatbot.knowledge_base.synonyms import load_synonyms
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor, open_passage, type_into
from tests.tui.helpers import burst, type_text, wait_until

SIZE = (80, 24)


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


async def test_synonyms_typed_in_a_burst_then_ctrl_s_are_saved_whole(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("editor")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: editor.query_one(TabbedContent).active == "synonyms")
        box = editor.query_one("#synonyms-text", TextArea)
        await wait_until(pilot, lambda: app.focused is box)
        await burst(pilot, *"bike = bicycle, cycle", "ctrl+s")
        await wait_until(pilot, lambda: load_synonyms(kb_copy) != ())
        assert load_synonyms(kb_copy) == (("bike", "bicycle", "cycle"),)
        await wait_until(pilot, lambda: not editor.synonyms.dirty)
        assert box.text == "bike = bicycle, cycle\n"  # Shown as saved: nothing typed vanished.


async def test_a_passage_typed_in_a_burst_then_ctrl_s_is_saved_whole(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("editor")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        await wait_until(pilot, lambda: editor.form.passage_id == "helmet")
        before = PassageStore(kb_copy).get("helmet").passage.text
        box = editor.form.text_area
        box.focus()
        await wait_until(pilot, lambda: app.focused is box)
        await burst(pilot, *" Ask at the desk for a bigger one.", "ctrl+s")
        store = PassageStore(kb_copy)
        await wait_until(pilot, lambda: store.get("helmet").passage.text != before)
        assert store.get("helmet").passage.text == before + " Ask at the desk for a bigger one."
        await wait_until(pilot, lambda: not editor.form.dirty)
        assert box.text == before + " Ask at the desk for a bigger one."


@pytest.mark.parametrize("new", [False, True], ids=["stored", "new"])
async def test_ctrl_s_twice_in_a_burst_saves_once_and_refuses_nothing(
    make_app: MakeApp, kb_copy: Path, new: bool
) -> None:
    """The second Ctrl+S was asked of the form as it was before the first saved it: it was
    refused as "changed by someone else" (a new passage: as already existing)."""
    notes: list[Message] = []
    app = make_app("editor")
    async with app.run_test(size=SIZE, message_hook=notes.append) as pilot:
        editor = await open_editor(pilot)
        if new:
            await pilot.press("ctrl+n")
            await type_into(pilot, "#form-id", "lockers")
            await type_into(pilot, "#form-title", "Lockers")
            editor.form.text_area.focus()
            await type_text(pilot, "Lockers are at every station.")
        else:
            await open_passage(pilot, "helmet")
            await wait_until(pilot, lambda: editor.form.passage_id == "helmet")
            editor.form.text_area.focus()
            await type_text(pilot, " Ask.")
        passage_id = editor.form.passage_id
        await burst(pilot, "ctrl+s", "ctrl+s")
        await wait_until(pilot, lambda: f"Saved {passage_id}." in said(notes))
        await wait_until(
            pilot, lambda: f"Nothing to save: {passage_id} is unchanged." in said(notes)
        )
        await app.workers.wait_for_complete()
        assert said(notes).count(f"Saved {passage_id}.") == 1
        assert [n for n in said(notes) if "someone else" in n or "exists" in n] == []
        assert editor.form.problem == "" and not editor.form.dirty
    assert len(PassageStore(kb_copy).history(passage_id)) == (0 if new else 1)


async def test_ctrl_s_twice_in_a_burst_saves_the_synonyms_once(
    make_app: MakeApp, kb_copy: Path
) -> None:
    notes: list[Message] = []
    app = make_app("editor")
    async with app.run_test(size=SIZE, message_hook=notes.append) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+o")
        box = editor.query_one("#synonyms-text", TextArea)
        await wait_until(pilot, lambda: app.focused is box)
        await type_text(pilot, "bike = bicycle")
        await burst(pilot, "ctrl+s", "ctrl+s")
        nothing = "Nothing to save: the synonyms are as saved."
        await wait_until(pilot, lambda: nothing in said(notes))
        await app.workers.wait_for_complete()
        assert said(notes).count("Saved 1 synonym group.") == 1
        assert [n for n in said(notes) if "someone else" in n] == []
    assert load_synonyms(kb_copy) == (("bike", "bicycle"),)


def said(notes: list[Message]) -> list[str]:
    return [str(note.notification.message) for note in notes if isinstance(note, Notify)]
