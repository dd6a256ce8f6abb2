"""The composition root: the one place that builds stores, engines and desk services from
settings, for the CLI, the app, bot workers and tests."""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chatbot.config import Settings
from chatbot.dburl import (
    SQLITE_URL_FORM,
    display,
    is_postgres,
    postgres_url_problem,
    sqlite_url_path,
    sqlite_url_problem,
)
from chatbot.desk.clock import Clock, utc_now
from chatbot.errors import HelpdeskError
from chatbot.i18n import DEFAULT_LOCALE, LOCALES, Locale

# The desk, its store and the accounts (some thirty pydantic models, ~0.15 s to import) are
# imported by the functions that open them, so `helpdesk ask` and an engine alone never load them;
# likewise httpx and the Valen client, which replaying recorded answers does not use, and the
# engine (numpy, the BM25 index), which an app builds only after its first screen.
if TYPE_CHECKING:
    import ssl

    import httpx

    from chatbot.accounts.service import AccountService
    from chatbot.desk.service import DeskService
    from chatbot.engine.engine import Engine
    from chatbot.engine.live import LiveEngine
    from chatbot.engine.models import Answer
    from chatbot.knowledge_base.interface import KnowledgeBaseStore
    from chatbot.knowledge_base.models import Passage
    from chatbot.store.interface import ConversationStore
    from chatbot.store.postgres import PostgresStore
    from chatbot.store.sqlite import SQLiteStore
    from chatbot.valen.client import ValenClient
    from chatbot.valen.judge import PassageJudge

log = logging.getLogger(__name__)


def store_location(db: str) -> Path:
    """The SQLite file a `store.db` setting names: a plain path or `sqlite:///path`, by the rule
    `--db` and `HELPDESK_DB` are checked with (`chatbot.dburl`), so a setting that reaches here
    some other way (a settings file, a test's `Settings`) is read, or refused, the same way.

    Other URLs are refused with one line; the URL itself is never echoed (it may hold a password).
    A `postgresql://` URL is `open_store`'s to handle, not this function's.
    """
    if not db.strip():
        raise HelpdeskError(f"store.db is empty: give a SQLite file path or {SQLITE_URL_FORM}")
    if is_postgres(db):
        raise HelpdeskError("store.db: a PostgreSQL URL is not a file")
    if (problem := sqlite_url_problem(db)) is not None:
        raise HelpdeskError(f"store.db: {problem}")
    return Path(sqlite_url_path(db)).expanduser()


def refuse_special_file(db: str) -> None:
    """Refuse, with the line `helpdesk bot` and `serve` say (`SQLiteStore.open`), a SQLite
    `store.db` that is there and is not a regular file (a FIFO, a device, a folder), before
    anything opens it: `stats`, `doctor`, `conversations` and `users list` waited forever on a
    FIFO, and read `/dev/null` as a database with no help-desk tables."""
    if is_postgres(db):
        return
    from chatbot.files import special_file

    path = store_location(db)
    if (kind := special_file(path)) is not None:
        raise HelpdeskError(f"{path}: is {kind}, expected a database file")


def require_database_name(db: str) -> None:
    """Refuse, with one line, a `postgresql://` `store.db` naming no database: libpq would
    connect to the one named as the user (`postgres`) and the help desk's tables be made there.
    `--db` and `HELPDESK_DB` are refused so before anything runs (`settings_from`); this is for
    settings that reach a store some other way (a browser session's, a test's)."""
    if is_postgres(db) and (problem := postgres_url_problem(db)) is not None:
        raise HelpdeskError(f"store.db: {problem}")


def store_name(db: str) -> str:
    """The database as it may be shown: a SQLite file's path, or a URL without its password."""
    return display(db) if is_postgres(db) else str(store_location(db))


def latest_schema_version(db: str) -> int:
    """The schema version this helpdesk migrates the database `db` names to."""
    if is_postgres(db):
        from chatbot.store.postgres_schema import MIGRATIONS

        return len(MIGRATIONS)
    from chatbot.store.schema import MIGRATIONS as SQLITE_MIGRATIONS

    return len(SQLITE_MIGRATIONS)


