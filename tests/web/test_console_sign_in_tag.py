"""A browser's console is told which sign-in it was opened with.

Signing out in one tab ends the browser's other tabs too (`handle_signout`: every session of the
cookie), yet the sign-out dialog counted them as consoles still open, keeping the claims with one
that was about to end (tests/tui/test_sign_out_claims.py for the app). Now the server gives
each agent's or editor's session a tag derived from the cookie (never the cookie), and its app's
presence names the session after it, so signing out can leave that sign-in's consoles out. The
server runs in the test's process; the console is the real app, in a process of its own."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from chatbot.web.server import HelpdeskServer
from tests.web.harness import run_async
from tests.web.server_helpers import Clock, agent_console, here


def presence(db: Path) -> list[str]:
    with sqlite3.connect(db) as connection:
        return [row[0] for row in connection.execute("SELECT session FROM presence_sessions")]


async def open_console(tmp_path: Path) -> tuple[str, list[str]]:
    """Signs in as an agent and opens the console; returns the cookie and the sessions the
    console said it is open under."""
    server, accounts = here(tmp_path, Clock())
    port = await server.start()
    try:
        async with agent_console(port) as (morsel, _):
            cookie = morsel.value
            db = tmp_path / "home" / "helpdesk.sqlite3"
            async with asyncio.timeout(30):
                while not (sessions := presence(db)):
                    await asyncio.sleep(0.05)
    finally:
        await server.shutdown()
        accounts.close()
    return cookie, sessions


def test_a_browsers_console_is_open_under_its_sign_in(tmp_path: Path) -> None:
    cookie, sessions = run_async(open_console(tmp_path))
    tag = HelpdeskServer.sign_in_tag(cookie)
    assert len(sessions) == 1 and sessions[0].startswith(f"{tag}."), (tag, sessions)
    assert cookie not in sessions[0] and len(tag) == 16
    # The same for every session of that cookie, whichever its area; another cookie's differs.
    assert HelpdeskServer.sign_in_tag(cookie) == tag != HelpdeskServer.sign_in_tag(cookie + "x")
