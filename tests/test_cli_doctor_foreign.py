"""`helpdesk doctor` pointed at another application's database (tables of its own, none of the
help desk's): it used to report "none yet: no help-desk tables there" and exit 0, as for a new
database, though the app would then make its tables among the other application's. It now says
the database holds other tables and none of the help desk's, asks whether it is the right one,
exits 1, and still makes nothing there. An empty database keeps its "none yet" report, exit 0."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatbot.cli.main import main
from chatbot.dburl import display
from tests.backends import postgres_server

QUESTION = "is it the right database (--db, HELPDESK_DB)? Doctor changed nothing there\n"


def doctor(capsys: pytest.CaptureFixture[str], db: str, *args: str) -> tuple[int, str, str]:
    code = main(["doctor", "--db", db, *args])
    out, err = capsys.readouterr()
    return code, out, err


def schema_line(out: str) -> str:
    """The schema line, its wrapped lines joined."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("schema"))
    rest = [line for line in lines[start + 1 :] if line.startswith(" ")]
    return " ".join(" ".join([lines[start], *rest]).split())


def other_app_file(path: Path, *tables: str, user_version: int = 0) -> Path:
    with sqlite3.connect(path) as conn:
        for table in tables:
            conn.execute(f'CREATE TABLE "{table}" (id INTEGER)')
        conn.execute(f"PRAGMA user_version = {user_version}")
    conn.close()
    return path


@pytest.mark.parametrize("user_version", [0, 2, 70], ids=["unversioned", "low", "high"])
def test_another_applications_sqlite_file_is_asked_about_and_left_alone(
    user_version: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Another application may set `user_version` too: it was read as the help desk's schema
    # version ("older ...: the next process upgrades it", or "newer ...: upgrade helpdesk").
    folder = tmp_path / "files"
    folder.mkdir()
    path = other_app_file(
        folder / "invoices.db", "invoices", "customers", user_version=user_version
    )
    before = path.read_bytes()
    code, out, err = doctor(capsys, str(path))
    assert code == 1
    assert [line.split()[0] for line in out.splitlines() if not line.startswith(" ")] == [
        "database", "server", "schema", "latency", "bots",
    ]  # fmt: skip
    assert out.splitlines()[0] == f"database  {path}"
    assert schema_line(out) == (
        "schema no help-desk tables, but 2 others (customers, invoices); the app, `helpdesk bot` "
        "or `helpdesk serve` refuse to use it"
    )
    assert "none yet" not in out
    assert out.splitlines()[-1] == "bots      not counted: none of the help desk's tables there"
    assert err == (
        f"helpdesk: error: {path} holds 2 tables (customers, invoices) and none of the help "
        f"desk's: {QUESTION}"
    )
    assert path.read_bytes() == before  # Nothing made, not even a journal beside it.
    assert [p.name for p in folder.iterdir()] == ["invoices.db"]


def test_the_json_report_names_the_other_tables_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = other_app_file(tmp_path / "other.db", "users")
    code, out, err = doctor(capsys, str(path), "--json")
    report = json.loads(out)
    assert code == 1 and err.endswith(QUESTION)
    assert report["other_tables"] == ["users"] and report["schema_version"] == 0
    assert (report["waiting_for_a_bot"], report["oldest_wait_for_a_bot_s"]) == (None, None)


def test_many_tables_are_named_a_few_and_their_names_spelled_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = other_app_file(tmp_path / "other.db", "a\x1b[31m", "b", "c", "d", "e")
    code, out, err = doctor(capsys, str(path))
    assert code == 1 and "\x1b" not in out + err
    assert "(a\\x1b[31m, b, c and 2 more)" in schema_line(out)
    assert f"{path} holds 5 tables (a\\x1b[31m, b, c and 2 more) and none" in err


def test_an_empty_sqlite_file_is_still_a_new_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.sqlite3"
    empty.touch()
    code, out, err = doctor(capsys, str(empty))
    assert (code, err) == (0, "")
    assert schema_line(out).startswith("schema none yet: no help-desk tables there;")


@pytest.fixture
def blank_postgres() -> Iterator[str]:
    """A new PostgreSQL database with no tables, dropped afterwards."""
    server = postgres_server()
    url = server.create(migrated=False)
    try:
        yield url
    finally:
        server.drop(url)


def tables(url: str) -> list[tuple[str, str]]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT schemaname, tablename FROM pg_tables WHERE schemaname NOT IN"
            " ('pg_catalog', 'information_schema') ORDER BY 1, 2"
        ).fetchall()
    return [(str(schema), str(name)) for schema, name in rows]


