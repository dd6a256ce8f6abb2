"""A knowledge-base editor's unsaved passage form was lost when their app ended without the quit
question (`serve` restarting, the page closed): the editor now keeps it, private to the user,
per editor, knowledge base and passage, and puts it back, marked unsaved, when that editor opens
the passage (or a new one) again. Only their Save writes it; a passage someone else changed
since is said, and Save is refused rather than writing over their version."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import httpx
import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static, TextArea

from chatbot import drafts
from chatbot.config import Settings
from chatbot.drafts import (
    KEEP_S,
    UnsavedPassage,
    drafts_for,
    save_unsaved_passage,
    take_unsaved_passage,
)
from chatbot.knowledge_base import Passage
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.screens.editor import Confirm, EditorScreen
from tests.tui.conftest import SIZE, FrozenClock, MakeApp, editor_settings
from tests.tui.helpers import type_text, wait_until

TITLE = "Helmets [bold]always[/bold]"
"""Typed, not saved: with markup that must stay as typed."""
TEXT = "Wear one on every ride.\nAsk at any station: 50% off [red]today[/red]."


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


@pytest.fixture
def kept(tmp_path: Path, kb_copy: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The editor keeps unsaved forms, as a browser session's or a terminal's does: in the
    user's state directory (the test's own), in the folder of this knowledge base."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    folder = drafts_for(str(kb_copy))
    monkeypatch.setattr(drafts, "editor_drafts", folder)
    return folder


async def editor_open(pilot: Pilot[None]) -> EditorScreen:
    """The editor, its list read and a passage shown."""
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
    await app.workers.wait_for_complete()
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, EditorScreen)
    return screen


def fields(editor: EditorScreen) -> tuple[str, str, str, str]:
    form = editor.form
    return (
        form.query_one("#form-id", Input).value,
        form.query_one("#form-title", Input).value,
        form.query_one("#form-tags", Input).value,
        form.query_one("#form-text", TextArea).text,
    )


def problem(editor: EditorScreen) -> str:
    return str(editor.query_one("#form-problem", Static).render())


def toasts(app: HelpDeskApp) -> list[str]:
    return [n.message for n in app._notifications]


async def type_into(pilot: Pilot[None], selector: str, text: str) -> None:
    widget = pilot.app.screen.query_one(selector)
    assert isinstance(widget, Input | TextArea)
    widget.focus()
    widget.clear()
    if isinstance(widget, TextArea):
        widget.insert(text)  # As a paste would: line breaks and all.
    else:
        await type_text(pilot, text)
    await pilot.pause()


async def session_ends(app: HelpDeskApp, pilot: Pilot[None]) -> None:
    """The app ends without the quit question, as a browser session's does when `serve` stops
    or the page closes (the web driver's quit)."""
    app.exit()
    await pilot.pause()


async def test_unsaved_edits_are_back_for_their_editor_after_the_session_ends(
    make_app: MakeApp,
    kb_copy: Path,
    kept: Path,
    settings: Settings,
    http: httpx.AsyncClient,
    clock: FrozenClock,
) -> None:
    store = PassageStore(kb_copy)
    before = (kb_copy / "helmet.json").read_bytes()
    app = make_app("editor")
    async with app.run_test(size=SIZE) as pilot:
        editor = await editor_open(pilot)
        editor.open_passage("helmet")
        await type_into(pilot, "#form-title", TITLE)
        await type_into(pilot, "#form-tags", "safety, gear")
        await type_into(pilot, "#form-text", TEXT)
        assert editor.form.dirty
        await session_ends(app, pilot)

    # Kept aside on this host, private to the user; the knowledge base is as it was.
    [file] = kept.glob("*.json")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o700
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert (kb_copy / "helmet.json").read_bytes() == before

    # Another editor gets none of it, nor takes it: the first passage is shown, as stored.
    ben = create_app(
        settings, mode="editor", http=http, clock=clock, agent="ben", timings=False
    )  # fmt: skip
    async with ben.run_test(size=SIZE) as pilot:
        editor = await editor_open(pilot)
        assert editor.form.passage_id == "card-charged-twice"
        editor.open_passage("helmet")
        await pilot.pause()
        assert not editor.form.dirty
        assert fields(editor)[1] == store.get("helmet").passage.title
    assert file.exists()

    # Ana again: the passage she left is shown first, as she left it, unsaved and said to be.
    app = make_app("editor")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        editor = await editor_open(pilot)
        assert fields(editor) == ("helmet", TITLE, "safety, gear", TEXT)
        assert editor.form.dirty and editor.form.revision == store.get("helmet").revision
        assert any("from your last session were put back" in t for t in toasts(app))
        assert not file.exists()  # Taken once.
        assert (kb_copy / "helmet.json").read_bytes() == before  # Nothing saved without Save.
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not editor.form.dirty)
        saved = store.get("helmet").passage
        assert (saved.title, saved.tags, saved.text) == (TITLE, ("safety", "gear"), TEXT)
        await session_ends(app, pilot)
    assert list(kept.glob("*.json")) == []  # Saved: nothing left to keep.


