"""The first screen comes before the engine (issue 13): the app builds its engine (numpy, the
passages, the BM25 index) in a thread once the screen is up, and starts its bot worker then. A
question asked meanwhile is stored at once and answered when the engine is ready: nothing is
lost. The build is held back by a gate here, so "meanwhile" is certain, not a race."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import chatbot.assembly
from chatbot.config import load_settings
from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from chatbot.engine.engine import Engine
from chatbot.engine.live import EngineNotReady
from chatbot.tui import create_app
from chatbot.tui.screens.chat import ChatScreen
from chatbot.tui.screens.editor import EditorScreen
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.conftest import SHIPPED_CACHE
from tests.tui.conftest import Q1, SIZE, MakeApp
from tests.tui.helpers import ask, engine_ready, settled, wait_until


class Gate:
    """Holds `build_engine` (the real one, which runs once opened) until the test opens it."""

    def __init__(self, build: Callable[..., Engine]) -> None:
        self.opened = threading.Event()
        self.entered = threading.Event()
        self._build = build

    def __call__(self, *args: Any, **kwargs: Any) -> Engine:
        self.entered.set()
        # Bounded, so a failing test cannot leave a thread waiting forever.
        self.opened.wait(timeout=60)
        return self._build(*args, **kwargs)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    held = Gate(chatbot.assembly.build_engine)
    monkeypatch.setattr(chatbot.assembly, "build_engine", held)
    yield held
    held.opened.set()


async def test_a_question_asked_before_the_engine_is_built_is_stored_then_answered(
    make_app: MakeApp, other: DeskService, gate: Gate
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        # The screen is up and takes a question, while the engine is still being built.
        assert isinstance(app.screen, ChatScreen) and app.screen.query_one(ChatPanel)
        await wait_until(pilot, gate.entered.is_set)
        assert not app.services.live.ready and app.bot is None
        with pytest.raises(EngineNotReady):
            _ = app.services.engine
        await ask(pilot, Q1, wait=False)
        [question] = other.messages(1)
        assert (question.text, question.pending) == (Q1, True)
        panel = app.screen.query_one(ChatPanel)
        assert panel.working and not settled(panel)

        gate.opened.set()
        await wait_until(pilot, lambda: settled(panel))
        [stored] = other.decisions(1)
        assert stored.decision.answer is not None
        assert stored.decision.answer.id == "card-charged-twice"
        assert app.bot is not None and stored.worker == app.bot.name
        assert other.conversation(1).state is State.BOT
        assert not other.messages(1)[0].pending


async def test_the_editor_asked_for_before_the_engine_is_built_opens_once_it_is(
    make_app: MakeApp, gate: Gate
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, gate.entered.is_set)
        await pilot.press("f2")
        await pilot.pause()
        assert not isinstance(app.screen, EditorScreen)  # Its panels need the engine.
        gate.opened.set()
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
        await app.workers.wait_for_complete()  # The editor reads its passage list in a thread.
        await pilot.pause()
        assert len(app.services.engine.passages) == 10


@pytest.fixture
def broken_kb(kb_copy: Path) -> Path:
    (kb_copy / "broken.json").write_text("{", encoding="utf-8")
    return kb_copy


async def test_a_broken_file_at_start_is_skipped_and_the_app_opens(
    broken_kb: Path, db_path: Path
) -> None:
    settings = load_settings(
        store={"db": db_path}, knowledge_base={"path": broken_kb}, valen={"cache": SHIPPED_CACHE}
    )
    # One hand-broken file must not keep the app, and the editor that can mend it, from opening:
    # it is skipped (with a warning naming it), the other passages answer.
    app = create_app(settings, mode="chat", timings=False)
    async with app.run_test(size=SIZE):
        engine = await engine_ready(app)
        assert app.startup_error is None and app.is_running
        assert len(engine.passages) == 10


async def test_the_engine_is_the_one_a_started_app_would_have_built(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE):
        engine = await engine_ready(app)
        assert engine.retrieve(Q1)[0].passage.id == "card-charged-twice"
        assert app.services.engine is engine


def test_the_app_is_made_without_loading_the_engine_or_httpx(tmp_path: Path) -> None:
    """What `helpdesk` does before its first screen: numpy (the index), httpx and the passage
    store wait for the engine, which is built after it."""
    code = (
        "import sys\n"
        "from chatbot.config import load_settings\n"
        "from chatbot.tui import create_app\n"
        "create_app(load_settings())\n"
        "print(sorted(m for m in ('numpy', 'httpx', 'aiohttp',"
        " 'chatbot.knowledge_base.store', 'chatbot.knowledge_base.models') if m in sys.modules))\n"
    )
    # The config file and data directory are the test's own already (tests/conftest.py).
    env = os.environ | {"HELPDESK_DB": str(tmp_path / "helpdesk.sqlite3")}
    # Twice: the first start ever copies the shipped knowledge base, which reads its passages.
    for _ in range(2):
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                timeout=60, env=env)  # fmt: skip
        assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


async def test_garbage_collection_paused_for_start_up_resumes_after_the_first_screen(
    make_app: MakeApp,
) -> None:
    # `helpdesk` pauses collection before its imports; the app must not leave it paused.
    app = make_app("chat")
    gc.disable()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, gc.isenabled)
            await engine_ready(app)
    finally:
        gc.enable()
