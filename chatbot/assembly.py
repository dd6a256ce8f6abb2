"""The composition root: the one place that builds stores, engines and desk services from
settings, for the CLI, the app, bot workers and tests."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from chatbot.config import Settings
from chatbot.desk.clock import Clock, utc_now
from chatbot.engine.engine import Engine
from chatbot.errors import HelpdeskError
from chatbot.knowledge_base.storage import load_knowledge_base
from chatbot.knowledge_base.synonyms import load_synonyms
from chatbot.retrieval.retrievers import BM25Retriever
from chatbot.valen.cache import ReplayCache
from chatbot.valen.judge import PassageJudge

# The desk, its store and the accounts (some thirty pydantic models, ~0.15 s to import) are
# imported by the functions that open them, so `helpdesk ask` and an engine alone never load them;
# likewise httpx and the Valen client, which replaying recorded answers does not use.
if TYPE_CHECKING:
    import httpx

    from chatbot.accounts.service import AccountService
    from chatbot.desk.service import DeskService
    from chatbot.store.interface import ConversationStore
    from chatbot.valen.client import ValenClient

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def store_location(db: str) -> Path:
    """The SQLite file a `store.db` setting names: a plain path or `sqlite:///path`.

    Other URLs are refused with one line; the URL itself is never echoed (it may hold a password).
    """
    match = _SCHEME.match(db)
    if match is None:
        if not db.strip():
            raise HelpdeskError("store.db is empty: give a SQLite file path or sqlite:///path")
        return Path(db).expanduser()
    scheme = match.group(1).lower()
    if scheme == "sqlite":
        rest = db[match.end() :]
        if not rest or "?" in rest:
            raise HelpdeskError("store.db: write a SQLite URL as sqlite:///path/to/file.sqlite3")
        return Path(rest).expanduser()
    if scheme in ("postgresql", "postgres"):
        raise HelpdeskError(
            "store.db: PostgreSQL is not supported yet; use a SQLite file path or sqlite:///path"
        )
    raise HelpdeskError(f"store.db: unknown database scheme {scheme!r}; use a SQLite file path")


def open_store(settings: Settings, *, clock: Clock = utc_now) -> ConversationStore:
    """The conversation store `settings.store.db` names, opened and migrated."""
    from chatbot.store.sqlite import SQLiteStore

    return SQLiteStore.open(store_location(settings.store.db), clock=clock)


def open_service(settings: Settings, *, clock: Clock = utc_now) -> DeskService:
    """A desk service on its own store connection, for the thread that calls this."""
    from chatbot.desk.service import DeskService

    return DeskService(open_store(settings, clock=clock), max_attempts=settings.bot.max_attempts)


def make_http_client(settings: Settings) -> httpx.AsyncClient:
    """The one HTTP client a process uses for Valen, with explicit timeouts and at most one
    connection per request allowed in flight, over aiohttp's connection pool (see
    `chatbot.valen.transport` for why); aiohttp is loaded on the first request, not here."""
    import httpx

    from chatbot.valen.transport import ValenTransport

    valen = settings.valen
    return httpx.AsyncClient(
        timeout=httpx.Timeout(
            valen.read_timeout_s, connect=valen.connect_timeout_s, pool=valen.budget_s
        ),
        transport=ValenTransport(max_connections=valen.max_in_flight),
    )


def make_valen_client(settings: Settings, http: httpx.AsyncClient) -> ValenClient:
    from chatbot.valen.client import RetryPolicy, ValenClient

    valen = settings.valen
    return ValenClient(
        http,
        base_url=valen.base_url,
        dialect=valen.dialect,
        api_key=valen.api_key,
        model=valen.model,
        max_in_flight=valen.max_in_flight,
        retry=RetryPolicy(
            max_attempts=valen.max_attempts,
            base_delay_s=valen.backoff_base_s,
            max_delay_s=valen.backoff_cap_s,
            max_wait_s=valen.max_retry_wait_s,
            retry_gateway_timeout=valen.retry_gateway_timeout,
        ),
        budget_s=valen.budget_s,
    )


def make_judge(settings: Settings, http: httpx.AsyncClient | None) -> PassageJudge:
    """Replay cache in front of the live client, as the replay mode says. Replaying only
    (`replay = "on"`) makes no request, so `http` may then be None."""
    valen = settings.valen
    client = None
    if valen.replay != "on":
        if http is None:
            raise ValueError(f"replay mode {valen.replay!r} asks Valen: an HTTP client is needed")
        client = make_valen_client(settings, http)
    return PassageJudge(replay=valen.replay, cache=ReplayCache(valen.cache), client=client)


def build_engine(settings: Settings, http: httpx.AsyncClient | None) -> Engine:
    """The answer-or-escalate engine over the configured knowledge base (`http` may be None
    when replaying only, see `make_judge`)."""
    passages = load_knowledge_base(settings.knowledge_base.path)
    synonyms = load_synonyms(settings.knowledge_base.path)
    return Engine(
        retriever=BM25Retriever(passages, synonyms=synonyms),
        judge=make_judge(settings, http),
        threshold=settings.engine.threshold,
        k=settings.engine.k,
    )


def open_accounts(settings: Settings) -> AccountService:
    """The account service over the conversations' database, for the thread that calls this."""
    from chatbot.accounts.service import AccountService
    from chatbot.store.sqlite_users import SQLiteUserStore

    return AccountService(SQLiteUserStore.open(store_location(settings.store.db)))
