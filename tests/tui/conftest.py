"""Fixtures for the app tests: settings on a temporary database, a frozen clock, one HTTP client.

The shipped knowledge base and replay cache answer the seed questions offline; the HTTP client is
passed in (as the CLI's would be) and is never used to reach a host in replay mode.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from textual.app import App
from textual.pilot import Pilot

from chatbot.assembly import open_service
from chatbot.config import Settings, load_settings
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp, Mode, create_app
from tests.conftest import SHIPPED_CACHE
from tests.desk.helpers import script_day

Q1 = "I was charged twice for the same ride, can I get my money back?"
Q2 = "The bike's brakes were already worn when I took it. Will I have to pay for that?"
Q3 = "There were no free docks at the station so I kept riding. Will I pay a late fee?"
SIZE = (120, 36)


class FrozenClock:
    """Stands still unless a test moves it, so wait times in snapshots never change."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture(autouse=True)
def no_drafts_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the app keeps unsent words is process-wide (set as the real command's settings
    load): put back after every test, so one test's folder never reaches the next test's app
    (an editor test that found another's kept form opened it first)."""
    from chatbot import drafts
    from chatbot.tui.screens.chat import ChatScreen

    monkeypatch.setattr(drafts, "agent_drafts", None)
    monkeypatch.setattr(drafts, "editor_drafts", None)
    monkeypatch.setattr(ChatScreen, "drafts", None)


def editor_settings(db_path: Path, kb_copy: Path, **sections: Any) -> Settings:
    """Settings for the editor's tests: it writes, so a copy of the shipped knowledge base, and
    recorded judgments for Try it; `sections` on top (e.g. `ui={"locale": "zh"}`)."""
    return load_settings(
        store={"db": db_path},
        knowledge_base={"path": kb_copy},
        valen={"cache": SHIPPED_CACHE, "replay": "on"},
        **sections,
    )


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "helpdesk.sqlite3"


@pytest.fixture
def settings(db_path: Path) -> Settings:
    return load_settings(store={"db": db_path})


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    # A transport that refuses every request: replay mode must never reach a host.
    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"unexpected request to {request.url}")

    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as client:
        yield client


MakeApp = Callable[..., HelpDeskApp]


@pytest.fixture
def make_app(settings: Settings, http: httpx.AsyncClient, clock: FrozenClock) -> MakeApp:
    def make(mode: Mode = "all", **options: object) -> HelpDeskApp:
        return create_app(
            settings, mode=mode, http=http, clock=clock, agent="ana", timings=False,
            **options,  # type: ignore[arg-type]
        )  # fmt: skip

    return make


@pytest.fixture
def other(settings: Settings, clock: FrozenClock) -> Iterator[DeskService]:
    """The desk as another process sees it: a connection of its own to the same database."""
    service = open_service(settings, clock=clock)
    yield service
    service.close()


RunBefore = Callable[[Pilot[None]], Awaitable[None] | None]


@pytest.fixture
def snap_compare(snap_compare: Callable[..., bool]) -> Callable[..., bool]:
    """pytest-textual-snapshot's `snap_compare`, with every screenshot taken steady: cursors
    shown rather than caught mid-blink, and the footer showing the screen's current keys."""
    from tests.tui.helpers import steady

    def compare(
        app: App[object],
        press: Iterable[str] = (),
        terminal_size: tuple[int, int] = (80, 24),
        run_before: RunBefore | None = None,
    ) -> bool:
        async def steadied(pilot: Pilot[None]) -> None:
            if run_before is not None and inspect.isawaitable(result := run_before(pilot)):
                await result
            await steady(pilot)

        return snap_compare(app, press=press, terminal_size=terminal_size, run_before=steadied)

    return compare


@pytest.fixture
def day(settings: Settings, clock: FrozenClock) -> None:
    """The scripted day of tests/desk/helpers.py (checked in tests/desk/test_stats.py) in the app's
    database."""
    desk = open_service(settings, clock=clock)
    try:
        script_day(desk, clock)  # type: ignore[arg-type]
    finally:
        desk.close()
