"""A pipe is a pipe whatever $COLUMNS says: `conversations list` and `users list` piped are their
rows alone, one a line, with COLUMNS set or not (`shutil.get_terminal_size` reads $COLUMNS before
it looks at stdout: `COLUMNS=200 ... | wc -l` counted a header row, `COLUMNS=40 ... | cat` cut
rows). On a terminal $COLUMNS still sets the width. Processes of their own, as a shell runs them."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.assembly import open_service
from chatbot.config import load_settings
from tests.cli_run import run_cli
from tests.conftest import ROOT
from tests.terminal import read_until

LONG = "my bike's lock will not open at the station by the river, what do I do? " * 2


@pytest.fixture
def db(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """Two conversations waiting for a person, and an account with a long display name."""
    path = tmp_path / "helpdesk.sqlite3"
    desk = open_service(load_settings(store={"db": path}))
    try:
        for question in ("Where is my bike?", LONG):
            desk.talk_to_person(desk.ask(None, question).conversation.id)
    finally:
        desk.close()
    monkeypatch.setattr("sys.stdin", io.StringIO("correct horse\n"))
    added = run_cli(capsys, "users", "add", "gina", "--role", "agent", "--db", str(path),
                    "--display-name", "Gina " + "Longname " * 6, "--password-stdin")  # fmt: skip
    assert added[0] == 0, added
    return str(path)


def piped(columns: str | None, *argv: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    result = subprocess.run(
        [sys.executable, "-m", "chatbot", *argv], cwd=ROOT, capture_output=True, text=True,
        env=env, timeout=120, check=True,
    )  # fmt: skip
    return result.stdout.splitlines()


@pytest.mark.parametrize(
    ("argv", "rows"), [(["conversations", "list"], 2), (["users", "list"], 1)], ids=str
)
def test_piped_output_is_the_rows_alone_whatever_columns_says(
    db: str, argv: list[str], rows: int
) -> None:
    alone = piped(None, *argv, "--db", db)
    assert len(alone) == rows and "state" not in alone[0] and "role" not in alone[0]
    assert piped("200", *argv, "--db", db) == alone  # No header row.
    assert piped("40", *argv, "--db", db) == alone  # Nothing cut or wrapped.


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a pty")
def test_on_a_terminal_columns_still_sets_the_width(db: str) -> None:
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "chatbot", "users", "list", "--db", db], cwd=ROOT,
        stdin=subprocess.DEVNULL, stdout=terminal, stderr=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "30"},
    )  # fmt: skip
    os.close(terminal)
    try:
        shown = read_until(controller, lambda _: False).decode().splitlines()
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(controller)
    assert shown[0].split() == ["name", "role", "display", "name"]  # The header, on a terminal.
    assert shown[1].startswith("gina  agent  Gina") and shown[1].endswith("…")
    assert len(shown[1]) <= 30