def test_another_applications_postgresql_database_is_asked_about_and_left_alone(
    blank_postgres: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import psycopg

    with psycopg.connect(blank_postgres, autocommit=True) as conn:
        conn.execute("CREATE TABLE orders (id integer)")
        conn.execute("CREATE SCHEMA billing")
        conn.execute("CREATE TABLE billing.accounts (id integer)")
    before = tables(blank_postgres)
    # Trust authentication ignores the password; it must not be shown.
    url = blank_postgres.replace("postgresql://postgres@", "postgresql://postgres:hunter2@")
    assert "hunter2" in url
    code, out, err = doctor(capsys, url)
    assert code == 1 and "hunter2" not in out + err
    assert out.splitlines()[0] == f"database  {display(blank_postgres)}"
    assert schema_line(out) == (
        "schema no help-desk tables, but 2 others (billing.accounts, orders); the app, "
        "`helpdesk bot` or `helpdesk serve` would add the help desk's beside them"
    )
    assert err == (
        f"helpdesk: error: {display(blank_postgres)} holds 2 tables (billing.accounts, orders) "
        f"and none of the help desk's: {QUESTION}"
    )
    code, out, _ = doctor(capsys, url, "--json")
    assert code == 1 and json.loads(out)["other_tables"] == ["billing.accounts", "orders"]
    assert tables(blank_postgres) == before  # No help-desk table made among them.


def test_an_empty_postgresql_database_is_still_a_new_one(
    blank_postgres: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import psycopg

    # A table an extension owns (PostGIS's `spatial_ref_sys`, say) is no other application's.
    with psycopg.connect(blank_postgres, autocommit=True) as conn:
        conn.execute("CREATE TABLE spatial_ref_sys (id integer)")
        conn.execute("ALTER EXTENSION plpgsql ADD TABLE spatial_ref_sys")
    code, out, err = doctor(capsys, blank_postgres)
    assert (code, err) == (0, "")
    assert schema_line(out).startswith("schema none yet: no help-desk tables there;")
    assert tables(blank_postgres) == [("public", "spatial_ref_sys")]


SHAPES = {
    "columns of its own": [
        "CREATE TABLE schema_versions (version integer, applied_at timestamptz)",
        "INSERT INTO schema_versions VALUES (7, now())",
    ],
    "an integer component": [
        "CREATE TABLE schema_versions (component integer PRIMARY KEY, version integer)"
    ],
    "no unique component": [
        "CREATE TABLE schema_versions (component text, version text NOT NULL)",
    ],
    "a view": [
        "CREATE TABLE other (id integer)",
        "CREATE VIEW schema_versions AS SELECT 'x'::text AS component, 1 AS version",
    ],
}
NOT_OURS = (
    ": its schema_versions is not the help desk's table (a unique text component, an integer"
    " version): is it the right database (--db, HELPDESK_DB)? Nothing was changed there\n"
)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("command", [["doctor"], ["conversations", "list"], ["users", "list"]])
def test_another_applications_schema_versions_is_named_not_an_sql_error(
    command: list[str], shape: str, blank_postgres: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`schema_versions` is a common name: another application's (its own columns, types or
    keys, or a view) was read as the help desk's, and every command failed with a bare SQL
    error (`column "component" does not exist`, a type or an upsert error)."""
    import psycopg

    with psycopg.connect(blank_postgres, autocommit=True) as conn:
        for statement in SHAPES[shape]:
            conn.execute(statement.encode())
    before = tables(blank_postgres)
    code = main([*command, "--db", blank_postgres])
    out, err = capsys.readouterr()
    assert code != 0 and out == ""
    assert err == f"helpdesk: error: {display(blank_postgres)}{NOT_OURS}"
    assert tables(blank_postgres) == before


@pytest.mark.parametrize("command", [["doctor"], ["users", "list"]])
def test_another_applications_conversations_table_is_named_not_an_sql_error(
    command: list[str], blank_postgres: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """No help-desk schema, but a `conversations` table of another application's: the first
    migration failed on it with `relation "conversations" already exists`."""
    import psycopg

    with psycopg.connect(blank_postgres, autocommit=True) as conn:
        conn.execute("CREATE TABLE conversations (id integer, title text)")
    code = main([*command, "--db", blank_postgres])
    out, err = capsys.readouterr()
    assert code != 0 and out == ""
    assert err == (
        f"helpdesk: error: {display(blank_postgres)}: holds a conversations table that is not the"
        " help desk's: is it the right database (--db, HELPDESK_DB)? Nothing was changed there\n"
    )
    assert tables(blank_postgres) == [("public", "conversations")]


@pytest.mark.parametrize(
    ("columns", "user_version"),
    [
        ("id INTEGER", 4),
        # A support app's own: our column names, not our states (it crashed with a traceback
        # at version 9, and was switched to WAL and written to at 0 and 3).
        ("id INTEGER PRIMARY KEY, state TEXT, agent TEXT, created_at TEXT, subject TEXT", 0),
        ("id INTEGER PRIMARY KEY, state TEXT, agent TEXT, created_at TEXT, subject TEXT", 9),
    ],
    ids=["other-columns", "our-names-unversioned", "our-names-at-our-version"],
)
def test_a_sqlite_file_with_another_applications_conversations_table_is_refused(
    columns: str, user_version: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`conversations` is a common name: a file with one of another application's was taken for
    the help desk's, switched to WAL and written to by the commands that write."""
    path = tmp_path / "crm.db"
    with sqlite3.connect(path) as conn:
        conn.execute(f"CREATE TABLE conversations ({columns})")
        conn.execute("INSERT INTO conversations (id) VALUES (1)")
        conn.execute('CREATE TABLE "users" (id INTEGER)')
        conn.execute(f"PRAGMA user_version = {user_version}")
    conn.close()
    before = path.read_bytes()
    code, out, err = doctor(capsys, str(path))
    assert code == 1
    assert "2 others (conversations, users)" in schema_line(out)
    assert main(["users", "add", "ana", "--role", "agent", "--db", str(path)]) != 0
    _, err = capsys.readouterr()
    assert err == (
        f"helpdesk: error: {path}: holds 2 tables (conversations, users) and none of the help"
        " desk's: is it the right database (--db, HELPDESK_DB)? Nothing was changed there\n"
    )
    assert path.read_bytes() == before
    assert list(tmp_path.glob("crm.db-*")) == []  # Not switched to WAL: no -wal, no -shm.
