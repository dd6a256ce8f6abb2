"""`helpdesk users list` reads a database it cannot write (a backup in a folder this user cannot
write, a read-only mount), as the conversation commands do: opening it migrated, which failed
with "attempt to write a readonly database". The commands that change accounts still need to
write it, and say so."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.cli_run import run_cli
from tests.readonly import read_only


@pytest.fixture
def db(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """One account, in a database closed since: in WAL mode, with no `-wal` or `-shm` left."""
    path = tmp_path / "backup" / "helpdesk.sqlite3"
    monkeypatch.setattr("sys.stdin", io.StringIO("correct horse battery\n"))
    code, _, err = run_cli(
        capsys, "users", "add", "ana", "--role", "agent", "--password-stdin", "--db", str(path)
    )
    assert code == 0, err
    assert sorted(p.name for p in path.parent.iterdir()) == ["helpdesk.sqlite3"]
    return path


def test_users_list_reads_a_read_only_folder(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with read_only(db.parent):
        code, out, err = run_cli(capsys, "users", "list", "--db", str(db))
        assert sorted(p.name for p in db.parent.iterdir()) == ["helpdesk.sqlite3"]
    assert (code, err) == (0, "")
    assert out.split() == ["ana", "agent", "ana"]


def test_changing_an_account_still_needs_to_write(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with read_only(db.parent):
        code, out, err = run_cli(capsys, "users", "rm", "ana", "--db", str(db))
    assert (code, out) == (2, "")
    assert err.startswith("helpdesk: error: ") and err.count("\n") == 1, err
    code, out, _ = run_cli(capsys, "users", "list", "--db", str(db))
    assert out.split() == ["ana", "agent", "ana"]
