"""The terminal chat as the command builds it, on a state folder of the test's own, where it
keeps the conversation to resume: asking for a person in it, and opening it again with the words
left unsent."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from chatbot.cli.app import build_app
from chatbot.cli.main import build_parser
from chatbot.desk.models import State
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens import chat
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.tui.conftest import Q1
from tests.tui.helpers import flat, screen_text, signals_sent, type_text, wait_until

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


def status(panel: ChatPanel) -> str:
    """The line above the chat's box ("You are next", …)."""
    app = panel.app
    assert isinstance(app, HelpDeskApp)
    return flat(screen_text(app, panel.query_one("#chat-status")))


async def ask_for_a_person(pilot: Pilot[None], panel: ChatPanel) -> None:
    """Ask `Q1` in the chat, then Ctrl+T once it is a conversation (the desk may not have heard
    the Ctrl+T yet)."""
    panel.question.focus()
    await type_text(pilot, Q1)
    await pilot.press("enter")
    await wait_until(pilot, lambda: panel.conversation is not None, timeout=START_S)
    await pilot.press("ctrl+t")


async def next_in_line(pilot: Pilot[None], panel: ChatPanel) -> None:
    """`ask_for_a_person`, until the chat says the customer is next."""
    await ask_for_a_person(pilot, panel)
    await wait_until(pilot, lambda: "You are next" in status(panel), timeout=START_S)


def claimed(panel: ChatPanel) -> bool:
    return panel.conversation is not None and panel.conversation.state is State.CLAIMED


async def reopened_with(pilot: Pilot[None], app: HelpDeskApp, words: str) -> ChatPanel:
    """The chat opened again on a conversation a person holds, `words` (left unsent by the last
    run) put back in its box, and every typing signal sent by then."""
    panel = await chat_ready(pilot, app)
    await wait_until(pilot, lambda: panel.question.value == words, timeout=START_S)
    await wait_until(pilot, lambda: claimed(panel), timeout=START_S)
    await pilot.pause()  # The box's change, handled by now.
    await signals_sent(app)
    return panel
