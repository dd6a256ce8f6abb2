"""`helpdesk` paints its first screen before it loads its settings and opens the desk (issue 13:
start-up within 1.5x a bare Textual app): `create_app` is given the function that loads them, and
calls it in a thread once the screen is up. Until then the chat is its shell (the welcome and a
question box that takes typing) and the agent console shows it is loading. The loader is held
back by a gate here, so "meanwhile" is certain, not a race."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from chatbot.config import Settings, load_settings
from chatbot.desk.service import DeskService
from chatbot.tui import create_app
from chatbot.tui.screens.agent import AgentScreen
from chatbot.tui.screens.chat import ChatScreen
from chatbot.tui.widgets.agent_console import AgentConsole
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.chat_shell import ChatShell
from tests.tui.conftest import SIZE, FrozenClock
from tests.tui.helpers import (
    GatedLoader,
    engine_ready,
    flat,
    loading_app,
    screen_text,
    settled,
    wait_until,
)


async def test_a_question_typed_before_the_desk_is_open_is_asked_once_it_is(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    load = GatedLoader(settings)
    app = loading_app(load, http, clock, "chat")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, load.entered.is_set)
        # The chat screen is up: the welcome, and the question box has the focus; nothing is
        # open yet.
        assert isinstance(app.screen, ChatScreen) and not app.started
        shell = app.screen.query_one("#chat", ChatShell)
        assert "Ask anything about renting" in flat(screen_text(app))
        assert shell.question.has_focus
        assert not app.screen.query(ChatPanel)
        await pilot.press(*"I was charged twice", "backspace", "e")
        assert shell.question.value == "I was charged twice"[:-1] + "e"  # Seen as it is typed.
        await pilot.press("enter")
        assert other.conversations() == []

        load.opened.set()
        await wait_until(pilot, lambda: bool(other.conversations()))
        [question] = other.messages(other.conversations()[0].id)
        assert question.text == "I was charged twice"[:-1] + "e"
        panel = app.screen.query_one(ChatPanel)
        assert not app.screen.query(ChatShell)  # The panel took its place.
        # The box is cleared once the stored question comes back from the desk's thread, a
        # moment after another connection can already read it.
        await wait_until(pilot, lambda: panel.question.value == "" and panel.question.has_focus)
        await engine_ready(app)
        await wait_until(pilot, lambda: settled(panel), timeout=30)


async def test_text_typed_without_enter_waits_in_the_question_box(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    load = GatedLoader(settings)
    app = loading_app(load, http, clock, "all")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, load.entered.is_set)
        # An edit in progress: "bke", back two, "i". The cursor stays where it was left.
        await pilot.press(*"bke", "left", "left", "i")
        load.opened.set()
        # Until the panel is composed its question box is not there yet: wait for the box.
        await wait_until(pilot, lambda: bool(app.screen.query("ChatPanel #question")))
        panel = app.screen.query_one(ChatPanel)
        # The box is given the focus, then the typing: its Focus event may be handled after.
        await wait_until(pilot, lambda: panel.question.value == "bike" and panel.question.has_focus)
        assert panel.question.cursor_position == 2
        assert app.screen.query_one(AgentConsole)
        await pilot.press("end", *" lock", "enter")
        await wait_until(pilot, lambda: bool(other.conversations()))
        [question] = other.messages(other.conversations()[0].id)
        assert question.text == "bike lock"


async def test_the_agents_language_from_the_settings_shows_once_they_are_loaded(
    db_path: Path, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    other.talk_to_person(other.start_conversation().id)  # One row waiting in the queue.
    chinese = load_settings(store={"db": db_path}, ui={"locale": "zh"})
    load = GatedLoader(chinese)
    app = loading_app(load, http, clock, "agent", agent="ana")
    # The same app given its settings at once: what the loaded one must end up showing.
    direct = create_app(chinese, mode="agent", http=http, clock=clock, agent="ana", timings=False)
    async with direct.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: direct.screen.query_one(AgentConsole).queue.loaded.is_set())
        expected_title = direct.sub_title
        expected_keys = {
            b.action: b.description for b in direct._bindings.key_to_bindings["ctrl+q"]
        }
        expected_console = {
            b.action: b.description
            for b in direct.screen.query_one(AgentConsole)._bindings.key_to_bindings["ctrl+f"]
        }
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, load.entered.is_set)
        assert isinstance(app.screen, AgentScreen) and app.sub_title == "agent console"
        load.opened.set()
        await wait_until(pilot, lambda: bool(app.screen.query("AgentConsole QueueList")))
        console = app.screen.query_one(AgentConsole)
        await wait_until(pilot, console.queue.loaded.is_set)
        assert app.sub_title == expected_title != "agent console"
        assert {b.action: b.description for b in app._bindings.key_to_bindings["ctrl+q"]} == (
            expected_keys
        )
        assert {b.action: b.description for b in console._bindings.key_to_bindings["ctrl+f"]} == (
            expected_console
        )
        # The queue has a row: its table has the focus, as `AUTO_FOCUS` gives it on a shown screen.
        await wait_until(pilot, lambda: app.focused is console.queue.table)


async def test_the_shell_is_in_the_language_offered_to_the_customer(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock
) -> None:
    """A chat offered in Chinese (the terminal's or the browser's language) is Chinese from its
    first screen, before the desk opens: no English welcome flashes by."""
    load = GatedLoader(settings)
    app = loading_app(load, http, clock, "chat", customer_locale="zh")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, load.entered.is_set)
        assert app.screen.query_one("#chat", ChatShell)
        shown = flat(screen_text(app))
        assert "您好！关于租车" in shown and "Ask anything" not in shown
        assert app.sub_title == "客户聊天"
        load.opened.set()
        await wait_until(pilot, lambda: bool(app.screen.query("ChatPanel #chat-welcome")))
        await wait_until(pilot, lambda: "您好！关于租车" in flat(screen_text(app)))
        assert "Ask anything" not in flat(screen_text(app))


@pytest.mark.parametrize(("named", "title"), [(None, "客服控制台"), ("en", "agent console")])
async def test_an_agents_screen_is_in_their_terminals_language_from_the_first_frame(
    db_path: Path, http: httpx.AsyncClient, clock: FrozenClock, named: str | None, title: str
) -> None:
    """No language in the settings, a Chinese terminal: the console's title and keys are Chinese
    while the settings load and after. A language the settings name wins once they are read."""
    settings = load_settings(store={"db": db_path}, ui={"locale": named})
    load = GatedLoader(settings)
    app = loading_app(load, http, clock, "agent", agent="ana", agent_locale="zh")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, load.entered.is_set)
        assert app.sub_title == "客服控制台"
        assert [b.description for b in app._bindings.key_to_bindings["ctrl+q"]] == ["退出"]
        load.opened.set()
        await wait_until(pilot, lambda: bool(app.screen.query("AgentConsole QueueList")))
        console = app.screen.query_one(AgentConsole)
        await wait_until(pilot, console.queue.loaded.is_set)
        assert app.sub_title == title


async def test_settings_that_cannot_be_loaded_end_the_app_with_their_reason(
    http: httpx.AsyncClient, clock: FrozenClock
) -> None:
    load = GatedLoader(None, error="invalid setting engine.threshold: too high")
    app = loading_app(load, http, clock, "all")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, load.entered.is_set)
        load.opened.set()
        await wait_until(pilot, lambda: app.startup_error is not None)
    assert app.return_code == 2
    assert app.startup_error == "invalid setting engine.threshold: too high"


async def test_an_unknown_conversation_ends_the_app_and_closes_the_desk(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock
) -> None:
    load = GatedLoader(settings)
    load.opened.set()
    app = loading_app(load, http, clock, "agent", agent="ana", conversation_id=7)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.startup_error is not None)
    assert app.return_code == 2 and app.startup_error == "conversation 7 not found"
    assert not [t for t in threading.enumerate() if t.name.startswith("desk_")]


async def test_quitting_while_the_desk_opens_closes_it(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock
) -> None:
    load = GatedLoader(settings)
    app = loading_app(load, http, clock, "all")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, load.entered.is_set)
        # The thread cannot be stopped: quitting waits for it, then closes what it opened.
        threading.Timer(0.2, load.opened.set).start()
        await pilot.press("ctrl+q")
    assert app.return_code in (0, None) and app.startup_error is None
    assert not [t for t in threading.enumerate() if t.name.startswith("desk_")]


def test_nothing_but_textual_and_the_screen_loads_before_the_first_screen(tmp_path: Path) -> None:
    """What `helpdesk` has imported when its first screen is up: no settings (pydantic), desk,
    store, engine or panel module; they load in a thread after it."""
    code = (
        "import asyncio, sys\n"
        "from chatbot.cli.main import build_parser\n"
        "from chatbot.cli.app import build_app\n"
        "app = build_app(build_parser('').parse_args([]))\n"
        "async def first_screen(pilot):\n"
        "    while not (pilot.app.screen.is_mounted and pilot.app.screen.children):\n"
        "        await asyncio.sleep(0)\n"
        "    print(type(pilot.app.screen).__name__, sorted(m for m in sys.modules if m in"
        " ('pydantic', 'pydantic_settings', 'chatbot.config', 'chatbot.desk.models',"
        " 'chatbot.desk.aio', 'chatbot.store.sqlite', 'numpy', 'httpx',"
        " 'chatbot.tui.widgets.chat_panel', 'chatbot.tui.widgets.agent_console')))\n"
        "    pilot.app.exit()\n"
        "app.run(headless=True, auto_pilot=first_screen)\n"
    )
    # The config file and data directory are the test's own already (tests/conftest.py).
    env = os.environ | {"HELPDESK_DB": str(tmp_path / "helpdesk.sqlite3")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, env=env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "DeskScreen []"
