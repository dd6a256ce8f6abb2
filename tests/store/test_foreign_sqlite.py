"""Another application's SQLite file, named by mistake (`--db`, `HELPDESK_DB`): every command
refuses it in one line, and nothing is written to it, not even the switch to WAL."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from chatbot.cli.main import main
from chatbot.store.interface import ForeignDatabase
from chatbot.store.sqlite import SQLiteStore


def foreign_file(path: Path, *, user_version: int) -> str:
    """A small database of another application's, with a schema number of its own; its digest."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        db.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO invoices (total) VALUES (12.5)")
        db.execute(f"PRAGMA user_version = {user_version}")
    db.close()
    return digest(path)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# 0: the help desk would add its tables beside theirs; 2: it would run its migration 3 on their
# tables; 70: it said "newer than this helpdesk understands; upgrade helpdesk".
@pytest.mark.parametrize("user_version", [0, 2, 70])
def test_the_store_refuses_another_applications_file_and_changes_nothing(
    tmp_path: Path, user_version: int
) -> None:
    path = tmp_path / "billing.db"
    before = foreign_file(path, user_version=user_version)
    for migrate in (True, False):
        with pytest.raises(ForeignDatabase) as refused:
            SQLiteStore.open(path, migrate=migrate)
        assert str(refused.value) == (
            f"{path}: holds 2 tables (customers, invoices) and none of the help desk's: is it the"
            " right database (--db, HELPDESK_DB)? Nothing was changed there"
        )
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["billing.db"]  # No -wal, no -shm.
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    db.close()


def test_commands_that_write_and_that_read_say_so_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "billing.db"
    before = foreign_file(path, user_version=0)
    for command in (
        ["users", "add", "ana", "--role", "agent"],
        ["stats"],
        ["conversations", "list"],
    ):
        assert main([*command, "--db", str(path)]) != 0, command
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, (command, err)
        assert "holds 2 tables (customers, invoices) and none of the help desk's" in err, command
        assert "Traceback" not in err
    assert digest(path) == before


def test_an_empty_file_and_the_help_desks_own_still_open(tmp_path: Path) -> None:
    empty = tmp_path / "new.db"
    empty.touch()
    SQLiteStore.open(empty).close()  # Made there, as on a first start.
    SQLiteStore.open(empty).close()  # And its own tables are no foreign ones.
    SQLiteStore.open(empty, migrate=False).close()
