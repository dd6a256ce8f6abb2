"""The knowledge-base stores the contract tests run against: a directory of files, and a fresh
PostgreSQL database of its own per test (created on the server `HELPDESK_TEST_POSTGRES` names,
dropped afterwards). A new backend is one more entry in `KB_BACKENDS`.

Without a reachable server only the PostgreSQL cases are skipped, with one line naming the URL
tried; with `HELPDESK_REQUIRE_POSTGRES=1` (CI) they fail instead.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from chatbot.dburl import display
from chatbot.knowledge_base.interface import KnowledgeBaseStore
from chatbot.knowledge_base.postgres import PostgresPassageStore
from chatbot.knowledge_base.store import PassageStore
from tests import postgres_env

KB_BACKENDS = ["files", "postgres"]


def admin_url() -> str:
    return postgres_env.ADMIN_URL


def with_database(url: str, name: str) -> str:
    """`url` pointing at database `name` instead."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))


@dataclass
class KnowledgeBaseBackend:
    """One fresh, empty knowledge base; each `open` is a store as another process has it."""

    name: str
    location: str
    """What `--kb` / `HELPDESK_KB` takes: a directory, or a database URL."""
    announces: bool
    """Whether other writers' changes are announced (LISTEN/NOTIFY), not only polled."""
    opened: list[KnowledgeBaseStore] = field(default_factory=list)

    def open(self) -> KnowledgeBaseStore:
        store: KnowledgeBaseStore
        if self.name == "postgres":
            store = PostgresPassageStore.open(self.location)
        else:
            store = PassageStore(Path(self.location))
        self.opened.append(store)
        return store

    def close(self) -> None:
        for store in self.opened:
            store.close()


def postgres_database() -> Iterator[str]:
    """A database of its own on the test server, dropped afterwards (even if a test left a
    connection open); skipped, or failed under HELPDESK_REQUIRE_POSTGRES=1, if unreachable."""
    admin = admin_url()
    try:
        conn = psycopg.connect(admin, autocommit=True, connect_timeout=3)
    except psycopg.Error as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        message = f"PostgreSQL unreachable at {display(admin)} (HELPDESK_TEST_POSTGRES): {reason}"
        if postgres_env.REQUIRED:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    name = f"helpdesk_kb_test_{secrets.token_hex(6)}"
    with conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            yield with_database(admin, name)
        finally:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture
def pg_url() -> Iterator[str]:
    """The URL of a fresh, empty PostgreSQL database."""
    yield from postgres_database()


@pytest.fixture(params=KB_BACKENDS)
def kb_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KnowledgeBaseBackend]:
    if request.param == "postgres":
        for url in postgres_database():
            backend = KnowledgeBaseBackend("postgres", url, announces=True)
            try:
                yield backend
            finally:
                backend.close()
    else:
        (tmp_path / "kb").mkdir()  # An empty knowledge base: a write makes no missing folder.
        backend = KnowledgeBaseBackend("files", str(tmp_path / "kb"), announces=False)
        try:
            yield backend
        finally:
            backend.close()
