"""Sessions are forks of the preloaded zygote; if it dies, sessions still start, exec'd."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from playwright.sync_api import Browser

from tests.web.conftest import VIEWPORT
from tests.web.harness import Served, alive, children, command_line, wait_for


def parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def open_chat_session(browser: Browser, served: Served, before: int) -> int:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.goto(served.url + "/")
    page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
    sessions = wait_for(
        lambda: served.sessions() if len(served.sessions()) > before else [], what="the session"
    )
    return sessions[-1].pid  # The context stays open (so does the session) until the browser.


def test_sessions_fork_from_the_zygote_and_start_without_it(
    browser: Browser, fresh_server: Served
) -> None:
    zygotes = [
        pid for pid in children(fresh_server.process.pid)
        if "chatbot.web.zygote" in command_line(pid)
    ]  # fmt: skip
    assert len(zygotes) == 1
    forked = open_chat_session(browser, fresh_server, 0)
    assert parent(forked) == zygotes[0]
    assert "chatbot.web.zygote" in command_line(forked)  # A fork: the zygote's command line.

    os.kill(zygotes[0], signal.SIGKILL)
    wait_for(lambda: not alive(zygotes[0]), what="the zygote to die")
    started = open_chat_session(browser, fresh_server, 1)
    assert parent(started) == fresh_server.process.pid
    assert command_line(started)[-3:-2] == ["chat"]
    assert "chatbot.web.child" in command_line(started)
    assert alive(forked)  # The session forked earlier lives on without its zygote.
