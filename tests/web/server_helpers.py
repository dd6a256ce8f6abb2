"""Signing in to `helpdesk serve` without a browser: over HTTP to a served process, and to
the server in the test's process (its clock moved by the test)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http.cookies import Morsel
from pathlib import Path
from typing import cast

import aiohttp
import httpx

from chatbot.accounts.aio import AsyncAccounts
from chatbot.accounts.models import Account
from chatbot.accounts.service import AccountService
from chatbot.cli.serve import session_arguments
from chatbot.config import WebSettings
from chatbot.store.sqlite_users import SQLiteUserStore
from chatbot.web.server import ACCOUNT_COOKIE, CustomerDesk, HelpdeskServer
from tests.web.conftest import PASSWORD, make_site
from tests.web.harness import FAST_HASHER, Served, server_environment


def sign_in(served: Served, name: str, password: str = PASSWORD) -> httpx.Response:
    return httpx.post(
        served.url + "/signin",
        data={"name": name, "password": password, "next": "/agent"},
        headers={"Origin": served.url},
    )


HOURS = 12.0


class Clock:
    """Seconds since the epoch, moved by the test."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@asynccontextmanager
async def agent_console(
    port: int, *, name: str = "ana", password: str = PASSWORD
) -> AsyncIterator[tuple[Morsel[str], aiohttp.ClientWebSocketResponse]]:
    """Sign in at the served port as a browser does and open the agent console: the account
    cookie the sign-in set, and the console's websocket once it has drawn."""
    origin = {"Origin": f"http://127.0.0.1:{port}"}
    async with aiohttp.ClientSession(
        f"http://127.0.0.1:{port}", cookie_jar=aiohttp.CookieJar(unsafe=True)
    ) as browser:
        form = {"name": name, "password": password, "next": "/agent"}
        async with browser.post(
            "/signin", data=form, headers=origin, allow_redirects=False
        ) as response:
            assert response.status == 303, await response.text()
            cookie = response.cookies[ACCOUNT_COOKIE]
        async with browser.ws_connect("/ws/agent?width=80&height=24", headers=origin) as ws:
            await first_output(ws)
            yield cookie, ws


async def first_output(websocket: aiohttp.ClientWebSocketResponse) -> None:
    """Waits for the app's first bytes: the console is running, as the account."""
    while True:
        message = await websocket.receive(timeout=60)
        assert message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY), message
        if message.type == aiohttp.WSMsgType.BINARY and message.data:
            return


async def close_reason(websocket: aiohttp.ClientWebSocketResponse) -> str:
    """Reads the app's output until the server closes the websocket; returns why it did."""
    while True:
        message = await websocket.receive(timeout=10)
        if message.type == aiohttp.WSMsgType.CLOSE:
            return str(message.extra)
        assert message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY), message


def here(tmp_path: Path, clock: Clock) -> tuple[HelpdeskServer, AsyncAccounts]:
    """The server as `helpdesk serve` builds it, on the test's database, not started."""
    home = tmp_path / "home"
    db, kb = make_site(home)
    accounts = AsyncAccounts.open(
        lambda: AccountService(SQLiteUserStore.open(db), hasher=FAST_HASHER)
    )
    server = HelpdeskServer(
        settings=WebSettings(port=0, bots=0, session_hours=HOURS, session_check_s=0.02),
        accounts=accounts,
        desk=cast(CustomerDesk, None),  # Not asked: no customer comes.
        child=session_arguments,
        environment=server_environment(home) | {"HELPDESK_DB": str(db), "HELPDESK_KB": str(kb)},
        secret=b"s" * 32,
        preload=False,  # One app process, exec'd: no zygote to start for it.
        report=lambda line: None,
        clock=clock,
    )
    return server, accounts


async def open_console_then_run_out(tmp_path: Path) -> tuple[bool, str, int]:
    """Signs in as an agent, opens the console, lets checks pass, then moves the clock to the
    sign-in's end. Returns whether the console was still open after the checks before the end,
    why it closed after, and the sign-in cookie's age limit as the browser was told it."""
    clock = Clock()
    server, accounts = here(tmp_path, clock)
    checked = 0
    look_up = accounts.account

    async def counted(name: str) -> Account | None:
        # Each round of the server's checks looks the open console's account up (unless it
        # closes the console first): the test waits for rounds, not for a time.
        nonlocal checked
        checked += 1
        return await look_up(name)

    accounts.account = counted  # type: ignore[method-assign]
    port = await server.start()
    try:
        async with agent_console(port) as (cookie, ws):
            max_age = int(cookie["max-age"])
            # An hour short of the end, rounds of checks go by and the console stays.
            clock.now += HOURS * 3600 - 3600
            before = checked
            while checked < before + 3:
                await asyncio.sleep(0.01)
            still_open = not ws.closed and len(server.sessions) == 1
            clock.now += 3600
            reason = await close_reason(ws)
    finally:
        await server.shutdown()
        accounts.close()
    return still_open, reason, max_age
