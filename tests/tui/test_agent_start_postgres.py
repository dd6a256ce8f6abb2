"""The agent console's start on PostgreSQL: a tester saw the first queue take 3-5 s
where SQLite took 1.1-1.5 s. Before its first read, every start took the migration lock and wrote
the schema's version back (eight round trips and a commit waiting for the server's disk, in every
console, bot and browser session, on a database already up to date), and the console's first
presence write (racing the queue's read on the desk's one thread) waited for the disk too (each
such commit 1-100 ms on a busy test machine, more on a loaded disk). Now an up-to-date database
is read (two statements) and nothing written, and presence's commit waits for no disk.

Statements are counted as the store sends them (`psycopg.Connection.execute`, and the
transactions `Connection.transaction` opens), on every connection the app makes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.store.postgres import PostgresStore
from chatbot.tui import create_app
from tests.backends import postgres_server
from tests.tui.conftest import SIZE
from tests.tui.helpers import queue_rows, wait_until

GIVE_UP_S = 30.0
QUEUE_READ = "WHERE c.state = 'waiting' ORDER BY"
"""The first queue's read of the waiting conversations."""


@pytest.fixture
def url() -> Iterator[str]:
    """A migrated database of its own."""
    server = postgres_server()
    made = server.create()
    yield made
    server.drop(made)


class Sent:
    """Every statement any connection of this process sends, and the transactions opened with
    `Connection.transaction` (their BEGIN and COMMIT are not `execute` calls)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.statements: list[str] = []
        self.transactions = 0
        execute = psycopg.Connection.execute
        transaction = psycopg.Connection.transaction

        def counted(conn: psycopg.Connection[Any], query: Any, *args: Any, **kwargs: Any) -> Any:
            text = query.decode() if isinstance(query, bytes) else str(query)
            self.statements.append(" ".join(text.split()))
            return execute(conn, query, *args, **kwargs)

        def opened(conn: psycopg.Connection[Any], *args: Any, **kwargs: Any) -> Any:
            self.transactions += 1
            return transaction(conn, *args, **kwargs)

        monkeypatch.setattr(psycopg.Connection, "execute", counted)
        monkeypatch.setattr(psycopg.Connection, "transaction", opened)


def version_row(url: str) -> tuple[str, int]:
    """The schema version's row: its xmin (which transaction last wrote it) and the version."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT xmin::text, version FROM schema_versions WHERE component = 'conversations'"
        ).fetchone()
    assert row is not None
    return row[0], row[1]


def test_opening_an_up_to_date_database_reads_its_version_and_writes_nothing(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = version_row(url)
    sent = Sent(monkeypatch)
    PostgresStore.open(url).close()
    statements, transactions = list(sent.statements), sent.transactions
    assert version_row(url) == before  # Not written again: no commit waited for the disk.
    assert transactions == 0
    # The connection's settings, then the version (is the table ours, and which version).
    assert len(statements) == 3, statements
    assert statements[0].startswith("SET statement_timeout")
    assert not any("pg_advisory" in s or "INSERT" in s for s in statements)


async def test_the_console_reads_its_first_queue_after_no_commit_that_waits_for_the_disk(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    desk = open_service(load_settings(store={"db": url}))
    try:
        for question in ("Where is my refund?", "My bike has a flat tyre"):
            conversation = desk.start_conversation().id
            desk.talk_to_person(conversation)
            desk.ask(conversation, question)
    finally:
        desk.close()
    before = version_row(url)
    sent = Sent(monkeypatch)
    settings = load_settings(store={"db": url})
    app = create_app(settings, mode="agent", timings=False, bot=False, agent="ana")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(queue_rows(app)) == 2, timeout=GIVE_UP_S)
    transactions = sent.transactions
    assert version_row(url) == before
    assert transactions == 0
    first = next(n for n, s in enumerate(sent.statements) if QUEUE_READ in s)
    ahead = sent.statements[:first]
    # Each connection's settings (the desk's, the change feed's), the schema's version (two),
    # LISTEN, the change feed's cursor; and maybe the console's first presence, racing the read:
    # one transaction of five statements whose commit waits for no disk.
    assert len(ahead) <= 11, ahead
    begun = [s for s in ahead if s.startswith("BEGIN")]
    assert all("synchronous_commit = off" in s for s in begun), begun
    assert not any("schema_versions" in s and "INSERT" in s for s in ahead), ahead
