"""An agent's terminal closed (SIGHUP: tmux's respawn-pane -k, an ssh connection dropped) or the
console told to stop (SIGTERM) ends its presence session as Ctrl+Q does. It stayed in the desk's
presence sessions until its last sighting was a minute old, and the agent's console opened again
at once said on Ctrl+Q "another of your consoles is still open" of the dead one. The claims stay as
they did (held, as a quit keeping them leaves them). The real command, in a terminal (a pty);
waits are on conditions, never fixed."""

from __future__ import annotations

import contextlib
import signal
import sqlite3
from pathlib import Path

import pytest

from chatbot.desk.models import State
from tests.tui.terminal_helpers import claimed_conversation, command_in_a_terminal, state_of


def sessions(db: Path) -> list[str]:
    """Ben's consoles the desk counts as open (by their sessions)."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        rows = connection.execute(
            "SELECT session FROM presence_sessions WHERE agent = 'ben'"
        ).fetchall()
    return [session for (session,) in rows]


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM])
def test_a_signal_ends_the_consoles_presence_session(
    tmp_path: Path, signum: signal.Signals
) -> None:
    db = tmp_path / "desk.sqlite3"
    conversation = claimed_conversation(db, "ben")
    command = ["agent", "--no-bot", "--agent", "ben", "--db", str(db)]
    with command_in_a_terminal(tmp_path, *command) as console:
        console.until(lambda: len(sessions(db)) == 1)  # The console is open, and says so.
        if signum == signal.SIGHUP:
            console.hang_up()  # The terminal goes first, as when tmux kills its pane.
        console.process.send_signal(signum)
        code = console.ended()

    assert code == 128 + signum  # Ended in order, with the shell's status.
    assert sessions(db) == []  # Closed, as a quit closes it: no other console of ben's is open.
    assert state_of(db, conversation) == (State.CLAIMED, "ben")  # Kept, as before.
