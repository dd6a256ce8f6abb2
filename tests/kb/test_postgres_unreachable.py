"""A PostgreSQL knowledge base that cannot be reached is told apart from a broken one by its type
(`KnowledgeBaseUnreachable`), and a follower's rebuilds in an outage tell it once, as an
`Unreachable` line that keeps the detail for a log (never the password)."""

from __future__ import annotations

from urllib.parse import urlsplit

import psycopg
import pytest
from psycopg import sql

from chatbot.engine.engine import Engine
from chatbot.engine.live import LiveEngine, Unreachable
from chatbot.knowledge_base import Passage
from chatbot.knowledge_base.errors import KnowledgeBaseUnreachable
from chatbot.knowledge_base.postgres import PostgresPassageStore
from chatbot.knowledge_base.storage import KnowledgeBaseError
from chatbot.retrieval.retrievers import BM25Retriever
from chatbot.valen.cache import ReplayCache
from chatbot.valen.judge import PassageJudge
from tests.conftest import ROOT
from tests.kb.backends import admin_url, pg_url
from tests.kb.helpers import SECRET, with_password

__all__ = ["pg_url"]


def allow_connections(url: str, allowed: bool) -> None:
    """The database refuses connections, every one it has ended (or takes them again); the
    shared server itself is never stopped."""
    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(admin_url(), autocommit=True) as admin:
        admin.execute(
            sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS {}").format(
                sql.Identifier(name), sql.SQL("true" if allowed else "false")
            )
        )
        if not allowed:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (name,),
            )


async def test_an_outage_is_told_once_as_unreachable_and_a_broken_row_in_its_own_words(
    pg_url: str,
) -> None:
    url = with_password(pg_url, SECRET)
    with PostgresPassageStore.open(url) as writer:
        writer.add(Passage(id="helmet", text="Helmets."))
    store = PostgresPassageStore.open(url)
    judge = PassageJudge(replay="on", cache=ReplayCache(ROOT / "caches" / "rerank.json"))
    told: list[str] = []
    live = LiveEngine(
        Engine(retriever=BM25Retriever(store.passages()), judge=judge), store,
        on_problem=told.append,
    )  # fmt: skip
    try:
        allow_connections(pg_url, False)
        with pytest.raises(KnowledgeBaseUnreachable):
            store.load()
        for _ in range(3):
            assert await live.rebuild() is None
        assert len(told) == 1, told
        assert isinstance(told[0], Unreachable)
        assert "cannot connect to the knowledge base" in told[0]  # The detail, for a log.
        assert SECRET not in told[0]

        allow_connections(pg_url, True)
        assert await live.rebuild() is not None
        allow_connections(pg_url, False)  # A second outage is told again.
        assert await live.rebuild() is None
        assert len(told) == 2 and isinstance(told[1], Unreachable)
        allow_connections(pg_url, True)

        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("UPDATE kb_passages SET content = 'not json'")
        assert await live.rebuild() is not None  # The last good version of it stays.
        assert len(told) == 3 and not isinstance(told[2], Unreachable)
        assert "helmet" in told[2]
    finally:
        allow_connections(pg_url, True)
        store.close()


def test_a_refused_statement_is_no_outage(pg_url: str) -> None:
    """The server answers and refuses: said as before, not as the server being away."""
    with PostgresPassageStore.open(pg_url) as store:
        with pytest.raises(KnowledgeBaseError) as refused:
            store._run("cannot read", lambda c: c.execute("SELECT 1 FROM no_such_table"))
        assert not isinstance(refused.value, KnowledgeBaseUnreachable)
