"""Hostile text and broken files against the running app: nothing from outside writes an escape
sequence to the terminal, nothing on disk stops the app, and a failed save loses no typing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from textual import events
from textual.widgets import Input, TextArea

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.engine.engine import Engine
from chatbot.knowledge_base.store import PassageStore, passage_file_text
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.editor import Confirm, EditorScreen
from chatbot.tui.widgets.passage_form import PassageForm
from tests.readonly import read_only
from tests.tui.conftest import Q1, SIZE, MakeApp, editor_settings
from tests.tui.helpers import (
    RecordingDriver,
    ask,
    engine_ready,
    flat,
    screen_text,
    terminal_output,
    type_text,
    wait_until,
)

# Each would do something to a real terminal: retitle it, fill the clipboard, clear the screen,
# make a hidden link.
TITLE = "\x1b]0;PWNED\x07"
CLIPBOARD = "\x1b]52;c;SGVsbG8=\x07"
CLEAR = "\x1b[2J\x1b[H"
LINK = "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07"
HOSTILE = f"refund {TITLE} now {CLIPBOARD} please {CLEAR} see {LINK}"
RAW = ["\x1b]0;PWNED", "\x1b]52;", "\x1b[2J", "\x1b]8;"]
CHARGED_TEXT = "Charged twice for one ride? The first charge is a temporary hold of 1 euro"
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


async def settle(app: HelpDeskApp) -> None:
    await app.workers.wait_for_complete()


def toasts(app: HelpDeskApp) -> list[str]:
    return [n.message for n in app._notifications]


def kb_index(app: HelpDeskApp) -> PassageStore:
    assert app.kb_index is not None
    assert isinstance(app.kb_index.passages, PassageStore)  # These tests break files on disk.
    return app.kb_index.passages


async def test_no_escape_from_outside_reaches_the_terminal(
    make_app: MakeApp, kb_copy: Path, other: DeskService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The toasts checked at the end are still up, however slowly the test runs.
    monkeypatch.setattr(HelpDeskApp, "NOTIFICATION_TIMEOUT", 120)
    app = make_app("agent")
    app.driver_class = RecordingDriver
    async with app.run_test(size=SIZE, headless=False) as pilot:
        # A customer pasted escapes into the chat; an agent answered with more. It is a content gap.
        conversation = other.ask(None, HOSTILE).conversation
        # The app's bot escalates it (nothing recorded answers it).
        await wait_until(pilot, lambda: other.conversation(conversation.id).pending == 0)
        other.claim(conversation.id, agent="ana")
        other.reply(conversation.id, agent="ana", text=f"Refunds {CLEAR} take 5 days {TITLE}")
        # A hand-made file whose name and keys carry escapes, and a history entry with one.
        (kb_copy / f"x{TITLE}.json").write_text(
            json.dumps({"id": "x", "text": "x", CLIPBOARD: 1}), encoding="utf-8"
        )
        history = kb_copy / ".history" / "helmet"
        history.mkdir(parents=True)
        old = json.loads(passage_file_text(PassageStore(kb_copy).get("helmet").passage))
        (history / "000001.json").write_text(json.dumps({
            "version": 1, "reason": f"edit{CLEAR}", "archived_at": "2026-01-05T09:00:00+00:00",
            "content": json.dumps(old | {"text": f"Helmets {LINK}"}),
        }), encoding="utf-8")  # fmt: skip
        assert app.kb_index is not None
        app.kb_index.poll()  # The app notices the new file and says why it cannot load it.
        await settle(app)

        await pilot.press("f2")
        await settle(app)
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        await pilot.press("ctrl+f")
        await type_text(pilot, "helmet")
        await pilot.press("enter")
        await pilot.pause()
        editor.query_one("#form-title", Input).focus()
        app.post_message(events.Paste(LINK + TITLE))  # Pasted into the Title field.
        await pilot.pause()
        editor.query_one("#form-text", TextArea).focus()
        app.post_message(events.Paste(f" {CLIPBOARD}\n{CLEAR}"))
        await pilot.pause()

        await pilot.press("ctrl+g")
        await pilot.pause()
        await pilot.click("#gap-write")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)  # The pasted edits are unsaved: discard them.
        await pilot.press("tab", "enter")
        await pilot.pause()
        form = editor.query_one(PassageForm)
        title = form.query_one("#form-title", Input).value
        text = form.query_one("#form-text", TextArea).text
        assert "\x1b" not in title + text and "PWNED" not in title and "Refunds" in text
        assert title == "refund now please see click" and "[2J" not in text

        await pilot.press("ctrl+t")
        editor.query_one("#try-question", Input).focus()
        app.post_message(events.Paste(HOSTILE))
        await pilot.pause()
        await pilot.press("enter")
        await settle(app)
        await pilot.pause()

        shown = terminal_output(app)
        assert "PWNED" in shown and "SGVsbG8" in shown  # The hostile text was on screen...
        for raw in RAW:
            assert raw not in shown, f"{raw!r} reached the terminal"  # ...never as escapes.
        assert any("\\x1b]0;PWNED\\x07" in toast for toast in toasts(app))


async def test_a_broken_file_renamed_in_while_the_app_runs_changes_nothing(
    make_app: MakeApp, kb_copy: Path, tmp_path: Path
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await engine_ready(app)  # Built after the first screen.
        engine = app.services.engine
        broken = [("deep.json", DEEP, "deep.json: JSON nested too deeply"),
                  ("huge.json", '{"id": ' + "9" * 50_000 + "}",
                   "huge.json: a number in the JSON is too long")]  # fmt: skip
        for name, content, message in broken:
            staged = tmp_path / name
            staged.write_text(content, encoding="utf-8")
            os.rename(staged, kb_copy / name)  # As a person (or a sync tool) would drop it in.
            assert app.kb_index is not None
            app.kb_index.poll()
            await settle(app)
            await pilot.pause()
            # Skipped, and named: the passages answering are the same ones.
            assert app.is_running
            assert [p.id for p in app.services.engine.passages] == [p.id for p in engine.passages]
            assert any(message in toast for toast in toasts(app))
            os.rename(kb_copy / name, staged)

        # And the customer still gets answers from the last good knowledge base.
        await ask(pilot, Q1)
        assert CHARGED_TEXT in flat(screen_text(app))


async def test_an_unexpected_error_while_reloading_keeps_the_app_and_its_index(
    make_app: MakeApp, kb_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(self: Engine, passages: object) -> Engine:
        raise RuntimeError("a bug in the index")

    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await engine_ready(app)  # Built after the first screen.
        engine = app.services.engine
        monkeypatch.setattr(Engine, "with_passages", explode)
        (kb_copy / "new-one.json").write_text(
            passage_file_text(PassageStore(kb_copy).get("helmet").passage).replace(
                '"helmet"', '"new-one"'
            ),
            encoding="utf-8",
        )
        assert app.kb_index is not None
        app.kb_index.poll()
        await settle(app)
        await pilot.pause()
        assert app.is_running and app.services.engine is engine
        assert any("unexpected RuntimeError: a bug in the index" in m for m in toasts(app))


async def test_a_fifo_in_the_folder_is_named_and_the_rest_reloads(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await engine_ready(app)  # Built after the first screen; the FIFO comes while it runs.
        os.mkfifo(kb_copy / "zz.json")
        (kb_copy / "new-one.json").write_text(
            passage_file_text(PassageStore(kb_copy).get("helmet").passage).replace(
                '"helmet"', '"new-one"'
            ),
            encoding="utf-8",
        )
        assert app.kb_index is not None
        app.kb_index.poll()
        await settle(app)
        await pilot.pause()
        assert "new-one" in {p.id for p in app.services.engine.passages}
        assert any("zz.json: skipped: is a FIFO" in m for m in toasts(app))


async def test_save_on_a_read_only_knowledge_base_keeps_the_form(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await settle(app)
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        await pilot.press("ctrl+n")
        await type_text(pilot, "lost-items")
        text = editor.query_one("#form-text", TextArea)
        text.focus()
        app.post_message(events.Paste("Lost items are kept for 30 days at the depot."))
        await pilot.pause()
        with read_only(kb_copy):
            await pilot.press("ctrl+s")
            await pilot.pause()
        assert app.is_running and app.screen is editor
        assert "cannot write" in editor.query_one(PassageForm).problem
        shown = flat(screen_text(app, editor.query_one("#form-problem")))
        assert "cannot write" in shown  # Inline, under the form.
        assert editor.query_one("#form-id", Input).value == "lost-items"
        assert text.text == "Lost items are kept for 30 days at the depot."
        assert not (kb_copy / "lost-items.json").exists()
        await pilot.press("ctrl+s")  # Writable again: the same form saves.
        await settle(app)
        assert PassageStore(kb_copy).get("lost-items").passage.text.startswith("Lost items")


async def test_ctrl_q_with_unsaved_changes_asks_first(make_app: MakeApp, kb_copy: Path) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await settle(app)
        # The form is filled after the list is read; Enter on the list opens it to write in.
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        await wait_until(pilot, lambda: editor.form.passage_id == "card-charged-twice")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.focused, TextArea))
        await type_text(pilot, " and more")
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, Confirm)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, EditorScreen)
        assert app.screen.form.dirty  # Still there to be saved.
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("tab", "enter")
        await pilot.pause()
        assert not app.is_running
    assert "and more" not in (kb_copy / "card-charged-twice.json").read_text(encoding="utf-8")


async def test_ctrl_q_without_unsaved_changes_quits_at_once(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await settle(app)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running
