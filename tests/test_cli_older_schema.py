"""The commands that only read never migrate a database at an older schema version: `doctor`
reports the version it found and what will upgrade it, the others refuse in one line. In a
rolling upgrade, a newer host's `doctor` that migrated the shared database locked out every host
not yet upgraded. The processes that write still migrate it."""

from __future__ import annotations

import io
import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from chatbot.cli.main import main
from chatbot.dburl import display
from chatbot.store.postgres_schema import COMPONENT
from chatbot.store.postgres_schema import MIGRATIONS as POSTGRES_MIGRATIONS
from chatbot.store.schema import MIGRATIONS as SQLITE_MIGRATIONS
from tests.backends import postgres_server

Schema = tuple[int, frozenset[str]]
"""A database's schema version and its tables."""


@dataclass
class OldDatabase:
    db: str
    """What `--db` takes."""
    name: str
    """How helpdesk names it: the path, or the URL without a password."""
    latest: int
    """This helpdesk's schema version; the database is one below."""
    schema: Callable[[], Schema]


def _sqlite_schema(path: Path) -> Schema:
    with sqlite3.connect(path) as conn:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    conn.close()
    return int(version), frozenset(name for (name,) in tables)


def _postgres_schema(url: str) -> Schema:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT version FROM schema_versions WHERE component = %s", (COMPONENT,)
        ).fetchone()
        tables = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        names = frozenset(name for (name,) in tables.fetchall())
    assert row is not None
    return int(row[0]), names


def _sqlite_one_behind(path: Path) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN IMMEDIATE")
    for migration in SQLITE_MIGRATIONS[:-1]:
        if callable(migration):
            migration(conn)
        else:
            for statement in migration:
                conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {len(SQLITE_MIGRATIONS) - 1}")
    conn.execute("COMMIT")
    conn.close()


def _postgres_one_behind(url: str) -> None:
    with psycopg.connect(url) as conn, conn.transaction():
        for migration in POSTGRES_MIGRATIONS[:-1]:
            for statement in migration:
                conn.execute(statement.encode())
        conn.execute(
            "CREATE TABLE schema_versions (component text PRIMARY KEY, version integer NOT NULL)"
        )
        conn.execute(
            "INSERT INTO schema_versions VALUES (%s, %s)",
            (COMPONENT, len(POSTGRES_MIGRATIONS) - 1),
        )


@pytest.fixture(params=["sqlite", "postgresql"])
def old_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OldDatabase]:
    """A database as the previous helpdesk left it: every shipped migration but the newest."""
    if request.param == "sqlite":
        path = tmp_path / "helpdesk.sqlite3"
        _sqlite_one_behind(path)
        yield OldDatabase(str(path), str(path), len(SQLITE_MIGRATIONS),
                          lambda: _sqlite_schema(path))  # fmt: skip
        return
    server = postgres_server()
    url = server.create(migrated=False)
    try:
        _postgres_one_behind(url)
        yield OldDatabase(url, display(url), len(POSTGRES_MIGRATIONS),
                          lambda: _postgres_schema(url))  # fmt: skip
    finally:
        server.drop(url)


READERS = [["stats"], ["stats", "--json"], ["conversations", "list"],
           ["conversations", "list", "--json"], ["conversations", "export"],
           ["conversations", "show", "1"], ["users", "list"]]  # fmt: skip
"""The commands that only read, but for `doctor`."""


def test_doctor_reports_an_older_schema_and_leaves_it(
    old_database: OldDatabase, capsys: pytest.CaptureFixture[str]
) -> None:
    before = old_database.schema()
    old = old_database.latest - 1
    assert before[0] == old

    assert main(["doctor", "--db", old_database.db, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["database"] == old_database.name
    assert (report["schema_version"], report["helpdesk_schema_version"]) == (
        old, old_database.latest,
    )  # fmt: skip
    assert report["latency_ms"] > 0
    assert report["waiting_for_a_bot"] is None  # Not counted on a schema it does not know.
    assert old_database.schema() == before

    assert main(["doctor", "--db", old_database.db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [
        "database", "server", "schema", "latency", "bots",
    ]  # fmt: skip
    assert lines[2] == (
        f"schema    version {old}, older than this helpdesk's {old_database.latest}: the next"
        " process that writes (the app, `helpdesk bot`, `helpdesk serve`) upgrades it"
    )
    assert lines[4] == "bots      not counted until the schema is upgraded"
    assert old_database.schema() == before


@pytest.mark.parametrize("command", READERS)
def test_a_command_that_reads_refuses_an_older_schema_and_leaves_it(
    old_database: OldDatabase, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    before = old_database.schema()
    assert main([*command, "--db", old_database.db]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"helpdesk: error: the database at {old_database.name} is at schema version"
        f" {old_database.latest - 1}, older than this helpdesk's {old_database.latest}: start the"
        " app, `helpdesk bot` or `helpdesk serve` once to upgrade it\n"
    )
    assert old_database.schema() == before


def test_a_command_that_writes_upgrades_it_and_then_the_readers_read(
    old_database: OldDatabase, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    old_tables = old_database.schema()[1]
    monkeypatch.setattr("sys.stdin", io.StringIO("a long passphrase\n"))
    add = ["users", "add", "root", "--role", "admin", "--password-stdin"]
    assert main([*add, "--db", old_database.db]) == 0
    version, tables = old_database.schema()
    # The newest migration need not add a table (it may add columns or an index): none lost.
    assert version == old_database.latest and tables >= old_tables
    capsys.readouterr()

    assert main(["doctor", "--db", old_database.db, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["schema_version"] == report["helpdesk_schema_version"] == old_database.latest
    assert report["waiting_for_a_bot"] == 0
    assert main(["users", "list", "--db", old_database.db]) == 0
    assert capsys.readouterr().out == "root  admin  root\n"
    assert main(["conversations", "list", "--json", "--db", old_database.db]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_a_command_that_reads_still_refuses_a_newer_schema(
    old_database: OldDatabase, capsys: pytest.CaptureFixture[str]
) -> None:
    """Left unmigrated, a schema newer than this helpdesk's is still refused, not read."""
    newer = old_database.latest + 1
    if old_database.db.startswith("postgresql://"):
        with psycopg.connect(old_database.db) as conn:
            conn.execute("UPDATE schema_versions SET version = %s", (newer,))
    else:
        with sqlite3.connect(old_database.db) as raw:
            raw.execute(f"PRAGMA user_version = {newer}")
        raw.close()
    for command in (["doctor"], *READERS):
        assert main([*command, "--db", old_database.db]) == 2, command
        assert capsys.readouterr().err == (
            f"helpdesk: error: {old_database.name}: database schema version {newer} is newer"
            f" than this helpdesk understands ({old_database.latest}); upgrade helpdesk\n"
        )
    assert old_database.schema()[0] == newer
