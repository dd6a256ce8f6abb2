"""The editor on a knowledge base in PostgreSQL: the same screens and refusals as on files, and
another process's change reaches the running app by notification."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import Input, TextArea

from chatbot.config import Settings, load_settings
from chatbot.knowledge_base.postgres import PostgresPassageStore
from chatbot.tui import kb_index
from chatbot.tui.screens.editor import Confirm
from tests.conftest import ROOT, SHIPPED_CACHE
from tests.kb.backends import pg_url
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.editor_helpers import open_editor, open_passage, problem, settle, type_into
from tests.tui.helpers import flat, screen_text, wait_until
from tests.tui.postgres_helpers import _listening, kb_url

__all__ = ["kb_url", "pg_url"]


@pytest.fixture
def settings(db_path: Path, kb_url: str) -> Settings:
    return load_settings(
        store={"db": db_path},
        knowledge_base={"path": kb_url},
        valen={"cache": SHIPPED_CACHE, "replay": "on"},
    )


async def test_open_edit_and_save_a_passage(make_app: MakeApp, kb_url: str) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        assert editor.query_one("#form-id", Input).value == "helmet"
        await type_into(pilot, "#form-text", "Helmets are free at every station.")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert problem(editor) == ""
    with PostgresPassageStore.open(kb_url) as store:
        assert store.get("helmet").passage.text == "Helmets are free at every station."
        [version] = store.history("helmet")
        assert version.reason == "edit"


async def test_a_concurrent_change_is_refused_not_overwritten(
    make_app: MakeApp, kb_url: str
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        with PostgresPassageStore.open(kb_url) as other:  # Another editor, elsewhere.
            seen = other.get("helmet")
            other.save(seen.passage.model_copy(update={"text": "Theirs."}), based_on=seen.revision)
        await type_into(pilot, "#form-text", "Mine.")
        await pilot.press("ctrl+s")
        await pilot.pause()
        if isinstance(app.screen, Confirm):  # The app noticed first: it asks to save over it.
            await pilot.press("escape")
            await pilot.pause()
        assert "changed by someone else" in problem(editor)
        assert editor.query_one("#form-text", TextArea).text == "Mine."  # Not thrown away.
    with PostgresPassageStore.open(kb_url) as store:
        assert store.get("helmet").passage.text == "Theirs."


async def test_another_process_change_reaches_the_app_by_notification(
    make_app: MakeApp, kb_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An hour between polls: only the notification can bring the change in time.
    monkeypatch.setattr(kb_index, "POLL_SECONDS", 3600.0)
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        await open_editor(pilot)
        assert len(app.services.engine.passages) == 10
        await wait_until(pilot, lambda: _listening(kb_url), timeout=10)
        added = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "chatbot", "kb", "add", "--id", "lost-item", "--text",
             "Lost items are kept for 30 days.", "--kb", kb_url],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert added.returncode == 0, added.stderr
        await wait_until(pilot, lambda: len(app.services.engine.passages) == 11, timeout=10)
        # The editor's list follows the rebuilt index.
        await wait_until(pilot, lambda: "lost-item" in editor_ids(app), timeout=10)


async def test_another_process_save_reaches_the_open_passage_history(
    make_app: MakeApp, kb_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two apps on one passage: after the other's save, this one's History said `no earlier
    versions` still, though its own save was refused as changed by someone else."""
    monkeypatch.setattr(kb_index, "POLL_SECONDS", 3600.0)  # Only the notification is in time.
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        rows = editor.query_one("#history-options")
        assert "no earlier versions" in flat(screen_text(app, rows))
        await type_into(pilot, "#form-text", "Mine.")
        await wait_until(pilot, lambda: _listening(kb_url), timeout=10)
        saved = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "chatbot", "kb", "edit", "helmet", "--text", "Theirs.",
             "--kb", kb_url],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert saved.returncode == 0, saved.stderr
        await wait_until(pilot, lambda: "replaced by edit" in flat(screen_text(app, rows)),
                         timeout=10)  # fmt: skip
        assert editor.query_one("#form-text", TextArea).text == "Mine."


def editor_ids(app: object) -> set[str]:
    from chatbot.tui.screens.editor import EditorScreen

    screen = getattr(app, "screen", None)
    return set(screen._known_ids) if isinstance(screen, EditorScreen) else set()
