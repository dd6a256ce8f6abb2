"""`python -m chatbot ...` in a real terminal (a pty): what it wrote, and what the terminal
shows once the app gave it back."""

from __future__ import annotations

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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

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
