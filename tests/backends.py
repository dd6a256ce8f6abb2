"""The conversation stores the contract tests run against. A new backend is one more entry here:
every test of `tests/store/test_contract.py` and `tests/desk/` then runs on it as well.

PostgreSQL: each test gets a database of its own with a unique name, copied from a template
migrated once per session. Making one costs a second or two on a busy machine, so after a test its
database is emptied (every connection to it ended, every row deleted, ids restarted) and handed to
the next test; one whose schema a test changed is dropped instead. All are dropped at the end
(`WITH (FORCE)`); those of a run killed before its end (a timeout, Ctrl+C twice), named by the
pid of the process that made them, are dropped by the next run once no such process runs. The
server is `HELPDESK_TEST_POSTGRES` (default: the project machines' trust
server). When it cannot be reached only the PostgreSQL tests are skipped, with the URL tried,
unless `HELPDESK_REQUIRE_POSTGRES=1` (CI), where they fail.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from chatbot.dburl import display, redact
from chatbot.desk.clock import Clock, utc_now
from chatbot.desk.service import DeskService
from chatbot.store.interface import ConversationStore
from chatbot.store.sqlite import SQLiteStore
from tests import postgres_env

BACKENDS = ["sqlite", "postgresql"]


def admin_url() -> str:
    return postgres_env.ADMIN_URL


def database_url(admin: str, name: str) -> str:
    """The admin URL pointing at database `name` instead."""
    parts = urlsplit(admin)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))


@dataclass
class Backend:
    """Opens connections to one fresh database of one kind; each is what another process has.
    Picklable, so a spawned process can open its own."""

    name: str
    location: str | Path
    """The SQLite file, or the PostgreSQL URL: what `--db` takes."""

    def open(self, clock: Clock = utc_now) -> ConversationStore:
        if self.name == "postgresql":
            from chatbot.store.postgres import PostgresStore

            return PostgresStore.open(str(self.location), clock=clock)
        return SQLiteStore.open(Path(self.location), clock=clock)

    def service(self, clock: Clock = utc_now, *, max_attempts: int = 3) -> DeskService:
        return DeskService(self.open(clock), max_attempts=max_attempts)


def _running(pid: int) -> bool:
    """Whether a process `pid` runs on this machine (the test server is on it: 127.0.0.1)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # Another user's.
    return True


class PostgresServer:
    """The test server: makes databases from a migrated template and drops them."""

    def __init__(self, admin: str) -> None:
        import psycopg

        self.admin = admin
        self._psycopg = psycopg
        self._conn = psycopg.connect(admin, autocommit=True, connect_timeout=3)
        self.drop_orphans()
        self.template = f"helpdesk_tmpl_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        self._conn.execute(f'CREATE DATABASE "{self.template}"'.encode())
        from chatbot.store.postgres import PostgresStore

        PostgresStore.open(database_url(admin, self.template)).close()

        self._free: list[str] = []
        self._made: list[str] = []

    def drop_orphans(self) -> None:
        """Drop the databases of runs whose process is gone: a run killed before its end left
        its template and test databases behind, one pair per worker, run after run. Only on this
        machine's server, where a pid names a process here."""
        if urlsplit(self.admin).hostname not in (None, "", "127.0.0.1", "localhost", "::1"):
            return
        found = self._conn.execute(
            r"SELECT datname FROM pg_database"
            r" WHERE datname LIKE 'helpdesk\_tmpl\_%' OR datname LIKE 'helpdesk\_test\_%'"
        ).fetchall()
        for (name,) in found:
            pid = name.split("_")[2]
            if not pid.isdigit() or _running(int(pid)):
                continue
            try:
                self._conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())
            except self._psycopg.Error:
                pass  # Another worker starting at the same moment dropped it first.

    def create(self, *, migrated: bool = True) -> str:
        """A new database of its own with a unique name: migrated, or with no schema at all."""
        name = f"helpdesk_test_{os.getpid()}_{uuid.uuid4().hex[:10]}"
        template = f' TEMPLATE "{self.template}"' if migrated else ""
        self._conn.execute(f'CREATE DATABASE "{name}"{template}'.encode())
        self._made.append(name)
        return database_url(self.admin, name)

    def take(self) -> str:
        """An empty migrated database: one a finished test left (emptied), or a new one."""
        return self._free.pop() if self._free else self.create()

    def give_back(self, url: str) -> None:
        """Empty the database for the next test, or drop it if it is not as migrated."""
        name = urlsplit(url).path.lstrip("/")
        self._conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )
        from chatbot.store.postgres_schema import COMPONENT, MIGRATIONS

        try:
            with self._psycopg.connect(url, autocommit=True) as conn, conn.transaction():
                conn.execute("SET LOCAL synchronous_commit = off")  # Test data: no fsync wait.
                (version,) = conn.execute(
                    "SELECT version FROM schema_versions WHERE component = %s", (COMPONENT,)
                ).fetchone() or (None,)
                if version != len(MIGRATIONS):
                    raise ValueError(f"schema version {version}")
                for table in EMPTIED:
                    conn.execute(f"DELETE FROM {table}".encode())
                for table in NUMBERED:
                    conn.execute(f"ALTER TABLE {table} ALTER COLUMN id RESTART".encode())
        except (self._psycopg.Error, ValueError):
            self.drop(url)
            return
        self._free.append(url)

    def drop(self, url: str) -> None:
        name = urlsplit(url).path.lstrip("/")
        self._conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())

    def close(self) -> None:
        for name in [*self._made, self.template]:
            self.drop(database_url(self.admin, name))
        self._conn.close()


EMPTIED = ("revoked_sessions", "presence_sessions", "sign_in_failures", "presence",
           "read_markers", "questions", "judgment_errors", "decisions", "escalations", "entries",
           "passage_revisions", "passage_texts", "conversations", "accounts",
           "server_secrets")  # fmt: skip
"""Every table of the conversation schema, children first."""
NUMBERED = ("conversations", "entries", "decisions", "escalations", "passage_revisions")


_server: PostgresServer | None = None
_unreachable: str | None = None


def postgres_server() -> PostgresServer:
    """The session's test server, connected on first use; skips (or, in CI, fails) the test
    when there is none."""
    global _server, _unreachable
    if _server is None and _unreachable is None:
        try:
            _server = PostgresServer(admin_url())
        except Exception as error:  # noqa: BLE001 - whatever stops it, the reason is one line.
            reason = redact(" ".join(str(error).split()), admin_url())
            _unreachable = f"PostgreSQL not reachable at {display(admin_url())}: {reason}"
    if _server is None:
        assert _unreachable is not None
        if postgres_env.REQUIRED:
            pytest.fail(f"{_unreachable} (HELPDESK_REQUIRE_POSTGRES=1)", pytrace=False)
        pytest.skip(_unreachable)
    return _server


def close_postgres_server() -> None:
    global _server
    if _server is not None:
        _server.close()
        _server = None


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        yield Backend("sqlite", tmp_path / "helpdesk.sqlite3")
        return
    server = postgres_server()
    url = server.take()
    try:
        yield Backend("postgresql", url)
    finally:
        server.give_back(url)
