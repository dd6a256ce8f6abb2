"""`helpdesk serve` on a PostgreSQL database of the test's own, refused and let in again on
demand."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast
from urllib.parse import urlsplit

from chatbot.accounts.models import Role
from chatbot.accounts.service import AccountService
from chatbot.store.postgres_users import PostgresUserStore
from tests.backends import PostgresServer, postgres_server
from tests.conftest import SHIPPED_KB
from tests.web.harness import FAST_HASHER, Served, start_server, wait_for

PASSWORD = "correct horse battery"


@dataclass
class Database:
    """The test's own database on the shared test server, refused and let in again on demand."""

    server: PostgresServer
    url: str

    @property
    def name(self) -> str:
        return urlsplit(self.url).path.lstrip("/")

    def down(self) -> None:
        """Refuse new connections and end the open ones, waiting until they have gone."""
        admin = self.server._conn
        admin.execute(f'ALTER DATABASE "{self.name}" ALLOW_CONNECTIONS false'.encode())
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid), pid FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (self.name,),
        ).fetchall()
        ended = [int(row[1]) for row in rows]

        def gone() -> bool:
            row = admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", (ended,)
            ).fetchone()
            return row is not None and row[0] == 0

        wait_for(gone, what="the database's connections to end", timeout=10, every=0.01)

    def up(self) -> None:
        self.server._conn.execute(f'ALTER DATABASE "{self.name}" ALLOW_CONNECTIONS true'.encode())

    def bounce(self) -> None:
        """A short outage, over before anyone asks: the connections open before it are dead."""
        self.down()
        self.up()


def own_database() -> Iterator[Database]:
    """A database of the test's own with the account ana, allowed again and given back after."""
    server = postgres_server()
    db = Database(server, server.take())
    service = AccountService(PostgresUserStore.open(db.url), hasher=FAST_HASHER)
    try:
        service.add("ana", role=Role.AGENT, password=PASSWORD, display_name="Ana P.")
    finally:
        service.close()
    try:
        yield db
    finally:
        db.up()
        server.give_back(db.url)


def serve(home: Path, database: Database) -> Served:
    home.mkdir(parents=True, exist_ok=True)
    kb = home / "kb"
    if not kb.exists():
        shutil.copytree(SHIPPED_KB, kb, ignore=shutil.ignore_patterns(".*"))
    # `--db` takes the URL as it is (the harness passes it on with str()). No bots: they would
    # only add their own outage lines to the log.
    return start_server(home, db=cast(Path, database.url), kb=kb, extra=["--bots", "0"])
