"""The app's own bot says, once, that Valen rejects the API key: as a notification, and on the
terminal again after the app quits, as the replay cache's problems are.

A tester ran `helpdesk` live with a key Valen refused: every question escalated `valen-error`,
and nothing on screen (nor on the terminal after Ctrl+Q) said why. `helpdesk bot` warns once;
the app's worker warned into Textual's log, which nobody sees.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import httpx
import pytest
from textual.drivers.headless_driver import HeadlessDriver
from textual.notifications import Notification

from chatbot.config import Settings, load_settings
from chatbot.tui import HelpDeskApp, Mode, create_app
from tests.tui.conftest import Q1, Q3, SIZE, FrozenClock
from tests.tui.helpers import ask, flat, screen_text, wait_until
from tests.valen_faults import FAST
from tests.valen_server import Reply, ValenTestServer, fixed

WARNING = (
    "Valen rejected the API key: auth (HTTP 401): key disabled; while it does, questions go to a "
    "person. Each question is still sent to Valen, and the bot answers again as soon as Valen "
    "accepts the key; a new key (VALEN_API_KEY or valen.api_key) takes effect when this worker "
    "restarts"
)


@pytest.fixture
def refusing(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, valen_server: ValenTestServer
) -> Settings:
    """Live mode against a Valen that refuses the key on every request."""
    valen_server.responder = fixed(Reply(status=401, body={"error": "key disabled"}))
    monkeypatch.setenv("VALEN_API_KEY", "sk-app-0123456789")
    return load_settings(
        store={"db": db_path},
        valen={
            "replay": "off",
            "base_url": valen_server.base_url,
            "cache": tmp_path / "c.json",
            **FAST,
        },
    )


def app_on(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, mode: Mode, **options: object
) -> HelpDeskApp:
    return create_app(
        settings, mode=mode, http=http, clock=clock, agent="ana", timings=False,
        **options,  # type: ignore[arg-type]
    )  # fmt: skip


def valen_notices(app: HelpDeskApp) -> list[Notification]:
    return [n for n in app._notifications if n.title == "Valen"]


@pytest.mark.parametrize("mode", ["chat", "all"])
async def test_a_terminal_app_shows_a_rejected_key_once(
    refusing: Settings, clock: FrozenClock, mode: Mode, valen_server: ValenTestServer
) -> None:
    async with httpx.AsyncClient() as http:
        app = app_on(refusing, http, clock, mode)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await ask(pilot, Q1)
            await wait_until(pilot, lambda: bool(valen_notices(app)))
            [shown] = valen_notices(app)
            assert shown.severity == "error"
            assert shown.message == f"{WARNING}."  # The log line, said as a sentence.
            # A toast on screen, not only in a list.
            await wait_until(pilot, lambda: "Valen rejected the API key" in screen_text(app))
            # Every question now escalates alike: said once, not for each.
            await ask(pilot, Q3)
            await pilot.pause()
            assert len(valen_notices(app)) == 1
            bot_log, worker = app._bot_log, app.bot
            assert worker is not None and bot_log is not None and bot_log in worker.log.handlers
    assert valen_server.received
    # The worker's logger is the process's: an app that ended leaves none of its handlers on it.
    assert bot_log not in worker.log.handlers and app._app_log not in worker.log.handlers


async def test_what_the_app_showed_is_on_the_terminal_once_it_ends(
    refusing: Settings, clock: FrozenClock, capsys: pytest.CaptureFixture[str]
) -> None:
    root = logging.getLogger()
    terminal = logging.StreamHandler(sys.stderr)  # What `helpdesk` sets up before the app.
    root.addHandler(terminal)
    try:
        async with httpx.AsyncClient() as http:
            app = app_on(refusing, http, clock, "chat")
            async with app.run_test(size=SIZE) as pilot:
                await ask(pilot, Q1)
                await wait_until(pilot, lambda: bool(valen_notices(app)))
                # Never over the app's screen.
                assert "rejected the API key" not in capsys.readouterr().err
    finally:
        root.removeHandler(terminal)
    err = capsys.readouterr().err
    assert err.count("Valen rejected the API key") == 1, err
    assert WARNING in err


class Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.said: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.said.append(record.getMessage())


async def test_a_browser_customer_is_never_shown_it(
    refusing: Settings, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A customer's chat in a browser, with a worker of its own here so that it has something to
    # warn about: the warning is the operator's, never the customer's.
    monkeypatch.setattr(HeadlessDriver, "is_web", property(lambda _driver: True))
    async with httpx.AsyncClient() as http:
        app = app_on(refusing, http, clock, "chat", editor=False, fixed_conversation=True)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.bot is not None, timeout=30)
            assert app.bot is not None
            kept = Kept()
            app.bot.log.addHandler(kept)
            await ask(pilot, Q1)
            await wait_until(pilot, lambda: any("rejected the API key" in s for s in kept.said))
            await pilot.pause()
            await pilot.pause()
            assert not valen_notices(app)
            assert "rejected the API key" not in flat(screen_text(app))


async def test_a_wait_longer_than_the_client_waits_is_shown_too(
    refusing: Settings, clock: FrozenClock, valen_server: ValenTestServer
) -> None:
    # The bot's other one-time warning about Valen: a 429 asking for an hour.
    valen_server.responder = fixed(
        Reply(status=429, body={"error": "slow down"}, headers={"retry-after": "3600"})
    )
    async with httpx.AsyncClient() as http:
        app = app_on(refusing, http, clock, "chat")
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await ask(pilot, Q1)
            await wait_until(pilot, lambda: bool(valen_notices(app)))
            [shown] = valen_notices(app)
    assert shown.severity == "warning"
    assert shown.message.startswith(
        "Valen asked to wait 3600 s before it is asked again (HTTP 429), more than the 60 s a "
        "request waits at most (valen.max_retry_wait_s)"
    )
