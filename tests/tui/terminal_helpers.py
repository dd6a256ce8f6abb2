"""`python -m chatbot ...` in a real terminal (a pty): what it wrote, and what the terminal
shows once the app gave it back; the desk it runs on, as the test's process reads it."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.desk.models import State

LEAVE_SCREEN = "\x1b[?1049l"
"""Textual switches back from the alternate screen when it gives the terminal back."""
ESCAPE = re.compile(r"\x1b(\[[0-9;?<>=$ ]*[A-Za-z~]|[=>78])")


def run_in_terminal(arguments: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run `python -m chatbot ARGUMENTS` with a pty as its terminal (stdin, stdout and stderr,
    as in a shell); its exit code and everything it wrote."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "chatbot", *arguments],
        stdin=terminal, stdout=terminal, stderr=terminal, env=env, start_new_session=True,
    )  # fmt: skip
    os.close(terminal)
    output = bytearray()
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            try:
                chunk = os.read(controller, 65536)
            except OSError as error:  # EIO: the process closed its end of the terminal.
                if error.errno != errno.EIO:
                    raise
                break
            if not chunk:
                break
            output += chunk
        code = process.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(controller)
    return code, output.decode("utf-8", errors="replace")


def after_the_app(output: str) -> str:
    """What the terminal shows once the app gave it back: the text after it left the
    alternate screen, control sequences taken out."""
    return ESCAPE.sub("", output.rpartition(LEAVE_SCREEN)[2]).replace("\r\n", "\n")


@dataclass
class Terminal:
    """`helpdesk chat` running in a pty: what it drew so far, and its keyboard."""

    process: subprocess.Popen[bytes]
    controller: int
    output: bytearray

    def type(self, data: bytes) -> None:
        os.write(self.controller, data)


@contextmanager
def chat_in_a_terminal(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> (
    Iterator[Terminal]
):  # fmt: skip
    """`helpdesk chat ARGS` in a terminal of its own (a pty, 80x24), with the test's own settings
    folders and no developer settings; whatever still runs at the end is killed."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("HELPDESK_", "VALEN_"))}
    clean |= {
        "HELPDESK_CONFIG": str(tmp_path / "none.toml"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "TERM": "xterm-256color",
    }
    controller, terminal = pty_pair()
    process = subprocess.Popen(
        [sys.executable, "-m", "chatbot", "chat", *args],
        stdin=terminal, stdout=terminal, stderr=terminal, env=clean | (env or {}),
        start_new_session=True,
    )  # fmt: skip
    os.close(terminal)
    output = bytearray()
    reader = threading.Thread(target=read_all, args=(controller, output), daemon=True)
    reader.start()
    try:
        yield Terminal(process, controller, output)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(timeout=5)
        os.close(controller)


def pty_pair() -> tuple[int, int]:
    import pty

    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    return controller, terminal


def read_all(controller: int, output: bytearray) -> None:
    """Keep the terminal read, as a terminal would: a full pty would stop the app's writes."""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the app closed its end; EBADF: the test closed ours.
            return
        if not chunk:
            return
        output += chunk


def until(condition: object, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


COMMAND_START_S = 60.0
"""Generous: the process imports Textual and the desk, and the machine may be busy."""


@dataclass
class PolledTerminal:
    """A command running in a pty that the test reads while it waits (no thread of its own reads
    it), so that the test may close the terminal under the app: what it wrote, its keyboard."""

    process: subprocess.Popen[bytes]
    controller: int | None
    """None once the test closed the terminal (`hang_up`)."""
    output: bytearray = field(default_factory=bytearray)

    def drain(self) -> None:
        """Read what the app wrote: keep the terminal drained, or the app blocks writing."""
        if self.controller is not None:
            with contextlib.suppress(BlockingIOError, OSError):
                self.output += os.read(self.controller, 65536)

    def type(self, data: bytes) -> None:
        assert self.controller is not None, "the terminal is closed"
        os.write(self.controller, data)

    def until(self, condition: Callable[[], object], *, running: bool = True) -> None:
        """Wait until `condition` holds (`COMMAND_START_S` at most), the terminal drained
        meanwhile; while it does not, the app must still run (unless not `running`)."""
        deadline = time.monotonic() + COMMAND_START_S
        while not condition():
            if running:
                assert self.process.poll() is None, "the app ended early"
            assert time.monotonic() < deadline, "condition not met in time"
            self.drain()
            time.sleep(0.02)

    def ended(self) -> int:
        """Wait until the app ends, read what it wrote last; its exit code."""
        self.until(lambda: self.process.poll() is not None, running=False)
        self.drain()
        return self.process.wait()

    def hang_up(self) -> None:
        """Close the terminal, as tmux killing its pane does: the app's writes fail."""
        if self.controller is not None:
            os.close(self.controller)
            self.controller = None


@contextmanager
def command_in_a_terminal(
    tmp_path: Path, *arguments: str, size: tuple[int, int] = (120, 36)
) -> Iterator[PolledTerminal]:
    """`python -m chatbot ARGUMENTS` in a terminal of its own (a pty of `size`, columns and rows),
    with the test's own settings and state folders and no developer settings; whatever still runs
    at the end is killed, and the terminal closed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HELPDESK_", "VALEN_"))}
    env |= {
        "HELPDESK_CONFIG": str(tmp_path / "none.toml"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "TERM": "xterm-256color",
    }
    columns, rows = size
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "chatbot", *arguments],
        stdin=terminal, stdout=terminal, stderr=terminal, env=env, start_new_session=True,
    )  # fmt: skip
    os.close(terminal)
    os.set_blocking(controller, False)
    running = PolledTerminal(process, controller)
    try:
        yield running
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        running.hang_up()


def claimed_conversation(db: Path, agent: str) -> int:
    """A customer asked for a person, and `agent` claimed them (the test's process, the real
    clock), on the database `db` a command is then run on."""
    desk = open_service(load_settings(store={"db": db}))
    try:
        conversation = desk.start_conversation().id
        desk.talk_to_person(conversation)
        desk.ask(conversation, "Where is my refund?")
        desk.claim(conversation, agent=agent)
        return conversation
    finally:
        desk.close()


def state_of(db: Path, conversation: int) -> tuple[State, str | None]:
    """The conversation's state and agent on the database `db`, as the test's process reads it."""
    desk = open_service(load_settings(store={"db": db}))
    try:
        found = desk.conversation(conversation)
        return found.state, found.agent
    finally:
        desk.close()
