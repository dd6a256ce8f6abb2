"""The app's engine follows the knowledge base on disk: after its own editor's saves, after another
process's, never back to an older index, and never onto a broken file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.config import Settings
from chatbot.tui import HelpDeskApp
from chatbot.tui.kb_index import KnowledgeBaseIndex
from tests.conftest import ROOT
from tests.tui.conftest import SIZE, MakeApp, editor_settings
from tests.tui.helpers import engine_ready

LOST = "Where do lost and found items left in a bike basket go?"


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


def index_of(app: HelpDeskApp) -> KnowledgeBaseIndex:
    assert app.kb_index is not None
    return app.kb_index


async def test_a_save_by_another_process_reaches_this_apps_engine(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await engine_ready(app)  # Built after the first screen.
        assert len(app.services.engine.passages) == 10
        added = subprocess.run(
            [sys.executable, "-m", "chatbot", "kb", "add", "--id", "lost-and-found", "--text",
             "Lost and found: items left in a bike basket are kept for 30 days.",
             "--kb", str(kb_copy)],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert added.returncode == 0, added.stderr
        index_of(app).poll()  # What the app's timer does every second.
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.services.engine.retrieve(LOST)[0].passage.id == "lost-and-found"


async def test_an_unchanged_directory_is_not_reloaded(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE):
        await engine_ready(app)  # Built after the first screen.
        engine = app.services.engine
        index_of(app).poll()
        await app.workers.wait_for_complete()
        assert app.services.engine is engine


async def test_an_older_rebuild_never_replaces_a_newer_one(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await engine_ready(app)  # Built after the first screen.
        index = index_of(app)
        first = app.services.engine
        index.rebuild()
        index.rebuild()
        await app.workers.wait_for_complete()
        await pilot.pause()
        newest = app.services.engine
        assert newest is not first
        index.live.swap(1, first)  # The first rebuild's result, arriving late.
        assert app.services.engine is newest


async def test_a_broken_file_is_skipped_and_named(make_app: MakeApp, kb_copy: Path) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await engine_ready(app)  # Built after the first screen.
        engine = app.services.engine
        (kb_copy / "broken.json").write_text("{", encoding="utf-8")
        index_of(app).poll()
        await app.workers.wait_for_complete()
        await pilot.pause()
        # Rebuilt without it (a later change still loads), and it is named once.
        assert app.services.engine is not engine
        assert [p.id for p in app.services.engine.passages] == [p.id for p in engine.passages]
        [notice] = list(app._notifications)
        assert "broken.json: malformed JSON" in notice.message
        assert notice.message.endswith("(skipped)")
