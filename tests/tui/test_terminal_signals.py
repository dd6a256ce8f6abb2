"""A terminal closed under the app (tmux's kill-session, an ssh connection dropped: SIGHUP) or the
app told to stop (`kill`, a shutdown: SIGTERM) ends it as a quit does, without the quit question:
the app unmounts, so what the agent typed and did not send is kept for them, and their claims
stay as a quit keeping them leaves them. The process ended at once with 129 or 143 and kept
nothing. The real command, in a terminal (a pty); waits are on conditions, never fixed."""

from __future__ import annotations

import contextlib
import signal
import sqlite3
from pathlib import Path

import pytest

from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.desk.models import Author, State
from chatbot.drafts import drafts_for
from tests.tui.terminal_helpers import claimed_conversation, command_in_a_terminal, state_of

REPLY = "Your refund is on its way"


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


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM])
def test_a_signal_ends_the_agent_console_keeping_the_unsent_reply(
    tmp_path: Path, signum: signal.Signals, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "desk.sqlite3"
    conversation = claimed_conversation(db, "ana")
    command = ["agent", "--no-bot", "--agent", "ana", "--db", str(db),
               "--conversation", str(conversation)]  # fmt: skip
    with command_in_a_terminal(tmp_path, *command) as console:
        # The reply box has the focus once the claimed conversation shows: type into it, and
        # wait until the desk hears ana typing.
        console.until(lambda: shown(db, conversation))
        console.type(REPLY.encode())
        console.until(lambda: agent_typing(db, conversation))
        if signum == signal.SIGHUP:
            console.hang_up()  # The terminal goes first, as when tmux kills its session.
        console.process.send_signal(signum)
        code = console.ended()

    # The shell's convention for a process ended by a signal, as before: but ended in order.
    assert code == 128 + signum
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # Where the app kept them.
    folder = drafts_for(str(db))
    assert [f.read_text() for f in folder.glob("*.txt")] == [REPLY]
    # Kept, as a quit keeping them keeps them: nobody was asked to hand them back.
    assert state_of(db, conversation) == (State.CLAIMED, "ana")
