"""SIGTERM: every browser is told its session ended, every app process and bot worker quits,
nothing typed is lost, and `helpdesk serve` exits 0."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from playwright.sync_api import BrowserContext

from tests.web.harness import (
    Served,
    alive,
    children,
    command_line,
    parent,
    transcript,
    type_into_input,
    wait_for,
)
from tests.web.helpers import conversations_opened, open_chat


def test_sigterm_tells_the_browsers_ends_the_processes_and_loses_nothing(
    context: BrowserContext, fresh_server: Served, artifacts: Path
) -> None:
    page = open_chat(context, fresh_server)
    conversation = wait_for(lambda: conversations_opened(fresh_server), what="the chat")[0]
    agent_page = context.new_page()
    agent_page.goto(fresh_server.url + "/agent")  # A sign-in page: no process of its own.
    type_into_input(page, "Is the app down?")
    wait_for(
        lambda: ("customer", "Is the app down?", None) in transcript(fresh_server.db, conversation),
        what="the question in the store",
    )
    processes = [session.pid for session in fresh_server.sessions()]
    assert len(processes) == 1 and alive(processes[0])
    bots = [
        pid for pid in children(fresh_server.process.pid)
        if command_line(pid)[-2:] == ["chatbot", "bot"]
    ]  # fmt: skip
    assert len(bots) == 1

    assert fresh_server.stop() == 0
    page.wait_for_selector("body.-closed", state="attached", timeout=30_000)
    assert page.locator(".closed-dialog").is_visible()
    why = page.locator(".closed-dialog .why")
    why.wait_for(state="visible", timeout=10_000)
    assert why.inner_text() == (
        "The help desk is restarting: this page starts again by itself once it is back."
    )
    page.screenshot(path=artifacts / "shutdown.png")
    assert not any(alive(pid) for pid in processes + bots)
    output = "".join(fresh_server.output)
    assert "stopping; ending 1 browser session\n" in output and "stopped" in output
    assert fresh_server.sessions() == []  # Each one reported as ended.
    assert ("customer", "Is the app down?", None) in transcript(fresh_server.db, conversation)


def test_a_server_killed_outright_leaves_no_process_behind(
    context: BrowserContext, fresh_server: Served
) -> None:
    """`kill -9` gives the server no time to end anything: its zygote, its bot worker and the
    sessions' processes (one forked, one exec'd once the zygote is gone) ran on for good, the
    sessions reading the database and the bot taking questions."""
    open_chat(context, fresh_server)
    wait_for(lambda: conversations_opened(fresh_server), what="the chat")
    [zygote] = [  # Its forks, the sessions, have its command line too.
        pid for pid in children(fresh_server.process.pid)
        if "chatbot.web.zygote" in command_line(pid) and parent(pid) == fresh_server.process.pid
    ]  # fmt: skip
    os.kill(zygote, signal.SIGKILL)  # The next session is exec'd by the server itself.
    wait_for(lambda: not alive(zygote), what="the zygote to die")
    open_chat(context, fresh_server)
    wait_for(lambda: len(fresh_server.sessions()) == 2, what="the second session")
    left = children(fresh_server.process.pid) + [s.pid for s in fresh_server.sessions()]
    bots = [pid for pid in left if command_line(pid)[-2:] == ["chatbot", "bot"]]
    assert len(bots) == 1 and len(set(left)) >= 3
    fresh_server.process.kill()
    fresh_server.process.wait()
    wait_for(lambda: not any(alive(pid) for pid in left), what="every process to end")
