"""Fixtures for the browser tests: `helpdesk serve` as a real process on a free 127.0.0.1 port,
and Debian's chromium-headless-shell driven by Playwright (never Playwright's own browser
download)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Playwright, ViewportSize, sync_playwright

from chatbot.accounts.models import Role
from tests.conftest import SHIPPED_KB
from tests.web.harness import (
    ARTIFACTS,
    CHROMIUM_ARGS,
    Served,
    add_account,
    chromium,
    start_server,
)

PASSWORD = "correct horse battery"
ACCOUNTS = {
    "ana": (Role.AGENT, "Ana P."),
    "eddie": (Role.EDITOR, "Eddie"),
    "root": (Role.ADMIN, "Root Admin"),
}
VIEWPORT: ViewportSize = {"width": 880, "height": 560}
"""A small laptop's browser window: the terminal is 88 columns by 26 rows at the page's 16px
font, near the 80x24 every screen must work at, and chromium draws and hashes a third fewer
pixels than at 1100x700 (its CPU in three browser modules 10.4 s instead of 11.1-11.7)."""


@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    # Per package, not per session: while Playwright's sync API is open, its event loop counts as
    # running in this thread, and every async test the worker runs afterwards fails to start.
    # pytest ends a package's fixtures before a test from another package runs, as it does a
    # module's; the browser modules a worker runs one after another share one Playwright driver
    # and one chromium (each start took about half a CPU-second between node and chromium).
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
    yield browser
    browser.close()


def make_site(home: Path) -> tuple[Path, Path]:
    """A database with one account per role, and a pristine copy of the shipped passages."""
    home.mkdir(parents=True, exist_ok=True)
    db = home / "helpdesk.sqlite3"
    kb = home / "kb"
    shutil.copytree(SHIPPED_KB, kb, ignore=shutil.ignore_patterns(".*"))
    for name, (role, display) in ACCOUNTS.items():
        add_account(db, name, role=role, password=PASSWORD, display_name=display)
    return db, kb


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server for a module's tests (each start costs a second or two)."""
    home = tmp_path_factory.mktemp("serve")
    db, kb = make_site(home)
    server = start_server(home, db=db, kb=kb)
    yield server
    server.stop()


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[Served]:
    """A server of the test's own, for tests that count sign-in failures or stop it."""
    db, kb = make_site(tmp_path / "site")
    server = start_server(tmp_path / "site", db=db, kb=kb)
    yield server
    server.stop()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    context = browser.new_context(viewport=VIEWPORT)
    yield context
    context.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