def _open(settings: Settings, *, clock: Clock, migrate: bool) -> PostgresStore | SQLiteStore:
    db = settings.store.db
    if is_postgres(db):
        from chatbot.store.postgres import PostgresStore

        require_database_name(db)
        return PostgresStore.open(
            db, clock=clock, migrate=migrate, timeout_s=settings.store.timeout_s
        )
    from chatbot.store.sqlite import SQLiteStore

    return SQLiteStore.open(store_location(db), clock=clock, migrate=migrate)


def open_store(
    settings: Settings, *, clock: Clock = utc_now, migrate: bool = True
) -> ConversationStore:
    """The conversation store `settings.store.db` names, opened and migrated: a SQLite file, or
    a PostgreSQL database for `postgresql://` (the driver is loaded only then).

    `migrate=False` is for the commands that only read: they never change the schema (a newer
    host migrating a shared database locks out the older hosts still using it), so a database
    older than this helpdesk's is refused with one line (`OlderSchema`) naming what upgrades it.
    """
    store = _open(settings, clock=clock, migrate=migrate)
    if migrate:
        return store
    found, latest = store.schema_version, latest_schema_version(settings.store.db)
    if found < latest:
        from chatbot.store.interface import OlderSchema

        store.close()
        raise OlderSchema(
            f"the database at {store_name(settings.store.db)} is at schema version {found}, older"
            f" than this helpdesk's {latest}: start the app, `helpdesk bot` or `helpdesk serve`"
            " once to upgrade it"
        )
    return store


def open_service(
    settings: Settings, *, clock: Clock = utc_now, migrate: bool = True
) -> DeskService:
    """A desk service on its own store connection, for the thread that calls this; `migrate`
    as for `open_store`."""
    from chatbot.desk.service import DeskService

    return DeskService(
        open_store(settings, clock=clock, migrate=migrate),
        max_attempts=settings.bot.max_attempts,
        release_after_s=settings.agent.release_after_s,
        passage_check=KnowledgeBaseCheck(settings),
    )


def make_http_client(settings: Settings, *, started: bool = False) -> httpx.AsyncClient:
    """The one HTTP client a process uses for Valen, with explicit timeouts and at most one
    connection per request allowed in flight, over aiohttp's connection pool (see
    `chatbot.valen.transport` for why); aiohttp is loaded on the first request, not here, unless
    `started` (for a caller that times that request).

    When it will ask Valen (live or recording, or `started`), the certificates its TLS trusts are
    read here, once: `SSL_CERT_FILE` or `SSL_CERT_DIR` naming nothing usable raises
    `HelpdeskError`, one line, before anything is asked (see `check_valen_trust`)."""
    import httpx

    from chatbot.valen.transport import ValenTransport

    valen = settings.valen
    verify: ssl.SSLContext | bool = True  # Replaying only: nothing is sent, nothing read.
    if started or valen.replay != "on":
        from chatbot.valen.trust import context_for

        verify = context_for(valen.base_url)
    transport = ValenTransport(max_connections=valen.max_in_flight, verify=verify)
    if started:
        transport.start()
    return httpx.AsyncClient(
        timeout=httpx.Timeout(
            valen.read_timeout_s, connect=valen.connect_timeout_s, pool=valen.budget_s
        ),
        transport=transport,
    )


def check_valen_trust(settings: Settings) -> None:
    """Refuse, with one `HelpdeskError` line, `SSL_CERT_FILE` or `SSL_CERT_DIR` naming no usable
    CA certificates (a file that is not there, one holding no certificate), when `settings` ask
    Valen live at an `https://` base URL: every request would fail. `make_http_client` does it
    for whoever makes a client; this is for `helpdesk serve`, which makes none itself, before it
    starts the bots and browser sessions that would each fail at theirs."""
    if settings.valen.replay != "on":
        from chatbot.valen.trust import context_for

        context_for(settings.valen.base_url)  # Made once: the process's clients share it.


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
    from chatbot.valen.cache import ReplayCache
    from chatbot.valen.judge import PassageJudge

    valen = settings.valen
    client = None
    if valen.replay != "on":
        if http is None:
            raise ValueError(f"replay mode {valen.replay!r} asks Valen: an HTTP client is needed")
        client = make_valen_client(settings, http)
    return PassageJudge(replay=valen.replay, cache=ReplayCache(valen.cache), client=client)


