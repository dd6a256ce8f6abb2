"""A replay cache the app cannot use is said in the app, once, to whoever can mend it.

A tester ran `helpdesk chat` with `garbage{` in the replay cache: the suggested questions went,
every question went to a person, the agent saw `replay-miss` on every passage, and nothing on
screen (nor on the terminal after Ctrl+Q) said the cache was broken: the warning went to
Textual's devtools log. With `--replay record` into a folder that cannot be written, nothing was
recorded and nothing said."""

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
from chatbot.tui.screens.editor import EditorScreen
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.valen.cache import ReplayCache
from tests.readonly import read_only
from tests.tui.conftest import Q1, Q3, SIZE, FrozenClock
from tests.tui.helpers import ask, engine_ready, flat, screen_text, wait_until
from tests.valen_server import ValenTestServer

CORRUPT = "replay cache ignored, and not written until repaired or moved aside"
MALFORMED = "malformed JSON at line 1 column 1"


@pytest.fixture
def corrupt_cache(tmp_path: Path) -> Path:
    path = tmp_path / "caches" / "rerank.json"
    path.parent.mkdir()
    path.write_text("garbage{")
    return path


@pytest.fixture
def corrupt_settings(db_path: Path, corrupt_cache: Path) -> Settings:
    return load_settings(store={"db": db_path}, valen={"cache": corrupt_cache, "replay": "on"})


@pytest.fixture
def in_a_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's driver says it is a browser session's (`Driver.is_web`), as `serve`'s does."""
    monkeypatch.setattr(HeadlessDriver, "is_web", property(lambda _driver: True))


def app_on(settings: Settings, clock: FrozenClock, mode: Mode, **options: object) -> HelpDeskApp:
    return create_app(
        settings, mode=mode, clock=clock, agent="ana", timings=False,
        **options,  # type: ignore[arg-type]
    )  # fmt: skip


def cache_notices(app: HelpDeskApp) -> list[Notification]:
    return [n for n in app._notifications if n.title == "Replay cache"]


@pytest.mark.parametrize("mode", ["chat", "all", "agent"])
async def test_a_terminal_app_shows_a_corrupt_cache_once(
    corrupt_settings: Settings, corrupt_cache: Path, clock: FrozenClock, mode: Mode
) -> None:
    app = app_on(corrupt_settings, clock, mode)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await engine_ready(app)
        await wait_until(pilot, lambda: bool(cache_notices(app)))
        [shown] = cache_notices(app)
        assert shown.severity == "error"
        assert shown.message == f"{CORRUPT}: {corrupt_cache}: {MALFORMED}"
        # A toast on screen, not only in a list.
        await wait_until(pilot, lambda: "replay cache ignored" in screen_text(app))
        if mode != "agent":
            # Every question now misses: the app does not say it again for each.
            await ask(pilot, Q1)
            await ask(pilot, Q3)
            assert len(cache_notices(app)) == 1


