"""Sign-in, with the server in the test's process (its clock injected, its log captured):

- an agent's open console ends when their sign-in does: the page could not be opened again after
  `session_hours`, and an open one went on working as the account until reloaded. The sign-in
  runs out when the test moves the clock, not after hours (or seconds) of waiting; the console is
  the real app, in a process of its own, behind a real websocket;
- a failed sign-in's log line names the account only if there is one: a password typed into the
  name field was written to the server's log."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import cast

import aiohttp
import pytest

from chatbot.accounts.aio import AsyncAccounts
from chatbot.accounts.models import Account
from chatbot.accounts.service import AccountService
from chatbot.cli.serve import session_arguments
from chatbot.config import WebSettings
from chatbot.store.sqlite_users import SQLiteUserStore
from chatbot.web.server import ACCOUNT_COOKIE, CustomerDesk, HelpdeskServer
from tests.web.conftest import PASSWORD, make_site
from tests.web.harness import FAST_HASHER, run_async, server_environment

HOURS = 12.0


class Clock:
    """Seconds since the epoch, moved by the test."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


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
    origin = {"Origin": f"http://127.0.0.1:{port}"}
    try:
        async with aiohttp.ClientSession(
            f"http://127.0.0.1:{port}", cookie_jar=aiohttp.CookieJar(unsafe=True)
        ) as browser:
            form = {"name": "ana", "password": PASSWORD, "next": "/agent"}
            async with browser.post(
                "/signin", data=form, headers=origin, allow_redirects=False
            ) as response:
                assert response.status == 303, await response.text()
                max_age = int(response.cookies[ACCOUNT_COOKIE]["max-age"])
            async with browser.ws_connect("/ws/agent?width=80&height=24", headers=origin) as ws:
                await first_output(ws)
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


def test_an_open_console_ends_when_its_sign_in_runs_out(tmp_path: Path) -> None:
    still_open, reason, max_age = run_async(open_console_then_run_out(tmp_path))
    assert max_age == HOURS * 3600  # The cookie's own limit, which the console now keeps.
    assert still_open
    assert reason == "session expired"  # Not "signed out": nobody signed them out.


async def fail_to_sign_in(tmp_path: Path, names: list[str]) -> None:
    server, accounts = here(tmp_path, Clock())
    port = await server.start()
    try:
        async with aiohttp.ClientSession(f"http://127.0.0.1:{port}") as browser:
            for name in names:
                form = {"name": name, "password": "not the password", "next": "/agent"}
                async with browser.post(
                    "/signin",
                    data=form,
                    headers={"Origin": f"http://127.0.0.1:{port}"},
                    allow_redirects=False,
                ) as response:
                    assert response.status == 303
    finally:
        await server.shutdown()
        accounts.close()


def test_a_failed_sign_in_logs_a_name_only_if_it_is_an_accounts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    typed = ["Hunter2-Secret-Pass", "ana", *["Hunter2-Secret-Pass"] * 5]  # The last is locked out.
    with caplog.at_level(logging.WARNING, logger="chatbot.web.server"):
        run_async(fail_to_sign_in(tmp_path, typed))
    lines = [record.getMessage() for record in caplog.records]
    assert "failed sign-in for 'ana' from 127.0.0.1" in lines
    assert "failed sign-in for a name with no account from 127.0.0.1" in lines
    assert any("refused: too many failures" in line for line in lines), lines
    assert not any("hunter2" in line.lower() for line in lines), lines