def open_knowledge_base(
    settings: Settings, *, lock_timeout: float = 10.0, create: bool = False
) -> KnowledgeBaseStore:
    """The knowledge base `settings.knowledge_base.path` names: a directory of passage files, or
    a PostgreSQL database (connected now, so a server that refuses is one line at start).

    A PostgreSQL database without the knowledge base's tables is refused with one line unless
    `create` (`helpdesk kb import`, the one command that makes a knowledge base): opening made
    them, so a mistyped database name became a new, empty knowledge base, and the bot, the app
    and `ask` sent every question to a person (`no-passages`) without a word."""
    location = settings.knowledge_base.path
    if isinstance(location, str):
        # Imported here: the driver costs start-up time that a knowledge base on files never uses.
        from chatbot.knowledge_base.postgres import PostgresPassageStore

        return PostgresPassageStore.open(
            location, timeout_s=settings.store.timeout_s, create=create
        )
    from chatbot.knowledge_base.store import PassageStore

    return PassageStore(location, lock_timeout=lock_timeout)


def check_knowledge_base(settings: Settings) -> None:
    """Refuse, with one `HelpdeskError` line, a knowledge base that is not there: a directory
    that is missing or not a directory (its passages are not read: an app reads them after its
    first screen), or a PostgreSQL database that cannot be reached or has no knowledge base's
    tables (connected to, and left as it is). For the app, `serve` and `helpdesk bot`, before
    they start."""
    location = settings.knowledge_base.path
    if isinstance(location, str):
        open_knowledge_base(settings).close()
        return
    from chatbot.knowledge_base.errors import require_directory

    require_directory(location)


def build_engine(
    settings: Settings,
    http: httpx.AsyncClient | None,
    knowledge_base: KnowledgeBaseStore | None = None,
    *,
    judge: PassageJudge | None = None,
) -> Engine:
    """The answer-or-escalate engine over the configured knowledge base (or `knowledge_base`,
    a translation of it, say); `http` may be None when replaying only, see `make_judge`; pass
    `judge` to share one Valen client between engines."""
    from chatbot.engine.engine import Engine
    from chatbot.retrieval.retrievers import BM25Retriever

    store = knowledge_base if knowledge_base is not None else open_knowledge_base(settings)
    try:
        passages = store.passages()
        synonyms = store.synonyms()
    finally:
        if knowledge_base is None:
            store.close()
    from chatbot.knowledge_base.translated import TranslatedPassageStore

    return Engine(
        retriever=BM25Retriever(passages, synonyms=synonyms),
        judge=judge if judge is not None else make_judge(settings, http),
        threshold=settings.engine.threshold,
        k=settings.engine.k,
        # A translation's engine says so in each result: its passages are only that language's.
        locale=store.locale if isinstance(store, TranslatedPassageStore) else None,
    )


def translated_knowledge_base(settings: Settings, locale: Locale) -> Path | None:
    """The knowledge base for conversations in `locale`: the subfolder of that name in the
    configured one (`zh/`), if it has one; None: they are answered from the configured one."""
    location = settings.knowledge_base.path
    if locale == DEFAULT_LOCALE or isinstance(location, str):
        return None  # A knowledge base on PostgreSQL holds no translations yet.
    directory = location / locale
    return directory if directory.is_dir() else None


def build_question_engine(
    settings: Settings, http: httpx.AsyncClient | None, question: str
) -> Engine:
    """The engine a customer asking `question` is answered by (`helpdesk ask`): a question in a
    language with a translated knowledge base goes to that one, as the bot sends a conversation
    in that language, with the main one's passages written in it."""
    from chatbot.i18n import detect_locale

    locale = detect_locale(question)
    directory = translated_knowledge_base(settings, locale)
    if directory is None:
        return build_engine(settings, http)
    from chatbot.knowledge_base.translated import TranslatedPassageStore

    main = settings.knowledge_base.path
    assert isinstance(main, Path)
    store = TranslatedPassageStore(directory, main=main, locale=locale)
    return build_engine(settings, http, store)


