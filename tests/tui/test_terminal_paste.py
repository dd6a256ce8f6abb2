"""A paste in a real terminal (a pty) holding colour codes reaches the question box as its
words, in order: Textual's parser ended the paste at the first escape and replayed the rest as
keys, so "abc \\e[1mdef\\e[0m ghi" became "^[1mdef^[0m ghiabc". The terminal driver cleans each
bracketed paste first, as `helpdesk serve` does a browser's."""

from __future__ import annotations

import fcntl
import os
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

from textual import events

from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.desk.models import Author
from chatbot.tui import create_app
from chatbot.tui.terminal_driver import PasteCleaningParser, TerminalDriver

COPIED = "abc \x1b[1mdef\x1b[0m ghi\x1b]0;PWNED\x07 end"
"""Words with a bold code and a window-title sequence, as copied from a terminal."""
PASTED = f"\x1b[200~{COPIED}\x1b[201~"


def test_the_parser_reads_a_paste_with_codes_as_one_paste_of_its_words() -> None:
    parser = PasteCleaningParser()
    # Cut inside the end marker: nothing to parse yet, and the input does not end.
    assert list(parser.feed(PASTED[:-3])) == []
    [paste] = list(parser.feed(PASTED[-3:]))
    assert isinstance(paste, events.Paste) and paste.text == "abc def ghi end"


def test_the_app_reads_a_terminal_through_the_cleaning_driver(tmp_path: Path) -> None:
    app = create_app(load_settings(store={"db": tmp_path / "db.sqlite3"}), mode="chat")
    assert app.driver_class is TerminalDriver


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


def test_a_paste_with_colour_codes_in_a_terminal_is_sent_as_its_words(tmp_path: Path) -> None:
    db = tmp_path / "helpdesk.sqlite3"
    with chat_in_a_terminal(tmp_path, "--db", str(db), "--no-bot") as chat:
        # The chat itself, not the first screen drawn while it loads: its suggestions' note (a
        # chat without a bot of its own says nothing of replay mode, which its bots may not be in).
        until(lambda: b"Questions to try" in chat.output, "the chat to be drawn")
        chat.type(PASTED.encode())
        chat.type(b"\r")
        desk = open_service(load_settings(store={"db": db}))
        try:
            until(lambda: bool(desk.conversations()), "the question to be stored")
            [conversation] = desk.conversations()
            [question] = [m for m in desk.messages(conversation.id) if m.author is Author.CUSTOMER]
        finally:
            desk.close()
        assert question.text == "abc def ghi end"
        chat.type(b"\x11")  # Ctrl+Q
        assert chat.process.wait(timeout=30) == 0


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
