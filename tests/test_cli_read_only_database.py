"""The commands that only read work on a database they cannot write: a backup in a folder this
user cannot write, a read-only mount. They once failed with "cannot read database: attempt to
write a readonly database" (SQLite could not make the `-shm` file a database in WAL mode is read
through)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.assembly import open_service
from chatbot.cli.main import main
from chatbot.config import load_settings
from tests.readonly import read_only
from tests.store.conftest import FakeClock


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """One waiting conversation, in a database closed since: in WAL mode, with no `-wal` or
    `-shm` left beside it (the last connection to close folds the log into the file)."""
    folder = tmp_path / "backup"
    path = folder / "helpdesk.sqlite3"
    desk = open_service(load_settings(store={"db": path}), clock=FakeClock())
    try:
        desk.talk_to_person(desk.ask(None, "Where is my refund?").conversation.id)
    finally:
        desk.close()
    assert sorted(p.name for p in folder.iterdir()) == ["helpdesk.sqlite3"]
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "argv",
    [
        ["conversations", "list", "--json"],
        ["conversations", "show", "1"],
        ["conversations", "export"],
        ["stats", "--json"],
        ["doctor", "--json"],
    ],
)
def test_a_read_only_folder_is_read(
    argv: list[str], db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with read_only(db.parent):
        code, out, err = run(capsys, *argv, "--db", str(db))
        assert sorted(p.name for p in db.parent.iterdir()) == ["helpdesk.sqlite3"]
    assert (code, "error" in err) == (0, False), err
    if argv[0] == "conversations" and argv[1] == "list":
        assert [c["state"] for c in json.loads(out)] == ["waiting"]


def test_a_log_with_changes_and_no_way_to_read_it_is_said_truthfully(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A `-wal` that holds changes (a writer's, copied with the file) needs a `-shm` to be read,
    # which the folder does not let anyone make: the file alone may be behind, so it is not read.
    (db.parent / "helpdesk.sqlite3-wal").write_bytes(b"\0" * 64)
    with read_only(db.parent):
        code, out, err = run(capsys, "conversations", "list", "--db", str(db))
    assert (code, out) == (2, "")
    assert err.startswith(f"helpdesk: error: {db}: cannot read database: its write-ahead log")
    assert "attempt to write" not in err and err.count("\n") == 1


def test_a_list_has_a_header_on_a_terminal_and_none_in_a_pipe(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A terminal's reader saw columns with no names; a pipe keeps a line per conversation.
    code, out, _ = run(capsys, "conversations", "list", "--db", str(db))
    assert code == 0 and out.split()[:2] == ["1", "waiting"] and len(out.splitlines()) == 1
    monkeypatch.setenv("COLUMNS", "100")  # What a terminal's width looks like here.
    code, out, _ = run(capsys, "conversations", "list", "--db", str(db))
    assert out.splitlines()[0].split() == ["id", "state", "agent", "reason", "last", "change",
                                           "(UTC)"]  # fmt: skip
    assert out.splitlines()[1].split()[:2] == ["1", "waiting"]
