"""A removed account's sign-in cookie signed in to a new account given the same name.

A tester, against `helpdesk serve` on SQLite and on PostgreSQL: `users add zed --role agent`,
signed in (cookie C), `users rm zed` (C refused: right), then `users add zed --role admin
--display-name "Zed Boss"`: with C, /agent and /editor were the console and the editor, and the
editor's websocket opened as the new account. Each account's session epoch started over at 0 as
it was added, and the cookie held only the name and that number (after one password change, a
cookie carrying 1 matched again). Each account now has an incarnation, made at random as it is
added and never again, signed into its cookies and checked on every read: no cookie of an
earlier account of the name is accepted, and a console open with one closes at the next check."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import aiohttp
import httpx
import pytest

from chatbot.accounts.models import Role
from chatbot.accounts.service import AccountService
from chatbot.store.sqlite_users import SQLiteUserStore
from chatbot.web.server import ACCOUNT_COOKIE
from tests.accounts.helpers import accounts_of
from tests.backends import Backend, backend
from tests.conftest import SHIPPED_KB
from tests.web.conftest import PASSWORD
from tests.web.harness import FAST_HASHER, Served, run_async, start_server
from tests.web.server_helpers import Clock, agent_console, close_reason, here

__all__ = ["backend"]  # A fixture: SQLite, then PostgreSQL.

NEW_PASSWORD = "another horse battery"


@pytest.fixture
def site(backend: Backend, tmp_path: Path) -> Iterator[tuple[AccountService, Served]]:
    """`helpdesk serve` on the backend's database (no bots), and that database's accounts."""
    home = tmp_path / "site"
    home.mkdir()
    shutil.copytree(SHIPPED_KB, home / "kb", ignore=shutil.ignore_patterns(".*"))
    accounts = accounts_of(backend)  # Migrates the database, as `users add` would.
    try:
        served = start_server(
            home, db=cast(Path, backend.location), kb=home / "kb", extra=["--bots", "0"]
        )
        try:
            yield accounts, served
        finally:
            served.stop()
    finally:
        accounts.close()


def sign_in(served: Served, name: str, password: str) -> str:
    """Signs in as a browser does; returns the sign-in cookie."""
    response = httpx.post(
        served.url + "/signin",
        data={"name": name, "password": password, "next": "/agent"},
        headers={"Origin": served.url},
    )
    assert response.status_code == 303 and response.headers["location"] == "/agent", response
    return response.cookies[ACCOUNT_COOKIE]


def opens(served: Served, cookie: str, area: str) -> bool:
    """Whether /agent or /editor with this cookie is the console or editor (not the sign-in form,
    nor a page saying the account cannot open it)."""
    page = httpx.get(f"{served.url}/{area}", cookies={ACCOUNT_COOKIE: cookie})
    assert page.status_code in (200, 403), page
    return page.status_code == 200 and 'id="password"' not in page.text


async def handshake(served: Served, cookie: str, area: str) -> int:
    """The status of a websocket handshake for `area` with this cookie: 101 if it opened."""
    url = served.url.replace("http", "ws", 1) + f"/ws/{area}?width=80&height=24"
    headers = {"Origin": served.url, "Cookie": f"{ACCOUNT_COOKIE}={cookie}"}
    async with aiohttp.ClientSession() as http:
        try:
            async with http.ws_connect(url, headers=headers):
                return 101
        except aiohttp.WSServerHandshakeError as error:
            return error.status


def test_no_cookie_of_a_removed_account_signs_in_to_the_name_added_again(
    site: tuple[AccountService, Served],
) -> None:
    accounts, served = site
    accounts.add("zed", role=Role.AGENT, password=PASSWORD)
    first = sign_in(served, "zed", PASSWORD)  # Signed at session epoch 0.
    assert opens(served, first, "agent") and not opens(served, first, "editor")
    accounts.set_password("zed", NEW_PASSWORD)
    second = sign_in(served, "zed", NEW_PASSWORD)  # Signed at epoch 1.
    assert opens(served, second, "agent") and not opens(served, first, "agent")

    accounts.remove("zed")
    assert not opens(served, first, "agent") and not opens(served, second, "agent")

    # Added again, with a higher role: its epoch starts at 0, as the first cookie's.
    accounts.add("zed", role=Role.ADMIN, password=PASSWORD, display_name="Zed Boss")
    for area in ("agent", "editor"):
        assert not opens(served, first, area), area
    assert run_async(handshake(served, first, "editor")) == 403
    # One new password later its epoch is 1, as the second cookie's.
    accounts.set_password("zed", NEW_PASSWORD)
    for area in ("agent", "editor"):
        assert not opens(served, second, area), area
    assert run_async(handshake(served, second, "editor")) == 403

    # The new account's own sign-in works, in both areas.
    fresh = sign_in(served, "zed", NEW_PASSWORD)
    assert opens(served, fresh, "agent") and opens(served, fresh, "editor")


async def console_when_ana_is_added_again(tmp_path: Path) -> str:
    """Opens ana's console, removes ana and adds her again (as an agent, the same display name)
    between two of the server's session checks, then runs one check; returns why the console
    closed."""
    server, accounts = here(tmp_path, Clock())
    server.settings.session_check_s = 3600  # Only the check this test runs.
    db = tmp_path / "home" / "helpdesk.sqlite3"

    def add_ana_again() -> None:
        users = AccountService(SQLiteUserStore.open(db), hasher=FAST_HASHER)
        try:
            users.remove("ana")
            users.add("ana", role=Role.AGENT, password=PASSWORD, display_name="Ana P.")
        finally:
            users.close()

    port = await server.start()
    try:
        async with agent_console(port) as (_, ws):
            await asyncio.to_thread(add_ana_again)
            await server.check_accounts_once()
            return await close_reason(ws)
    finally:
        await server.shutdown()
        accounts.close()


def test_an_open_console_of_a_removed_account_closes_though_the_name_is_added_again(
    tmp_path: Path,
) -> None:
    assert run_async(console_when_ana_is_added_again(tmp_path)) == "signed out"