class KnowledgeBaseCheck:
    """The desk's `PassageCheck` over the knowledge base `settings` name: the passage an answer
    came from is read again, by its id, where a conversation in that language is answered from
    (a translation folder, then the main knowledge base's passages written in its language, as
    the translation's engine reads them), and compared by what the customer was shown: its title
    and text. Not by a revision or a stamp: a decision keeps neither, while title and text are
    the same for files and PostgreSQL, a translation and the main knowledge base.

    Nothing is opened until the first check, so a process whose customers never repeat a
    question reads nothing. A knowledge base on files is then kept open until `close`; one on
    PostgreSQL is closed after each check: kept, its connection was one more per process (a
    browser customer's session went from 3 to 4 at their first repeated question), held for a
    read needed only when a customer repeats one."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._main: KnowledgeBaseStore | None = None

    def __call__(self, locale: Locale, answer: Answer) -> bool:
        try:
            passage = self._passage(locale, answer.id)
        except (HelpdeskError, OSError) as error:
            # Counted as changed: the bot judges the question, with the passages it has.
            log.warning("cannot read passage %s to check an earlier answer: %s", answer.id, error)
            return False
        return passage is not None and (passage.title, passage.text) == (answer.title, answer.text)

    def _passage(self, locale: Locale, passage_id: str) -> Passage | None:
        """The passage of that id a conversation in `locale` is answered from now (None: none)."""
        from chatbot.knowledge_base.interface import PassageNotFoundError

        directory = translated_knowledge_base(self.settings, locale)
        if directory is not None:
            from chatbot.knowledge_base.store import PassageStore

            try:
                return PassageStore(directory).get(passage_id).passage
            except PassageNotFoundError:
                pass
        try:
            passage = self._main_store().get(passage_id).passage
        except PassageNotFoundError:
            return None
        finally:
            if isinstance(self.settings.knowledge_base.path, str):
                self.close()
        if directory is not None:
            from chatbot.knowledge_base.translated import written_in

            return passage if written_in(passage, locale) else None
        return passage

    def _main_store(self) -> KnowledgeBaseStore:
        if self._main is None:
            self._main = open_knowledge_base(self.settings, lock_timeout=2.0)
        return self._main

    def close(self) -> None:
        if self._main is not None:
            self._main.close()
            self._main = None


def engine_readers(engines: Mapping[Locale, LiveEngine]) -> dict[Locale, Callable[[], Engine]]:
    """For a bot worker: each language's engine, read at the moment of use."""

    def reader(live: LiveEngine) -> Callable[[], Engine]:
        return lambda: live.engine

    return {locale: reader(live) for locale, live in engines.items()}


def build_locale_engines(
    settings: Settings,
    http: httpx.AsyncClient | None,
    engine: Engine,
    *,
    on_problem: Callable[[str], None] | None = None,
) -> dict[Locale, LiveEngine]:
    """An engine following each translated knowledge base, sharing `engine`'s Valen judge; a
    translation that cannot be loaded is told to `on_problem` and left out (its conversations
    are answered from the configured knowledge base)."""
    from chatbot.engine.live import LiveEngine

    engines: dict[Locale, LiveEngine] = {}
    for locale in LOCALES:
        directory = translated_knowledge_base(settings, locale)
        if directory is None:
            continue
        from chatbot.knowledge_base.translated import TranslatedPassageStore

        main = settings.knowledge_base.path
        assert isinstance(main, Path)  # A translation is a folder of a knowledge base on files.
        store = TranslatedPassageStore(directory, main=main, locale=locale, lock_timeout=2.0)
        try:
            built = build_engine(settings, http, store, judge=engine.judge)
        except HelpdeskError as error:
            store.close()
            if on_problem is not None:
                on_problem(f"{locale} knowledge base {directory}: {error}")
            continue
        engines[locale] = LiveEngine(built, store, on_problem=on_problem)
    return engines


