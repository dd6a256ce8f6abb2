"""An agent's terminal closed (SIGHUP: tmux's respawn-pane -k, an ssh connection dropped) or the
console told to stop (SIGTERM) ends its presence session as Ctrl+Q does. It stayed in the desk's
presence sessions until its last sighting was a minute old, and the agent's console opened again
at once said on Ctrl+Q "another of your consoles is still open" of the dead one. The claims stay as
they did (held, as a quit keeping them leaves them). The real command, in a terminal (a pty);
waits are on conditions, never fixed."""

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
from chatbot.desk.models import State

START_S = 60.0
"""Generous: the process imports Textual and the desk, and the machine may be busy."""


def claimed_by_ben(db: Path) -> int:
    desk = open_service(load_settings(store={"db": db}))
    try:
        conversation = desk.start_conversation().id
        desk.talk_to_person(conversation)
        desk.ask(conversation, "Where is my refund?")
        desk.claim(conversation, agent="ben")
        return conversation
    finally:
        desk.close()


def sessions(db: Path) -> list[str]:
    """Ben's consoles the desk counts as open (by their sessions)."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        rows = connection.execute(
            "SELECT session FROM presence_sessions WHERE agent = 'ben'"
        ).fetchall()
    return [session for (session,) in rows]


def state_of(db: Path, conversation: int) -> tuple[State, str | None]:
    desk = open_service(load_settings(store={"db": db}))
    try:
        found = desk.conversation(conversation)
        return found.state, found.agent
    finally:
        desk.close()


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM])
def test_a_signal_ends_the_consoles_presence_session(
    tmp_path: Path, signum: signal.Signals
) -> None:
    db = tmp_path / "desk.sqlite3"
    conversation = claimed_by_ben(db)
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
    command = [sys.executable, "-m", "chatbot", "agent", "--no-bot", "--agent", "ben",
               "--db", str(db)]  # fmt: skip
    process = subprocess.Popen(
        command, stdin=terminal, stdout=terminal, stderr=terminal, env=env, start_new_session=True
    )
    os.close(terminal)
    os.set_blocking(controller, False)
    open_controller = True

    def drain() -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.read(controller, 65536)  # Keep the terminal drained, or the app blocks writing.

    def until(condition: Callable[[], object], *, running: bool = True) -> None:
        deadline = time.monotonic() + START_S
        while not condition():
            if running:
                assert process.poll() is None, "the app ended early"
            assert time.monotonic() < deadline, "condition not met in time"
            if open_controller:
                drain()
            time.sleep(0.02)

    try:
        until(lambda: len(sessions(db)) == 1)  # The console is open, and says so.
        if signum == signal.SIGHUP:
            # The terminal goes first, as when tmux kills its pane: the app's writes fail.
            os.close(controller)
            open_controller = False
        process.send_signal(signum)
        until(lambda: process.poll() is not None, running=False)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        if open_controller:
            os.close(controller)

    assert process.returncode == 128 + signum  # Ended in order, with the shell's status.
    assert sessions(db) == []  # Closed, as a quit closes it: no other console of ben's is open.
    assert state_of(db, conversation) == (State.CLAIMED, "ben")  # Kept, as before.