async def test_what_the_app_showed_is_on_the_terminal_once_it_ends(
    corrupt_settings: Settings, corrupt_cache: Path, clock: FrozenClock,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    root = logging.getLogger()
    terminal = logging.StreamHandler(sys.stderr)  # What `helpdesk` sets up before the app.
    root.addHandler(terminal)
    try:
        app = app_on(corrupt_settings, clock, "chat")
        async with app.run_test(size=SIZE) as pilot:
            await engine_ready(app)
            await wait_until(pilot, lambda: bool(cache_notices(app)))
            assert CORRUPT not in capsys.readouterr().err  # Never over the app's screen.
    finally:
        root.removeHandler(terminal)
    err = capsys.readouterr().err
    assert err.count(CORRUPT) == 1 and MALFORMED in err


@pytest.mark.parametrize(("mode", "editor"), [("agent", False), ("agent", True), ("editor", True)])
async def test_a_browser_agent_or_editor_is_shown_it(
    in_a_browser: None, corrupt_settings: Settings, clock: FrozenClock, mode: Mode, editor: bool
) -> None:
    # A browser session judges nothing (serve's bots do): it used never to read the cache.
    app = app_on(corrupt_settings, clock, mode, bot=False, editor=editor)
    async with app.run_test(size=SIZE) as pilot:
        await engine_ready(app)
        await wait_until(pilot, lambda: bool(cache_notices(app)))
        [shown] = cache_notices(app)
        assert shown.severity == "error" and CORRUPT in shown.message
        if mode == "editor":
            # The editor's own screen opens once the engine is built: left while it mounts,
            # the app fails on its tabs (as it does with any cache).
            await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
            await app.workers.wait_for_complete()
            await pilot.pause()


async def test_a_browser_customer_is_never_shown_it(
    in_a_browser: None,
    corrupt_settings: Settings,
    clock: FrozenClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # As `helpdesk serve` makes a customer's chat: their conversation only, no editor, no bot.
    app = app_on(corrupt_settings, clock, "chat", bot=False, editor=False, fixed_conversation=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(app.screen.query(ChatPanel)))
        await pilot.pause()
        # Not read at start either: serve's log would have a line per customer's page. With no
        # bot and no recorded question to offer (none can be read), the session builds no engine.
        assert CORRUPT not in caplog.text and not app.services.live.ready
        # Read in this process (as a bot's judging does), the cache warns: still nothing for
        # the customer.
        ReplayCache(corrupt_settings.valen.cache).lookup(input="x", instructions="y", model=None)
        assert CORRUPT in caplog.text
        await pilot.pause()
        await pilot.pause()
        assert not cache_notices(app)
        assert CORRUPT not in flat(screen_text(app))


async def test_a_recording_that_cannot_be_saved_is_shown_once(
    tmp_path: Path,
    db_path: Path,
    clock: FrozenClock,
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
) -> None:
    # `--replay record --cache` into a folder that cannot be written: the answers came, nothing
    # was recorded, and nothing said so.
    monkeypatch.setenv("VALEN_API_KEY", "sk-test")
    folder = tmp_path / "locked"
    folder.mkdir()
    cache = folder / "rerank.json"
    settings = load_settings(
        store={"db": db_path},
        valen={"replay": "record", "base_url": valen_server.base_url, "cache": cache},
    )
    with read_only(folder):
        async with httpx.AsyncClient() as http:
            app = app_on(settings, clock, "chat", http=http)
            async with app.run_test(size=SIZE) as pilot:
                await ask(pilot, Q1)
                await wait_until(pilot, lambda: bool(cache_notices(app)))
                await ask(pilot, Q3)
                [shown] = cache_notices(app)
                assert valen_server.received
                assert shown.severity == "error"
                assert shown.message.startswith(f"could not record into {cache}: ")
    assert not cache.exists()


async def test_a_repaired_cache_is_said_to_be_recorded_into_again(
    corrupt_cache: Path,
    db_path: Path,
    clock: FrozenClock,
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
) -> None:
    # The operator who moved the broken file aside sees recording resume: news, not an error.
    monkeypatch.setenv("VALEN_API_KEY", "sk-test")
    settings = load_settings(
        store={"db": db_path},
        valen={"replay": "record", "base_url": valen_server.base_url, "cache": corrupt_cache},
    )
    async with httpx.AsyncClient() as http:
        app = app_on(settings, clock, "chat", http=http)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: bool(cache_notices(app)))
            [broken] = cache_notices(app)
            assert broken.severity == "error" and CORRUPT in broken.message
            corrupt_cache.unlink()
            await ask(pilot, Q1)
            await wait_until(pilot, lambda: len(cache_notices(app)) == 2)
            resumed = cache_notices(app)[1]
            assert resumed.severity == "information"
            assert (
                resumed.message
                == f"replay cache {corrupt_cache} is usable again: recording resumed"
            )
    assert '"entries"' in corrupt_cache.read_text()
