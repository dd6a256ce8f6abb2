"""`helpdesk users ...` as a person runs it: a real process, a real database file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def helpdesk(*args: str, db: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HELPDESK_DB": str(db)}
    return subprocess.run(
        [sys.executable, "-m", "chatbot", "users", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "helpdesk.sqlite3"


def test_add_list_passwd_rm(db: Path) -> None:
    added = helpdesk("add", "Ana", "--role", "admin", "--display-name", "Ana P.",
                     "--password-stdin", db=db, stdin="correct horse\n")  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == "added ana  admin  Ana P."
    assert "correct horse" not in added.stdout + added.stderr
    listed = helpdesk("list", db=db)
    assert listed.stdout.splitlines() == ["ana  admin  Ana P."]
    changed = helpdesk("passwd", "ana", "--password-stdin", db=db, stdin="battery staple\n")
    assert changed.returncode == 0 and "sessions have ended" in changed.stdout
    removed = helpdesk("rm", "ana", db=db)
    assert removed.returncode == 0
    assert helpdesk("list", db=db).stdout == ""


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["add", "ana", "--role", "agent"], "", "no terminal to ask for the password on"),
        (["add", "ana", "--role", "agent", "--password-stdin"], "", "no password on stdin"),
        (["add", "ana", "--role", "agent", "--password-stdin"], "short\n", "shorter than 8"),
        (["add", "ana", "--role", "boss", "--password-stdin"], "x\n", "invalid choice"),
        (["rm", "nobody"], "", "no account is named 'nobody'"),
        (["edit", "ana", "--display-name", "A\x07"], "", "control character (\\x07)"),
        (["edit", "ana", "--role", "agent"], "", "no account is named 'ana'"),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    db: Path, args: list[str], stdin: str, message: str
) -> None:
    result = helpdesk(*args, db=db, stdin=stdin)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) <= 2
    assert "Traceback" not in result.stderr
