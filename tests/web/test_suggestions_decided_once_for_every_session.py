"""`helpdesk serve` decides the customers' suggested questions in one process, started by its
zygote, for every session: each customer's session built an engine of the whole knowledge base
for five questions (some 75 MB a session at 2,000 passages of ~1.5 KB). An edit of the knowledge
base still reaches the marks in a customer's open page."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Browser, BrowserContext

from chatbot.web.zygote import SUGGESTIONS_FILE
from tests.tui.conftest import Q1, Q2, Q3
from tests.tui.suggestions_helpers import edit
from tests.web.conftest import VIEWPORT
from tests.web.harness import (
    Served,
    children,
    command_line,
    parent,
    screenshot_changes,
    settled,
    wait_for,
)
from tests.web.helpers import open_chat


def verdicts(path: Path) -> dict[str, bool] | None:
    try:
        answered = json.loads(path.read_text())["answered"]
    except (OSError, ValueError, KeyError):
        return None
    return dict(answered)


def test_one_process_decides_every_customers_suggestions(
    browser: Browser, context: BrowserContext, fresh_server: Served
) -> None:
    first = open_chat(context, fresh_server)
    other = browser.new_context(viewport=VIEWPORT)
    try:
        open_chat(other, fresh_server)
        sessions = wait_for(lambda: s if len(s := fresh_server.sessions()) == 2 else None,
                            what="both sessions")  # fmt: skip
        [zygote] = {parent(session.pid) for session in sessions}
        deciders = [
            pid for pid in children(fresh_server.process.pid)
            if "chatbot.engine.suggestions" in command_line(pid)
        ]  # fmt: skip
        assert len(deciders) == 1 and parent(deciders[0]) == zygote
        # Its file, beside the zygote's socket, which every session reads.
        path = Path(command_line(zygote)[-1]).with_name(SUGGESTIONS_FILE)
        wait_for(lambda: verdicts(path) == {Q1: True, Q2: True, Q3: False}, what="the verdicts")

        before = settled(first)
        edit(fresh_server.kb, "Write to support about double charges.")  # Q1: a person replies.
        wait_for(lambda: verdicts(path) == {Q1: False, Q2: True, Q3: False}, what="Q1 again")
        screenshot_changes(first, before, what="the page to mark Q1 for a person")
    finally:
        other.close()
