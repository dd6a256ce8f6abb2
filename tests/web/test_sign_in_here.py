"""Sign-in, with the server in the test's process (its clock injected, its log captured):

- an agent's open console ends when their sign-in does: the page could not be opened again after
  `session_hours`, and an open one went on working as the account until reloaded. The sign-in
  runs out when the test moves the clock, not after hours (or seconds) of waiting; the console is
  the real app, in a process of its own, behind a real websocket;
- a failed sign-in's log line names the account only if there is one: a password typed into the
  name field was written to the server's log."""

from __future__ import annotations

import logging
from pathlib import Path

import aiohttp
import pytest

from tests.web.harness import run_async
from tests.web.server_helpers import HOURS, Clock, here, open_console_then_run_out


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
