"""`helpdesk doctor` on each backend: where the database is (never the password), its server,
schema version and a measured latency; the commands that read make no database at a mistyped
path."""

from __future__ import annotations

import io
import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from chatbot.cli.main import main
from chatbot.dburl import display
from chatbot.store.postgres_schema import MIGRATIONS as POSTGRES_MIGRATIONS
from chatbot.store.schema import MIGRATIONS as SQLITE_MIGRATIONS
from tests.backends import Backend, postgres_server


def test_doctor_reports_the_database_without_its_password(
    backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    backend.open().close()  # The database a host was set up with.
    db = str(backend.location)
    if backend.name == "postgresql":  # Trust authentication ignores it; it must not be shown.
        db = db.replace("postgresql://postgres@", "postgresql://postgres:hunter2@")
        assert "hunter2" in db
    assert main(["doctor", "--db", db, "--json"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out)
    assert "hunter2" not in out
    assert report["database"] == str(backend.location)
    expected = (
        ("PostgreSQL 1", len(POSTGRES_MIGRATIONS))
        if backend.name == "postgresql"
        else ("SQLite 3.", len(SQLITE_MIGRATIONS))
    )
    assert report["server"].startswith(expected[0]) and report["schema_version"] == expected[1]
    assert report["latency_ms"] > 0

    assert main(["doctor", "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [
        "database", "server", "schema", "latency", "bots",
    ]  # fmt: skip
    assert lines[0] == f"database  {backend.location}"
    assert lines[-1] == "bots      no question waits for a bot"


def test_doctor_says_when_questions_wait_for_a_bot_and_none_takes_them(
    backend: Backend, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A question just asked waits for a bot; one asked two minutes ago that no bot holds means
    none is running (a bot spends at most 20 s on Valen)."""
    two_minutes_ago = datetime.now(UTC) - timedelta(minutes=2)
    desk = backend.service(lambda: two_minutes_ago)
    desk.ask(None, "Is anyone there?")
    desk.close()
    db = str(backend.location)
    assert main(["doctor", "--db", db, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["waiting_for_a_bot"] == 1
    assert 120 <= report["oldest_wait_for_a_bot_s"] < 180
    assert main(["doctor", "--db", db]) == 0
    bots = capsys.readouterr().out.splitlines()[-1]
    assert bots.startswith("bots      1 question waits for a bot, the oldest for 2m ")
    assert bots.endswith("; is a bot running (`helpdesk bot`, `helpdesk serve`, or an app "
                         "without --no-bot)?")  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:  # On a terminal, wrapped under the values.
        patch.setenv("COLUMNS", "80")
        assert main(["doctor", "--db", db]) == 0
        wrapped = capsys.readouterr().out.splitlines()[-2:]
    assert all(len(line) <= 80 for line in wrapped) and wrapped[1].startswith(" " * 10 + "(")
    assert " ".join(" ".join(wrapped).split()) == " ".join(bots.split())
    # Where a bot may spend 200 s on Valen (`valen.budget_s`), two minutes is no sign of none.
    config = tmp_path / "config.toml"
    config.write_text("[valen]\nbudget_s = 200\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HELPDESK_CONFIG", str(config))
        assert main(["doctor", "--db", db]) == 0
    bots = capsys.readouterr().out.splitlines()[-1]
    assert bots.startswith("bots      1 question waits for a bot, the oldest for 2m ")
    assert "is a bot running" not in bots
    desk = backend.service()
    desk.ask(None, "Anyone?")
    [taken] = desk.lease("bot-1", limit=1, lease_s=30)
    desk.close()
    assert taken.text == "Is anyone there?"  # A bot holds the older one now.
    assert main(["doctor", "--db", db]) == 0
    bots = capsys.readouterr().out.splitlines()[-1]
    assert bots.startswith("bots      1 question waits for a bot, the oldest for ")
    assert "is a bot running" not in bots


READERS = [["stats"], ["conversations", "list"], ["conversations", "export"],
           ["conversations", "show", "1"], ["users", "list"], ["users", "rm", "ana"]]  # fmt: skip
"""The commands that only read (or change what is there): none makes a database. `doctor` makes
none either, and reports a database not made yet as such (exit status 0: before the first start
is a time to run it; `tests/test_cli_doctor_first_start.py`)."""


def doctor_says_none_yet(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--db", db]) == 0
    assert "schema    none yet: no " in capsys.readouterr().out


@pytest.mark.parametrize("command", READERS)
def test_a_command_that_reads_makes_no_database_at_a_mistyped_path(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """One line and exit status 2, and nothing made: neither the file nor its folder (opening
    it would make both, and report on an empty database as if it were the desk's)."""
    typo = tmp_path / "helpdsk" / "helpdesk.sqlite3"
    assert main([*command, "--db", str(typo)]) == 2
    assert capsys.readouterr().err == (
        f"helpdesk: error: {typo}: no database there (the app, `helpdesk bot` and "
        "`helpdesk serve` make it on first use)\n"
    )
    doctor_says_none_yet(str(typo), capsys)
    assert not typo.parent.exists()


def test_a_command_that_reads_makes_no_tables_in_a_postgresql_database_without_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A database that exists but has no help-desk tables (another application's, or `postgres`
    typed for `helpdesk`) got them all made by `stats` or `doctor`, and a report on them."""
    import psycopg

    server = postgres_server()
    url = server.create(migrated=False)
    try:
        for command in READERS:
            assert main([*command, "--db", url]) == 2, command
            assert capsys.readouterr().err == (
                f"helpdesk: error: {display(url)}: no help-desk tables there (the app, "
                "`helpdesk bot` and `helpdesk serve` make them on first use)\n"
            )
        doctor_says_none_yet(url, capsys)
        with psycopg.connect(url) as conn:
            tables = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            assert tables.fetchone() == (0,)
    finally:
        server.drop(url)


def test_a_command_that_reads_makes_no_tables_in_a_sqlite_file_without_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another application's SQLite file, or an empty one, got the help desk's tables made by
    `stats` or `doctor` (exit 0, and a report on an empty desk): refused as for PostgreSQL, and
    the file is left as it was, byte for byte."""
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE users (id INTEGER)")
    conn.close()
    empty = tmp_path / "empty.sqlite3"
    empty.touch()
    for path in (other, empty):
        before = path.read_bytes()
        for command in READERS:
            assert main([*command, "--db", str(path)]) == 2, command
            why = (
                "holds 1 table (users) and none of the help desk's: is it the right database"
                " (--db, HELPDESK_DB)? Nothing was changed there"
                if path == other
                else "no help-desk tables there (the app, `helpdesk bot` and `helpdesk serve`"
                " make them on first use)"
            )
            assert capsys.readouterr().err == f"helpdesk: error: {path}: {why}\n"
        if path == empty:
            doctor_says_none_yet(str(path), capsys)
        else:  # Another application's: asked about (tests/test_cli_doctor_foreign.py).
            assert main(["doctor", "--db", str(path)]) == 1
            assert "is it the right database" in capsys.readouterr().err
        assert path.read_bytes() == before
    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("hello\n")
    assert main(["stats", "--db", str(not_sqlite)]) == 2
    assert capsys.readouterr().err == (
        f"helpdesk: error: {not_sqlite}: cannot read database: file is not a database\n"
    )


def test_adding_the_first_account_makes_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "new" / "helpdesk.sqlite3"
    monkeypatch.setattr("sys.stdin", io.StringIO("a long passphrase\n"))
    assert (
        main(["users", "add", "root", "--role", "admin", "--password-stdin", "--db", str(db)]) == 0
    )
    assert db.exists()
    assert main(["doctor", "--db", str(db)]) == 0
