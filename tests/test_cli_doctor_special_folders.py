"""`helpdesk doctor` on a SQLite path in a folder nothing can be made in (/proc, /sys): the
permission bits say root may write there, but the first start fails ("cannot create database").
Doctor says so, exit status 2, as `bot` would fail; where the first start can make the file,
doctor still approves and leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_run import run_cli

CANNOT = "no database there, and the first start cannot make one"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/proc/y.db", "cannot make a file in /proc: "),
        ("/sys/y.db", "cannot make a file in /sys: "),
        ("/proc/qa2/deeper/y.db", "cannot make a folder in /proc: "),
    ],
)
def test_doctor_refuses_a_folder_the_first_start_cannot_make_the_file_in(
    path: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "doctor", "--db", path)
    assert (code, out) == (2, "")
    assert err.startswith(f"helpdesk: error: {path}: {CANNOT}: {reason}"), err
    assert err.count("\n") == 1
    # The first start agrees: it cannot make the file there either.
    code, _, err = run_cli(capsys, "users", "add", "ana", "--role", "agent", "--db", path)
    assert code == 2 and "cannot create" in err, err


def test_doctor_approves_a_folder_it_can_make_the_file_in_and_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "place"
    folder.mkdir()
    for path in (folder / "y.db", folder / "sub" / "y.db"):
        code, out, err = run_cli(capsys, "doctor", "--db", str(path))
        assert (code, err) == (0, ""), err
        assert "on first start" in " ".join(out.split())
        assert list(folder.iterdir()) == []
