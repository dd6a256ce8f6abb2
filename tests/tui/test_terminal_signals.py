"""A terminal closed under the app (tmux's kill-session, an ssh connection dropped: SIGHUP) or the
app told to stop (`kill`, a shutdown: SIGTERM) ends it as a quit does, without the quit question:
the app unmounts, so what the agent typed and did not send is kept for them, and their claims
stay as a quit keeping them leaves them. The process ended at once with 129 or 143 and kept
nothing. The real command, in a terminal (a pty); waits are on conditions, never fixed."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import signal
import sqlite3
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.desk.models import Author, State
from chatbot.drafts import drafts_for

START_S = 60.0
"""Generous: the process imports Textual and the desk, and the machine may be busy."""
REPLY = "Your refund is on its way"


def claimed_conversation(db: Path) -> int:
    """A customer asked for a person, and ana claimed them (another process, the real clock)."""
    desk = open_service(load_settings(store={"db": db}))
    try:
        conversation = desk.start_conversation().id
        desk.talk_to_person(conversation)
        desk.ask(conversation, "Where is my refund?")
        desk.claim(conversation, agent="ana")
        return conversation
    finally:
        desk.close()


def shown(db: Path, conversation: int) -> bool:
    """The console shows the conversation: it has marked it read for ana (after focusing the
    reply box of her claim)."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        return bool(
            connection.execute(
                "SELECT 1 FROM read_markers WHERE conversation_id = ? AND agent = 'ana'",
                (conversation,),
            ).fetchone()
        )


def agent_typing(db: Path, conversation: int) -> bool:
    """The console has told the desk that ana is typing: her words are in its reply box."""
    desk = open_service(load_settings(store={"db": db}))
    try:
        return Author.AGENT in desk.typing(conversation)
    finally:
        desk.close()


def state_of(db: Path, conversation: int) -> tuple[State, str | None]:
    desk = open_service(load_settings(store={"db": db}))
    try:
        found = desk.conversation(conversation)
        return found.state, found.agent
    finally:
        desk.close()


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM])
def test_a_signal_ends_the_agent_console_keeping_the_unsent_reply(
    tmp_path: Path, signum: signal.Signals, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "desk.sqlite3"
    conversation = claimed_conversation(db)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HELPDESK_", "VALEN_"))}
    env |= {
        "HELPDESK_CONFIG": str(tmp_path / "none.toml"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "TERM": "xterm-256color",
    }
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
    command = [sys.executable, "-m", "chatbot", "agent", "--no-bot", "--agent", "ana",
               "--db", str(db), "--conversation", str(conversation)]  # fmt: skip
    process = subprocess.Popen(
        command, stdin=terminal, stdout=terminal, stderr=terminal, env=env, start_new_session=True
    )
    os.close(terminal)
    os.set_blocking(controller, False)
    open_controller = True

    def drain() -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.read(controller, 65536)  # Keep the terminal drained, or the app blocks writing.

    def until(condition: Callable[[], object]) -> None:
        deadline = time.monotonic() + START_S
        while not condition():
            assert process.poll() is None, "the app ended early"
            assert time.monotonic() < deadline, "condition not met in time"
            if open_controller:
                drain()
            time.sleep(0.02)

    try:
        # The reply box has the focus once the claimed conversation shows: type into it, and
        # wait until the desk hears ana typing.
        until(lambda: shown(db, conversation))
        os.write(controller, REPLY.encode())
        until(lambda: agent_typing(db, conversation))
        if signum == signal.SIGHUP:
            # The terminal goes first, as when tmux kills its session: the app's writes fail.
            os.close(controller)
            open_controller = False
        process.send_signal(signum)
        deadline = time.monotonic() + START_S
        while process.poll() is None:
            assert time.monotonic() < deadline, "the app did not end"
            if open_controller:
                drain()
            time.sleep(0.02)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        if open_controller:
            os.close(controller)

    # The shell's convention for a process ended by a signal, as before: but ended in order.
    assert process.returncode == 128 + signum
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # Where the app kept them.
    folder = drafts_for(str(db))
    assert [f.read_text() for f in folder.glob("*.txt")] == [REPLY]
    # Kept, as a quit keeping them keeps them: nobody was asked to hand them back.
    assert state_of(db, conversation) == (State.CLAIMED, "ana")
