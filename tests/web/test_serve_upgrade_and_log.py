"""What an operator reads in serve's log, and what a browser session does, when things go wrong
under a running server:

- the code on disk is upgraded in place (`pip install -U`, `git pull`): the zygote's forks
  imported the new modules beside the old ones it had loaded, and every new session failed. The
  zygote now sees the change and forks no more; sessions start afresh, and the log says once
  that serve should be restarted;
- a session's process fails as it starts: its fork ended without a word (the log said only
  "Application failed to start"), and its page said everything sent was saved. The log now says
  why (the exception, with its traceback), and the page is told the session failed to start;
- the database is out while agents' consoles are open: the account checks logged a traceback
  per console every 15 s. One line when the outage starts, one when it ends."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import aiohttp
import pytest
from aiohttp import web

from chatbot.accounts.aio import AsyncAccounts
from chatbot.accounts.models import Account, Area, Role
from chatbot.config import WebSettings
from chatbot.store.interface import StoreError
from chatbot.web.server import CustomerDesk, HelpdeskServer, LiveSession, SessionSpec
from tests.web.conftest import make_site
from tests.web.harness import ROOT, run_async, start_server, wait_for

CHANGED = "the help desk's code changed on disk since serve started (chatbot/desk/"


async def open_chat(url: str) -> tuple[bool, str]:
    """A new customer's chat, as a browser opens it: whether its app drew anything, and why the
    server closed its websocket if it did not."""
    origin = {"Origin": url}
    jar = aiohttp.CookieJar(unsafe=True)  # Cookies for 127.0.0.1, as a browser keeps them.
    async with aiohttp.ClientSession(url, cookie_jar=jar) as browser:
        async with browser.get("/") as page:
            assert page.status == 200
        async with browser.ws_connect("/ws/chat?width=80&height=24", headers=origin) as ws:
            while True:
                message = await ws.receive(timeout=60)
                if message.type == aiohttp.WSMsgType.BINARY and len(message.data) > 10:
                    return True, ""
                if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                    return False, str(message.extra)


def test_sessions_start_after_an_upgrade_in_place_and_a_broken_one_says_why(
    tmp_path: Path,
) -> None:
    # serve runs a copy of the code, changed once it has started, as the tester did: a new name
    # in the desk's models, imported by a module the zygote had not loaded (chatbot.desk.aio).
    code = tmp_path / "code"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "chatbot", code / "chatbot", ignore=ignore)
    db, kb = make_site(tmp_path / "site")
    paths = [str(code), *filter(None, [os.environ.get("PYTHONPATH")])]
    served = start_server(tmp_path / "site", db=db, kb=kb,
                          environment={"PYTHONPATH": os.pathsep.join(paths)})  # fmt: skip
    try:
        models, aio = code / "chatbot/desk/models.py", code / "chatbot/desk/aio.py"
        models.write_text(models.read_text() + '\nUPGRADED = "in the new version only"\n')
        aio.write_text(aio.read_text() + "\nfrom chatbot.desk.models import UPGRADED  # noqa\n")

        for _ in range(2):
            drawn, reason = run_async(open_chat(served.url))
            assert drawn, f"the session did not start ({reason!r}):\n{''.join(served.output)}"
        assert "".join(served.output).count(CHANGED) == 1  # Said once, not per session.

        # An upgrade that is broken: the session's process fails as it starts.
        aio.write_text(aio.read_text() + '\nraise RuntimeError("a broken upgrade")\n')
        assert run_async(open_chat(served.url)) == (False, "failed to start")

        def logged() -> str | None:
            log = "".join(served.output)
            return log if "session 3 ended" in log else None

        log = wait_for(logged, what="the session's end in the log")
        assert (
            "session 3 (pid " in log and "failed to start: RuntimeError: a broken upgrade\n" in log
        )
        assert 'chatbot/desk/aio.py", line' in log  # Its traceback follows.
        assert "Application failed to start" not in log  # textual-serve's line, which said less.
    finally:
        served.stop()


FORK = textwrap.dedent(
    """
    import os, sys
    from chatbot.web import zygote

    def run_session(request, fds):
        if request["fail"] == "exception":
            raise ImportError("cannot import name 'UPGRADED' from 'chatbot.desk.models'")
        sys.exit(request["fail"])

    zygote.run_session = run_session
    for fail in ("exception", 3, "a one-line reason"):
        pid, pidfd = zygote.fork_session({"fail": fail}, [])
        os.close(pidfd)
        print("status", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
    """
)


def test_a_fork_that_fails_as_it_starts_says_why_on_its_stderr() -> None:
    """The fork's stderr is the session's, which the server logs: an exception there ended it
    at once (`os._exit`), before the interpreter could print it."""
    done = subprocess.run(
        [sys.executable, "-c", FORK], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["status 1", "status 3", "status 1"]
    assert "Traceback (most recent call last):" in done.stderr
    assert "ImportError: cannot import name 'UPGRADED'" in done.stderr
    assert done.stderr.rstrip().endswith("a one-line reason")  # sys.exit("...") as Python says it


class Outage:
    """The accounts, through a database that is out until `back`."""

    def __init__(self) -> None:
        self.out = True
        self.asked = 0

    async def account(self, name: str) -> Account | None:
        self.asked += 1
        if self.out:
            raise StoreError("cannot use accounts: terminating connection due to administrator")
        return AGENT


AGENT = Account(
    name="ana",
    display_name="Ana",
    role=Role.AGENT,
    session_epoch=1,
    created_at=datetime(2026, 1, 1, tzinfo=UTC),
)


class OpenSocket:
    closed = False

    async def close(self, **_: object) -> bool:
        self.closed = True
        return True


def checking(accounts: Outage, every_s: float = 15.0) -> tuple[HelpdeskServer, list[LiveSession]]:
    """A server (not started) with three agents' consoles open."""
    server = HelpdeskServer(
        settings=WebSettings(port=0, bots=0, session_check_s=every_s),
        accounts=cast(AsyncAccounts, accounts),
        desk=cast(CustomerDesk, None),
        child=lambda spec: [],
        environment={},
        secret=b"s" * 32,
        preload=False,
    )
    consoles = []
    for key in range(3):
        live = LiveSession("127.0.0.1", f"agent:{key}", cast(web.WebSocketResponse, OpenSocket()))
        live.spec = SessionSpec(Area.AGENT, account=AGENT)
        server.sessions[key] = live
        consoles.append(live)
    return server, consoles


async def outage_rounds(server: HelpdeskServer, accounts: Outage, consoles: int) -> None:
    """The server's checks, every 10 ms, through rounds of the outage and then after it."""
    checks = asyncio.create_task(server._check_accounts())
    try:
        async with asyncio.timeout(30):
            while accounts.asked < 3 * consoles:  # Three rounds at least, out.
                await asyncio.sleep(0.005)
            accounts.out = False
            back = accounts.asked
            while accounts.asked < back + 2 * consoles:  # Two rounds at least, back.
                await asyncio.sleep(0.005)
    finally:
        checks.cancel()


def test_a_database_outage_is_two_lines_in_the_log_however_many_consoles_are_open(
    caplog: pytest.LogCaptureFixture,
) -> None:
    accounts = Outage()
    server, consoles = checking(accounts, every_s=0.01)
    with caplog.at_level(logging.WARNING, logger="helpdesk.web"):
        run_async(outage_rounds(server, accounts, len(consoles)))
    said = [(record.getMessage(), record.exc_info) for record in caplog.records]
    assert said == [
        (
            "session checks: cannot use accounts: terminating connection due to administrator"
            " (retrying every 0.01 s)",
            None,
        ),
        ("session checks: back", None),
    ]
    assert not any(live.websocket.closed for live in consoles)


def test_a_round_of_checks_asks_an_unreachable_database_once() -> None:
    """Not once per open console: each call waits on the database (up to 15 s on PostgreSQL)."""
    accounts = Outage()
    server, _ = checking(accounts)
    run_async(server.check_accounts_once())
    assert accounts.asked == 1


def test_a_settings_warning_is_said_once_by_serve_not_by_every_session(tmp_path: Path) -> None:
    """Each session loaded the settings again and repeated their warnings, unlabelled, into
    serve's log: one typo, a line per session of a 200-session server."""
    db, kb = make_site(tmp_path / "site")
    served = start_server(tmp_path / "site", db=db, kb=kb,
                          environment={"HELPDESK_ENGINE": '{"kk": 3}'})  # fmt: skip
    try:
        for _ in range(2):
            drawn, reason = run_async(open_chat(served.url))
            assert drawn, reason
        log = "".join(served.output)
        # serve's own, and its bot worker's (a process of its own, started once).
        assert 1 <= log.count("unknown setting 'engine.kk' ignored") <= 2, log
        assert all(
            line.startswith("helpdesk: warning: ") or "engine.kk" not in line
            for line in log.splitlines()
        ), log
    finally:
        served.stop()


def test_health_says_503_while_the_server_shuts_down() -> None:
    """`/healthz` answered 200 while serve was closing, so a page's "Start again" took the
    dying server for the next one and landed on its "shutting down" page."""
    import json
    from types import SimpleNamespace

    for closing, status in ((False, 200), (True, 503)):

        async def reached() -> None:  # The database answers: no trouble.
            return None

        server = SimpleNamespace(closing=closing, _counted=lambda _area: [1, 2], refused={},
                                 database=SimpleNamespace(trouble=reached))  # fmt: skip
        response = run_async(HelpdeskServer.handle_health(server, None))  # type: ignore[arg-type]
        assert response.status == status
        assert json.loads(response.text or "") == {
            "ok": not closing,
            "closing": closing,
            "sessions": 2,
            "refused": {},
        } | ({"reason": "closing"} if closing else {})
