"""`--password-stdin` reads the password as UTF-8 whatever the locale's encoding: under
`PYTHONIOENCODING=ascii` (or a Latin-1 locale) a UTF-8 password was refused as "not valid UTF-8",
and bytes that are not UTF-8 must still be. Processes of their own: the encoding is Python's at
start-up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.accounts.helpers import authenticates
from tests.conftest import ROOT

PASSWORD = "pässwort-über-alles"


def users_add(db: Path, encoding: str, stdin: bytes) -> tuple[int, str]:
    result = subprocess.run(
        [sys.executable, "-m", "chatbot", "users", "add", "gina", "--role", "agent",
         "--password-stdin", "--db", str(db)],
        cwd=ROOT, input=stdin, capture_output=True, timeout=120,
        env={**os.environ, "PYTHONIOENCODING": encoding},
    )  # fmt: skip
    return result.returncode, result.stderr.decode(encoding, "replace")


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "utf-8"])
def test_a_utf8_password_on_stdin_is_taken_in_any_locale(tmp_path: Path, encoding: str) -> None:
    db = tmp_path / "helpdesk.sqlite3"
    code, err = users_add(db, encoding, (PASSWORD + "\n").encode())
    assert (code, err) == (0, "")
    assert authenticates(db, "gina", PASSWORD)


def test_bytes_that_are_not_utf8_are_still_refused_in_an_ascii_locale(tmp_path: Path) -> None:
    db = tmp_path / "helpdesk.sqlite3"
    code, err = users_add(db, "ascii", b"p\xe4sswort-lang-genug\n")
    assert (code, err) == (2, "helpdesk: error: password is not valid UTF-8\n")
    assert not db.exists() or not authenticates(db, "gina", "p\xe4sswort-lang-genug")