async def test_a_passage_changed_since_is_said_and_not_overwritten(
    make_app: MakeApp, kb_copy: Path, kept: Path
) -> None:
    store = PassageStore(kb_copy)
    app = make_app("editor")
    async with app.run_test(size=SIZE) as pilot:
        editor = await editor_open(pilot)
        editor.open_passage("helmet")
        await type_into(pilot, "#form-text", TEXT)
        await session_ends(app, pilot)

    # Another editor saves the passage meanwhile.
    theirs = store.get("helmet")
    changed = Passage(id="helmet", title=theirs.passage.title, text="Their new text.")
    store.save(changed, based_on=theirs.revision)

    app = make_app("editor")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        editor = await editor_open(pilot)
        assert fields(editor)[3] == TEXT  # Hers, put back...
        assert "someone else changed it since" in problem(editor)  # ...said to be in conflict.
        assert editor.form.changed_elsewhere and editor.check_action("reload", ()) is True
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert store.get("helmet").passage.text == "Their new text."  # Not written over.
        assert fields(editor)[3] == TEXT  # Her typing stays.


async def test_a_passage_deleted_since_is_said_and_not_brought_back(
    make_app: MakeApp, kb_copy: Path, kept: Path
) -> None:
    store = PassageStore(kb_copy)
    form = UnsavedPassage("helmet", "Helmets", "", TEXT, revision=store.get("helmet").revision)
    save_unsaved_passage(kept, editor="ana", form=form)
    store.delete("helmet")  # By another editor, after that session ended.

    app = make_app("editor")
    async with app.run_test(size=SIZE) as pilot:
        editor = await editor_open(pilot)
        assert fields(editor)[3] == TEXT and not editor.form.deleted
        assert "someone else deleted it since" in problem(editor)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not store.exists("helmet")  # Refused: only a restore brings it back.
        assert fields(editor)[3] == TEXT


async def test_a_new_passage_is_kept_and_back_with_its_line_breaks(
    make_app: MakeApp, kb_copy: Path, kept: Path
) -> None:
    app = make_app("editor")
    async with app.run_test(size=SIZE) as pilot:
        editor = await editor_open(pilot)
        await pilot.press("ctrl+n")
        await type_into(pilot, "#form-id", "lost")
        await type_into(pilot, "#form-text", TEXT)
        await session_ends(app, pilot)
    assert not (kb_copy / "lost.json").exists()

    app = make_app("editor")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        editor = await editor_open(pilot)
        assert editor.form.is_new and fields(editor) == ("lost", "", "", TEXT)
        assert editor.form.dirty
        assert any("unsaved new passage" in t for t in toasts(app))
        # Leaving it asks, as for any unsaved work (New: an editor-only session has no Back).
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("escape")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: (kb_copy / "lost.json").exists())
        assert json.loads((kb_copy / "lost.json").read_text())["text"] == TEXT


async def test_changes_thrown_away_are_not_kept(make_app: MakeApp, kept: Path) -> None:
    # Discarded at the quit question.
    app = make_app("editor")
    async with app.run_test(size=SIZE) as pilot:
        editor = await editor_open(pilot)
        editor.open_passage("helmet")
        await type_into(pilot, "#form-text", TEXT)
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: not app.is_running)
    assert list(kept.glob("*.json")) == []

    # Discarded as the editor closed (Escape), then the app ended.
    app = make_app("all")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        editor = await editor_open(pilot)
        editor.open_passage("helmet")
        await type_into(pilot, "#form-text", TEXT)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, EditorScreen | Confirm))
        await session_ends(app, pilot)
    assert list(kept.glob("*.json")) == []


def test_a_kept_form_is_read_as_its_boxes_hold_text(kept: Path) -> None:
    """Written by hand (or by an older version): control characters and escape sequences are
    dropped, the text's line breaks and tabs kept, the one-line fields one line."""
    form = UnsavedPassage("helmet", "Hel\x1b[2Jmets", "a,\nb", "x\x1b]0;PWNED\x07\n\ty", "r1")
    save_unsaved_passage(kept, editor="ana", form=form)
    assert take_unsaved_passage(kept, editor="ben", passage_id="helmet") is None
    back = take_unsaved_passage(kept, editor="ana", passage_id="helmet")
    assert back == UnsavedPassage("helmet", "Helmets", "a, b", "x\n\ty", "r1")
    assert take_unsaved_passage(kept, editor="ana", passage_id="helmet") is None  # Once.

    # A new passage with nothing in it is nothing to keep; one a week old goes.
    save_unsaved_passage(kept, editor="ana", form=UnsavedPassage("", " ", "", "\n", None))
    assert list(kept.glob("*.json")) == []
    save_unsaved_passage(kept, editor="ana", form=UnsavedPassage("a", "", "", "", None))
    [old] = kept.glob("*.json")
    week_ago = time.time() - KEEP_S - 60
    os.utime(old, (week_ago, week_ago))
    save_unsaved_passage(kept, editor="ana", form=form)
    assert not old.exists() and len(list(kept.glob("*.json"))) == 1
