"""An app closed while it starts ends quietly: no traceback, no error for its return code.

A browser's customer who closed the page within a second of opening it printed a traceback into
serve's log each time (`NoMatches: '#chat-status'`, `'HeaderTitle'`): anyone could fill the log
by opening and closing the chat. Once an app is ending Textual mounts nothing more, so a widget
it was building then starts with none of its parts, and the first handler that looks for one
(the chat's status line, Textual's own header title, the queue's table) failed. Closed here at
every step of the first screen's build, both as a quit does (`App.exit`) and as a browser's
page closing does (the session's driver posts `ExitApp`), and while the settings or the engine
are still loading in their threads, held there by gates the test opens.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any, Literal

import httpx
import pytest
from textual import events
from textual.message import Message
from textual.messages import ExitApp

import chatbot.assembly
from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.engine.engine import Engine
from chatbot.tui import HelpDeskApp, Mode, create_app
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.queue_list import QueueList
from tests.tui.conftest import SIZE, FrozenClock
from tests.tui.helpers import GatedLoader, loading_app

# A coroutine never run (Textual's header made one per title change) is said on stderr too, in
# serve's log, once collected.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")

How = Literal["quit", "page closed"]
MODES: list[Mode] = ["chat", "agent", "all"]


def close(app: HelpDeskApp, how: How) -> None:
    if how == "quit":
        app.exit()
    else:  # What the driver of a browser's session does when its page goes (textual-serve).
        app.post_message(ExitApp())


class CloseAtStep:
    """A `run_test` message hook that closes the app as the `step`-th widget starts being built
    (its `Compose`) or has been built (its `Mount`), counting the app's and screens' too.

    A quit counts from when `run_test` has the app ready: quit before, the app never is, and
    `run_test` waits for it in vain (a browser's page, closed, lets the app get that far)."""

    def __init__(self, app: HelpDeskApp, how: How, step: int) -> None:
        self.app, self.how, self.step = app, how, step
        self.steps = 0
        self.armed = how == "page closed"

    def __call__(self, message: Message) -> None:
        if self.armed and isinstance(message, (events.Compose, events.Mount)):
            self.steps += 1
            if self.steps == self.step:
                close(self.app, self.how)

    @property
    def closed(self) -> bool:
        return self.steps >= self.step


async def ends_quietly(app: HelpDeskApp, hook: CloseAtStep) -> bool:
    """Run `app` until the hook closed it (or its build is over without reaching that step);
    whether it was closed. `run_test` raises what the app raised (and prints its traceback)."""
    async with app.run_test(size=SIZE, message_hook=hook):
        hook.armed = True
        # The build is over once the first screen's panels, and what they read first, are in.
        # (Not the pilot's waits: they wait for an ending app's widgets to answer, in vain.)
        await until(lambda: hook.closed or started(app))
        if not hook.closed:
            return False
    assert not app.return_code, f"closed at step {hook.step}: return code {app.return_code}"
    return True


async def until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


def started(app: HelpDeskApp) -> bool:
    """The first screen's panels are in place, and have read what they show first."""
    if not app.started or not app.is_running:
        return False
    queues, chats = app.screen.query(QueueList), app.screen.query(ChatPanel)
    return (bool(queues) or bool(chats)) and all(
        [queue.loaded.is_set() for queue in queues]
        + [chat.conversation_id is None or chat.conversation is not None for chat in chats]
    )


@pytest.mark.parametrize("mode", MODES)
async def test_a_browser_page_closed_at_any_step_of_the_first_screens_build(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService, mode: Mode
) -> None:
    """As a browser session starts: its settings given, its customer's conversation there
    already, the whole first screen built before `run_test` has the app ready."""
    conversation = other.start_conversation().id
    step = 0
    while True:
        step += 1
        app = create_app(
            settings, mode=mode, http=http, clock=clock, agent="ana", timings=False, bot=False,
            conversation_id=conversation if mode == "chat" else None, fixed_conversation=True,
        )  # fmt: skip
        if not await ends_quietly(app, CloseAtStep(app, "page closed", step)):
            break
    assert step > 10  # Every widget of the first screen was a step.


@pytest.mark.parametrize("how", ["quit", "page closed"])
@pytest.mark.parametrize("mode", MODES)
async def test_closed_at_any_step_of_the_panels_build(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, mode: Mode, how: How
) -> None:
    """As `helpdesk` starts: the first screen drawn before the settings load, the panels built
    in place of what stood in for them after."""
    step = 0
    while True:
        step += 1
        load = GatedLoader(settings)
        load.opened.set()
        app = loading_app(load, http, clock, mode, agent="ana")
        if not await ends_quietly(app, CloseAtStep(app, how, step)):
            break
    # Every step was one; how many there are varies with how the load's thread interleaves with
    # the screen (9 to 12 seen).
    assert step > 5


class OpenOnExit:
    """A `run_test` message hook that opens `gate` as the app handles its `ExitApp`: the thread
    the gate holds ends once the app has begun to end."""

    def __init__(self, gate: threading.Event) -> None:
        self.gate = gate

    def __call__(self, message: Message) -> None:
        if isinstance(message, ExitApp):
            self.gate.set()


@pytest.mark.parametrize("how", ["quit", "page closed"])
@pytest.mark.parametrize("mode", MODES)
async def test_closed_as_soon_as_it_is_ready(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, mode: Mode, how: How
) -> None:
    app = create_app(settings, mode=mode, http=http, clock=clock, agent="ana", timings=False)
    async with app.run_test(size=SIZE):
        close(app, how)
        await until(lambda: not app.is_running)
    assert not app.return_code


@pytest.mark.parametrize("how", ["quit", "page closed"])
@pytest.mark.parametrize("mode", MODES)
async def test_closed_while_the_settings_load(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, mode: Mode, how: How
) -> None:
    """Closed while the settings load in their thread, which ends after: the panels are never
    put in place, and nothing is left open."""
    load = GatedLoader(settings)
    app = loading_app(load, http, clock, mode, agent="ana")
    async with app.run_test(size=SIZE, message_hook=OpenOnExit(load.opened)):
        await until(load.entered.is_set)
        close(app, how)
        await until(lambda: not app.is_running)
    assert not app.return_code and app.startup_error is None
    assert not [t for t in threading.enumerate() if t.name.startswith("desk_")]


class EngineGate:
    """Holds the engine's build (the real one, which runs once opened) until the test opens it."""

    def __init__(self, build: Callable[..., Engine]) -> None:
        self.entered = threading.Event()
        self.opened = threading.Event()
        self._build = build

    def __call__(self, *args: Any, **kwargs: Any) -> Engine:
        self.entered.set()
        self.opened.wait(timeout=60)  # Bounded: a failing test leaves no thread behind.
        return self._build(*args, **kwargs)


@pytest.fixture
def engine_gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[EngineGate]:
    gate = EngineGate(chatbot.assembly.build_engine)
    monkeypatch.setattr(chatbot.assembly, "build_engine", gate)
    yield gate
    gate.opened.set()


@pytest.mark.parametrize("how", ["quit", "page closed"])
@pytest.mark.parametrize("mode", MODES)
async def test_closed_while_the_engine_builds(
    settings: Settings,
    http: httpx.AsyncClient,
    clock: FrozenClock,
    engine_gate: EngineGate,
    mode: Mode,
    how: How,
) -> None:
    """Closed while the engine is built in its thread, which ends after: the bot worker never
    starts."""
    app = create_app(settings, mode=mode, http=http, clock=clock, agent="ana", timings=False)
    async with app.run_test(size=SIZE, message_hook=OpenOnExit(engine_gate.opened)):
        await until(engine_gate.entered.is_set)
        close(app, how)
        await until(lambda: not app.is_running)
    assert not app.return_code and app.bot is None
