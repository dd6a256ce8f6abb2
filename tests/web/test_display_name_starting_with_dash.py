"""A display name starting with "-" kept its agent's console from starting in the browser.

`users add bob --display-name=-Bob` (or `--editor`) is accepted, but the session's process was
given `--agent -Bob`, and its parser took the name for an option ("argument --agent: expected
one argument"): the console never started. The name now goes where nothing reads it as an
option, and reaches the console as it was written: its presence is kept under it."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import httpx
import pytest

from chatbot.accounts.models import Role
from chatbot.web.server import ACCOUNT_COOKIE
from tests.web.conftest import PASSWORD, make_site
from tests.web.harness import Served, add_account, run_async, start_server
from tests.web.server_helpers import first_output

NAMES = {"bob": "-Bob", "dash": "--editor", "dashes": "--", "percent": "50%2D off"}
"""Account, display name: a leading "-", an option of the session's own, argparse's end of
options, and what the name's encoding writes."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("serve")
    db, kb = make_site(home)
    for name, display in NAMES.items():
        add_account(db, name, role=Role.AGENT, password=PASSWORD, display_name=display)
    server = start_server(home, db=db, kb=kb, extra=["--bots", "0"])
    yield server
    server.stop()


def present(db: Path) -> set[str]:
    """The agents whose consoles have said they are open."""
    with sqlite3.connect(db) as connection:
        return {row[0] for row in connection.execute("SELECT agent FROM presence")}


async def open_console(served: Served, name: str) -> None:
    """Signs in as `name`, opens the agent console and waits until it has drawn and said it
    is open (under its display name)."""
    response = httpx.post(
        served.url + "/signin",
        data={"name": name, "password": PASSWORD, "next": "/agent"},
        headers={"Origin": served.url},
    )
    assert response.status_code == 303 and response.headers["location"] == "/agent"
    cookie = response.cookies[ACCOUNT_COOKIE]
    url = served.url.replace("http", "ws", 1) + "/ws/agent?width=80&height=24"
    headers = {"Origin": served.url, "Cookie": f"{ACCOUNT_COOKIE}={cookie}"}
    async with aiohttp.ClientSession() as http, http.ws_connect(url, headers=headers) as ws:
        await first_output(ws)
        async with asyncio.timeout(30):
            while NAMES[name] not in present(served.db):
                await asyncio.sleep(0.05)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_the_console_starts_under_a_display_name_starting_with_a_dash(
    served: Served, name: str
) -> None:
    run_async(open_console(served, name))
    assert "expected one argument" not in "".join(served.output)
