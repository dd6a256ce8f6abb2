"""`helpdesk users list` in columns, as `conversations list` has them: aligned whatever the
names' lengths, and on a terminal under a header row (a pipe's lines are the accounts alone).
They were `alex  admin  Alex` and `christina  editor  Chris`, no two alike."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.cli_run import run_cli


@pytest.fixture
def db(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    path = str(tmp_path / "helpdesk.sqlite3")
    for name, role, shown in (("alex", "admin", "Alex"), ("christina", "editor", "克里斯 Li"),
                              ("ben", "agent", "ben")):  # fmt: skip
        monkeypatch.setattr("sys.stdin", io.StringIO("correct horse battery\n"))
        code, _, err = run_cli(capsys, "users", "add", name, "--role", role, "--display-name",
                               shown, "--password-stdin", "--db", path)  # fmt: skip
        assert code == 0, err
    return path


def test_users_list_on_a_terminal_has_a_header_and_aligned_columns(
    db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run_cli(capsys, "users", "list", "--db", db)
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "name       role    display name",
        "alex       admin   Alex",
        "ben        agent   ben",
        "christina  editor  克里斯 Li",
    ]


def test_users_list_on_a_pipe_is_aligned_without_a_header(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "users", "list", "--db", db)
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "alex       admin   Alex",
        "ben        agent   ben",
        "christina  editor  克里斯 Li",
    ]


def test_users_list_on_a_narrow_terminal_cuts_the_display_name(
    db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "24")
    code, out, _ = run_cli(capsys, "users", "list", "--db", db)
    assert code == 0
    assert out.splitlines()[-1] == "christina  editor  克里…"  # 24 cells