def require_database(settings: Settings) -> None:
    """For the commands that only read (or change what is there): a SQLite file that does not
    exist is one line, where opening it would make an empty database, folders and all, at a
    mistyped path and report on that. Opening would also make the help desk's tables in a
    database that has none (another application's SQLite file or PostgreSQL database, an empty
    file, or `postgres` typed for `helpdesk`): that is refused the same way."""
    db = settings.store.db
    if is_postgres(db):
        from chatbot.store.postgres import stored_version

        require_database_name(db)
        if stored_version(db) is None:
            raise HelpdeskError(
                f"{store_name(db)}: no help-desk tables there (the app, `helpdesk bot` and "
                "`helpdesk serve` make them on first use)"
            )
        return
    refuse_special_file(db)
    path = store_location(db)
    if not path.exists():
        raise HelpdeskError(
            f"{path}: no database there (the app, `helpdesk bot` and `helpdesk serve` make it "
            "on first use)"
        )
    from chatbot.store.sqlite import stored_version as sqlite_version

    # As for PostgreSQL: opening would add the help desk's tables to another application's file.
    if sqlite_version(path) is None:
        raise HelpdeskError(
            f"{path}: no help-desk tables there (the app, `helpdesk bot` and `helpdesk serve` "
            "make them on first use)"
        )


def open_accounts(settings: Settings, *, migrate: bool = True) -> AccountService:
    """The account service over the conversations' database, for the thread that calls this;
    `migrate=False` (`users list`) as for `open_store`: an older schema is refused, not upgraded."""
    from chatbot.accounts.service import AccountService

    db = settings.store.db
    require_database_name(db)
    if not migrate:
        open_store(settings, migrate=False).close()  # Refuses an older schema; changes nothing.
    if is_postgres(db):
        from chatbot.store.postgres import Link
        from chatbot.store.postgres_users import PostgresUserStore

        if not migrate:  # Opening migrates, which even at this version writes its version row.
            link = Link(db, timeout_s=settings.store.timeout_s)
            return AccountService(PostgresUserStore(link, clock=utc_now))
        return AccountService(PostgresUserStore.open(db, timeout_s=settings.store.timeout_s))
    from chatbot.store.sqlite_users import SQLiteUserStore

    # Read-only without `migrate`: `users list` reads a database in a folder it cannot write.
    return AccountService(SQLiteUserStore.open(store_location(db), migrate=migrate))


@dataclass(frozen=True)
class DatabaseReport:
    """What `helpdesk doctor` says about the database: where (never the password), what server,
    which schema, how far away."""

    database: str
    server: str
    schema_version: int
    """The version the database is at (0: none of the help desk's tables)."""
    helpdesk_schema_version: int
    """The version this helpdesk migrates to. A database below it is left as it is, and upgraded
    by the next process that writes (the app, `helpdesk bot`, `helpdesk serve`)."""
    latency_ms: float
    """The median of a few round trips of a one-row read."""
    waiting_for_a_bot: int | None = 0
    """Questions no bot holds now: asked, and not yet taken by any worker. None: not counted, the
    schema being older than this helpdesk's, or not the help desk's."""
    oldest_wait_for_a_bot_s: float | None = None
    """How long the oldest of them has waited (None: none waits). Long, and no bot is running,
    unless bots hold others (`held_by_a_bot`): then they are busy."""
    held_by_a_bot: int | None = 0
    """Questions a bot holds now (its lease renewed by a live worker's heartbeat). None: not
    counted, as `waiting_for_a_bot`."""
    other_tables: tuple[str, ...] = ()
    """The tables found where none is the help desk's: most likely another application's
    database, named by mistake. Empty for the help desk's own, and for an empty database."""
    knowledge_base: bool = False
    """Whether a PostgreSQL database with none of the conversations' tables holds the knowledge
    base's (`helpdesk kb import` first, as the docs have it): the help desk's database, not yet
    used by the desk."""


# The tables someone made in a PostgreSQL database: not the system's, not another session's
# temporary ones, not an extension's (PostGIS's `spatial_ref_sys` is no sign of another app), and
# a partitioned table once, not each partition.
_POSTGRES_TABLES = r"""
SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\_temp\_%' AND n.nspname NOT LIKE 'pg\_toast%'
  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                  AND d.objid = c.oid AND d.deptype = 'e')
ORDER BY 1
"""


def _median_ms(read: Callable[[], object], round_trips: int) -> float:
    timings = []
    for _ in range(round_trips):
        start = time.perf_counter()
        read()
        timings.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(timings), 3)


