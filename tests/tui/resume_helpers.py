"""The terminal chat as the command builds it, on a state folder of the test's own, where it
keeps the conversation to resume."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from chatbot.cli.app import build_app
from chatbot.cli.main import build_parser
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens import chat
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.tui.helpers import wait_until

SIZE = (60, 20)
"""The tester's terminal."""
START_S = 30.0
"""The settings, the desk and the panels load in a thread once the first screen is up."""


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's state directory, the test's own."""
    folder = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    monkeypatch.setattr(chat, "SAVE_DRAFT_S", 0.05)
    return folder


def terminal_app(*arguments: str, db: Path) -> HelpDeskApp:
    """The app as the command builds it: `helpdesk ARGUMENTS --db DB`."""
    argv = [*arguments, "--no-bot", "--db", str(db)]
    return build_app(
        build_parser(arguments[0] if arguments else "").parse_args(argv), keep_drafts=True
    )


async def chat_ready(pilot: Pilot[None], app: HelpDeskApp) -> ChatPanel:
    # Mounted with its box: a panel just added has no children yet.
    await wait_until(pilot, lambda: bool(app.screen.query("ChatPanel #question")), timeout=START_S)
    return app.screen.query_one(ChatPanel)
