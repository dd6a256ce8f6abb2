"""The app on PostgreSQL: a knowledge base seeded with the shipped passages (and whether the
app listens to it), that knowledge base made unreachable, and a desk database behind a
relay that can be cut."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from chatbot.assembly import open_service
from chatbot.config import Settings, load_settings
from chatbot.knowledge_base.postgres import PostgresPassageStore
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.screens.editor import EditorScreen
from tests.backends import postgres_server
from tests.conftest import ROOT, SHIPPED_CACHE, SHIPPED_KB
from tests.freezing_relay import FreezingRelay
from tests.kb.backends import admin_url


@pytest.fixture
def kb_url(pg_url: str) -> Iterator[str]:
    """A PostgreSQL knowledge base seeded with the shipped passages, as `kb import` does."""
    subprocess.run(
        [sys.executable, "-m", "chatbot", "kb", "import", str(SHIPPED_KB), "--kb", pg_url],
        cwd=ROOT, check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    yield pg_url


def _listening(url: str) -> bool:
    with PostgresPassageStore(url).connect(autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND query LIKE 'LISTEN%'"
        ).fetchone()
    return row is not None and row[0] > 0


NOT_DONE = {
    "en": "Not done: the knowledge base cannot be reached. Try again in a moment.",
    "zh": "未完成：无法连接知识库。请稍后再试。",
}
NOT_DONE_BACK = {
    "en": "The knowledge base can be reached again, but that was not done: try it again now.",
    "zh": "知识库已恢复连接，但刚才的操作未完成：请现在重试。",
}


@pytest.fixture(params=["en", "zh"])
def locale(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def settings(db_path: Path, kb_url: str, locale: str) -> Settings:
    # The desk stays in SQLite: only the knowledge base goes away.
    return load_settings(
        store={"db": db_path},
        knowledge_base={"path": kb_url},
        valen={"cache": SHIPPED_CACHE, "replay": "on"},
        ui={"locale": locale},
    )


class Outage:
    """Makes the knowledge base's database refuse connections, and allows them again."""

    def __init__(self, url: str) -> None:
        self.name = urlsplit(url).path.lstrip("/")
        self._admin = psycopg.connect(admin_url(), autocommit=True)

    def start(self) -> None:
        database = sql.Identifier(self.name)
        self._admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(database))
        self._admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (self.name,),
        )

    def end(self) -> None:
        database = sql.Identifier(self.name)
        self._admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(database))

    def close(self) -> None:
        self.end()  # Whatever the test did: the database is dropped afterwards.
        self._admin.close()


@pytest.fixture
def outage(kb_url: str) -> Iterator[Outage]:
    made = Outage(kb_url)
    try:
        yield made
    finally:
        made.close()


def notices(editor: EditorScreen) -> list[str]:
    """The editor's notifications. Not the index's "Knowledge base not reloaded: …", which the
    app's follower of the knowledge base says of a failed rebuild (`chatbot.tui.kb_index`), with
    or without the editor: another part's wording (an outage it says plainly, once: see
    test_kb_outage_notice)."""
    said = [notification.message for notification in editor.app._notifications]
    return [line for line in said if not line.startswith("Knowledge base not reloaded: ")]


TROUBLE = "The desk's database cannot be reached: retrying. Nothing is lost."


@pytest.fixture
def relayed() -> Iterator[tuple[str, str, FreezingRelay]]:
    """A database of its own, reached through a relay that can be cut (its URL), and directly
    (the other URL, for the test's own writes)."""
    server = postgres_server()
    url = server.create()
    parts = urlsplit(url)
    relay = FreezingRelay((parts.hostname or "127.0.0.1", parts.port or 5432))
    netloc = parts.netloc.rsplit("@", 1)[0] + f"@127.0.0.1:{relay.port}"
    try:
        yield urlunsplit(parts._replace(netloc=netloc)), url, relay
    finally:
        relay.close()
        server.drop(url)


def helmet_waiting(direct: str) -> int:
    """A conversation waiting for a person with "Where is my helmet?", written straight to the
    database (`relayed`'s second URL): what the agent's Find looks for through the relay."""
    other = open_service(load_settings(store={"db": direct}))
    try:
        conversation = other.start_conversation().id
        other.talk_to_person(conversation)
        other.ask(conversation, "Where is my helmet?")
    finally:
        other.close()
    return conversation


def agent_through(url: str, deadline_s: float) -> HelpDeskApp:
    """Agent ana's console on the relayed database, its calls failing after `deadline_s`."""
    settings = load_settings(store={"db": url, "timeout_s": deadline_s})
    return create_app(settings, mode="agent", timings=False, bot=False, agent="ana")