def _sqlite_other_tables(path: Path, round_trips: int) -> tuple[list[str], float]:
    """The tables of the SQLite file at `path` when none is the help desk's, and the latency of
    a read there; no tables when it has the help desk's, none at all, or cannot be read (opening
    it as the store then says why). Read-only: nothing is made or changed, not even a journal."""
    import sqlite3

    from chatbot.store.sqlite import other_tables

    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except (sqlite3.Error, OSError, ValueError):
        return [], 0.0
    try:
        if not (names := other_tables(conn)):
            return [], 0.0
        return names, _median_ms(conn.execute("PRAGMA user_version").fetchone, round_trips)
    except sqlite3.Error:
        return [], 0.0
    finally:
        conn.close()


def _postgres_tables(settings: Settings) -> list[str]:
    """Every table someone made in the PostgreSQL database (see `_POSTGRES_TABLES`), as
    PostgreSQL names them (schema-qualified outside the search path)."""
    import psycopg

    from chatbot.store.postgres import Link

    link = Link(settings.store.db, timeout_s=settings.store.timeout_s)
    try:
        conn = link.connection()
        with link.watched(conn):
            return [str(name) for (name,) in conn.execute(_POSTGRES_TABLES.encode()).fetchall()]
    except psycopg.Error as error:
        raise link.fail(error, "cannot read the database") from None
    finally:
        link.drop()


def _holds_knowledge_base(tables: list[str]) -> bool:
    """Whether `tables` (as `_postgres_tables` names them) hold a knowledge base: its `kb_meta`,
    which the knowledge base's store itself looks for."""
    from chatbot.knowledge_base.postgres import TABLES

    return TABLES[0] in tables


def check_database(settings: Settings, *, round_trips: int = 5) -> DatabaseReport:
    """Open the configured database as it is and measure it; `HelpdeskError` if it cannot be
    used. Its schema is never migrated: a newer host's `doctor` would lock the older hosts out
    of a shared database. Nor is anything made in a database holding only other tables
    (`other_tables`): it is reported, untouched, for the person to check it is the right one."""
    db = settings.store.db
    latest = latest_schema_version(db)
    if not is_postgres(db):
        import sqlite3

        refuse_special_file(db)  # Before SQLite opens it: a FIFO's open waits for a writer.
        # Before the store opens it: another application's `user_version` would be read as
        # the help desk's schema version (and one above ours refused as "upgrade helpdesk").
        other, latency = _sqlite_other_tables(store_location(db), round_trips)
        if other:
            return DatabaseReport(
                database=store_name(db),
                server=f"SQLite {sqlite3.sqlite_version}",
                schema_version=0,
                helpdesk_schema_version=latest,
                latency_ms=latency,
                waiting_for_a_bot=None,
                held_by_a_bot=None,
                other_tables=tuple(other),
            )
    store = _open(settings, clock=utc_now, migrate=False)
    try:
        version = store.schema_version
        if is_postgres(db):
            from chatbot.store.postgres import PostgresStore

            assert isinstance(store, PostgresStore)
            server = f"PostgreSQL {store.server_version()}"
            postgres = store

            def untabled() -> object:
                return postgres.server_version()
        else:
            import sqlite3

            server = f"SQLite {sqlite3.sqlite_version}"
            lite = store

            def untabled() -> object:
                return lite.schema_version  # PRAGMA user_version, read each time.

        # An older schema may lack the tables these read (SQLite's before version 3 have no log of
        # entries): it is timed on a read of no table, and its backlog is not counted.
        current = version >= latest
        latency = _median_ms(store.last_entry_id if current else untabled, round_trips)
        backlog, oldest = store.bot_backlog() if current else (None, None)
        held = store.bot_holds() if current else None
        # No help-desk schema there (PostgreSQL's is in `schema_versions`): an empty database,
        # another application's, or one holding the help desk's knowledge base alone.
        other = _postgres_tables(settings) if version == 0 and is_postgres(db) else []
        knowledge_base = _holds_knowledge_base(other)
        if knowledge_base:  # Its kb_* tables are the help desk's; any others share it.
            other = []
    finally:
        store.close()
    return DatabaseReport(
        database=store_name(db),
        server=server,
        schema_version=version,
        helpdesk_schema_version=latest,
        latency_ms=latency,
        waiting_for_a_bot=None if other else backlog,
        oldest_wait_for_a_bot_s=None if oldest is None else round(oldest, 1),
        held_by_a_bot=None if other else held,
        other_tables=tuple(other),
        knowledge_base=knowledge_base,
    )
