"""`helpdesk doctor` before the first start: a reachable database with no help-desk tables yet (or
a SQLite path with no file yet) is reported like any other, server, version and latency, with a
schema line saying what makes the tables; exit 0, and nothing is made."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from chatbot.cli.main import main
from chatbot.dburl import display
from chatbot.store.postgres_schema import MIGRATIONS as POSTGRES_MIGRATIONS
from chatbot.store.schema import MIGRATIONS as SQLITE_MIGRATIONS
from tests.backends import postgres_server

FIRST_START = "the app, `helpdesk bot` or `helpdesk serve` makes them on first start"


def labels(out: str) -> list[str]:
    return [line.split()[0] for line in out.splitlines() if not line.startswith(" ")]


def test_doctor_reports_a_postgresql_database_with_no_tables_yet_and_makes_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import psycopg

    server = postgres_server()
    url = server.create(migrated=False)
    try:
        assert main(["doctor", "--db", url]) == 0
        captured = capsys.readouterr()
        assert captured.err == ""
        lines = captured.out.splitlines()
        assert labels(captured.out) == ["database", "server", "schema", "latency", "bots"]
        assert lines[0] == f"database  {display(url)}"
        assert lines[1].startswith("server    PostgreSQL 1")
        schema = " ".join(" ".join(lines[2:-2]).split())
        assert schema == (
            f"schema none yet: no help-desk tables there; {FIRST_START} (doctor makes none)"
        )
        assert lines[-2].startswith("latency   ") and lines[-2].endswith(" ms (median round trip)")
        assert lines[-1] == "bots      no question waits for a bot"

        assert main(["doctor", "--db", url, "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["server"].startswith("PostgreSQL 1") and report["latency_ms"] > 0
        assert (report["schema_version"], report["helpdesk_schema_version"]) == (
            0, len(POSTGRES_MIGRATIONS),
        )  # fmt: skip
        assert (report["waiting_for_a_bot"], report["oldest_wait_for_a_bot_s"]) == (0, None)
        with psycopg.connect(url) as conn:
            tables = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            assert tables.fetchone() == (0,)
        # The commands that report on the desk's contents still refuse it.
        assert main(["stats", "--db", url]) == 2
        assert "no help-desk tables there" in capsys.readouterr().err
    finally:
        server.drop(url)


def test_doctor_reports_a_sqlite_file_with_no_tables_yet_and_leaves_it_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "files"  # Not the test's XDG data folder, which settings fill.
    folder.mkdir()
    empty = folder / "empty.sqlite3"
    empty.touch()
    other = folder / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE users (id INTEGER)")
    conn.close()
    # `other`, another application's, is asked about instead: tests/test_cli_doctor_foreign.py.
    for path in (empty,):
        before = path.read_bytes()
        assert main(["doctor", "--db", str(path)]) == 0
        out = capsys.readouterr().out
        assert labels(out) == ["database", "server", "schema", "latency", "bots"]
        assert f"no help-desk tables there; {FIRST_START}" in " ".join(out.split())
        assert main(["doctor", "--db", str(path), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["server"].startswith("SQLite 3.") and report["latency_ms"] >= 0
        assert (report["schema_version"], report["helpdesk_schema_version"]) == (
            0, len(SQLITE_MIGRATIONS),
        )  # fmt: skip
        assert path.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["empty.sqlite3", "other.db"]


def test_doctor_reports_a_sqlite_path_with_no_file_yet_and_makes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default database before the first start: the app makes it, folders and all."""
    folder = tmp_path / "db"
    new = folder / "helpdesk" / "helpdesk.sqlite3"
    assert main(["doctor", "--db", str(new)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert labels(out) == ["database", "server", "schema", "latency", "bots"]
    assert lines[0] == f"database  {new}"
    assert lines[1].startswith("server    SQLite 3.")
    assert (
        "schema none yet: no database file there; the app, `helpdesk bot` or `helpdesk serve`"
        " makes it and its folders on first start (doctor makes nothing)"
    ) in " ".join(out.split())
    assert "latency   not measured: no database file yet" in lines
    assert lines[-1] == "bots      no question waits for a bot"
    folder.mkdir()
    assert main(["doctor", "--db", str(folder / "helpdesk.sqlite3"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {
        "database": str(folder / "helpdesk.sqlite3"),
        "server": f"SQLite {sqlite3.sqlite_version}",
        "schema_version": 0,
        "helpdesk_schema_version": len(SQLITE_MIGRATIONS),
        "latency_ms": None,
        "waiting_for_a_bot": 0,
        "oldest_wait_for_a_bot_s": None,
    }
    assert list(folder.iterdir()) == []  # Neither the file nor its folders.
    assert main(["doctor", "--db", str(folder / "helpdesk.sqlite3")]) == 0
    assert "makes it on first start" in " ".join(capsys.readouterr().out.split())


def test_doctor_says_when_the_first_start_could_not_make_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    in_the_way = tmp_path / "data"
    in_the_way.write_text("not a folder\n")
    path = in_the_way / "helpdesk" / "helpdesk.sqlite3"
    assert main(["doctor", "--db", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"helpdesk: error: {path}: no database there, and the first start cannot make one:"
        f" {in_the_way} is a file, not a folder\n"
    )
