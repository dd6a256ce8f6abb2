"""Ctrl+D or Ctrl+C at a password prompt (`users add`, `users passwd`): the terminal of a process
of its own, a pty it has as controlling terminal, so `getpass` reads /dev/tty as it does for a
person. Ctrl+D (the end of input) was an EOFError traceback; Ctrl+C exited 130 with the prompt's
line left open, the shell's prompt going on after "Password: "."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from chatbot.assembly import open_accounts
from chatbot.config import load_settings
from chatbot.store.sqlite import SQLiteStore
from tests.accounts.helpers import authenticates
from tests.cli_run import run_cli
from tests.terminal import read_until

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="a pty as controlling terminal"
)

PASSWORD = "correct horse"
CTRL_C, CTRL_D = b"\x03", b"\x04"
SAID = "\nhelpdesk: error: no password given for {!r}; nothing changed\n"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "helpdesk.sqlite3"
    SQLiteStore.open(path).close()
    monkeypatch.setenv("HELPDESK_DB", str(path))  # The processes started inherit it.
    return path


def ending(prompt: bytes) -> Callable[[bytes], bool]:
    return lambda shown: shown.endswith(prompt)


def typed(argv: list[str], *keys: tuple[bytes, bytes]) -> tuple[int, str]:
    """`helpdesk ARGV` on a terminal: for each (prompt, key), waits until `prompt` shows, then
    types `key`. Returns the exit status and what the terminal showed after the last prompt
    (line ends as the terminal writes them, "\\r\\n", made "\\n")."""
    controller, terminal = pty.openpty()
    start = ("import fcntl, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
             "from chatbot.cli.main import main; sys.exit(main(sys.argv[1:]))")  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-c", start, *argv],
        stdin=terminal, stdout=terminal, stderr=terminal, start_new_session=True,
    )  # fmt: skip
    os.close(terminal)
    try:
        for prompt, key in keys:
            assert read_until(controller, ending(prompt)).endswith(prompt)
            os.write(controller, key)
        shown = read_until(controller, lambda _: False).decode("utf-8", errors="replace")
        code = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(controller)
    return code, shown.replace("\r\n", "\n")


def accounts(db: Path) -> list[str]:
    service = open_accounts(load_settings(store={"db": db}))
    try:
        return [account.name for account in service.accounts()]
    finally:
        service.close()


def test_ctrl_d_at_the_first_prompt_is_one_line_and_adds_nothing(db: Path) -> None:
    code, shown = typed(["users", "add", "gina", "--role", "agent"], (b"Password: ", CTRL_D))
    assert (code, shown) == (2, SAID.format("gina"))
    assert accounts(db) == []


def test_ctrl_d_at_the_second_prompt_changes_no_password(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{PASSWORD}\n"))
    assert run_cli(capsys, "users", "add", "alex", "--role", "agent", "--password-stdin")[0] == 0
    code, shown = typed(
        ["users", "passwd", "alex"],
        (b"Password: ", b"another long one\n"),
        (b"Password again: ", CTRL_D),
    )
    assert (code, shown) == (2, SAID.format("alex"))
    assert authenticates(db, "alex", PASSWORD)


def test_ctrl_c_at_the_prompt_ends_its_line(db: Path) -> None:
    code, shown = typed(["users", "add", "gina", "--role", "agent"], (b"Password: ", CTRL_C))
    assert (code, shown) == (130, "\n")  # The prompt's line ended; nothing else said.
    assert accounts(db) == []
