"""The knowledge base in PostgreSQL, for a help desk whose editors and bots sit on many machines.

The same store as the directory of files (`chatbot.knowledge_base.store`), kept in four tables:
`kb_passages` holds each passage as its file would (`passage_file_text`), so revisions, exports and
imports match the files' exactly; `kb_history` the versions a save, delete, restore or import
replaced; `kb_synonyms` the synonym groups; `kb_meta` the schema version and a generation counter.

Every write is one transaction that first locks the `kb_meta` row, so writes to one knowledge base
happen one at a time (as under the files' lock file), then checks the revision it was based on,
writes, bumps the generation and sends `NOTIFY helpdesk_kb`, which PostgreSQL delivers at commit:
a follower hears of a change only once it can be read, and never of a write that was refused.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self, TypeVar, cast

import psycopg
from psycopg import sql

from chatbot.dburl import display, postgres_url_problem, redact
from chatbot.knowledge_base.errors import KnowledgeBaseUnreachable
from chatbot.knowledge_base.interface import (
    CheckReport,
    ConflictError,
    DuplicatePassageError,
    ImportReport,
    PassageNotFoundError,
    Reason,
    Scan,
    StoredPassage,
    Version,
    checked_id,
    choose_version,
    passage_file_text,
    restorable,
    revision_of,
)
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.storage import (
    KnowledgeBaseError,
    LoadedKnowledgeBase,
    decode_json,
    parse_passage,
    unusable,
)
from chatbot.knowledge_base.synonyms import SynonymGroup, synonyms_toml
from chatbot.pgdeadline import DEFAULT_TIMEOUT_S, Deadline, server_settings, watchdog
from chatbot.pgslots import NoConnectionToSpare, full_reason, no_connection_to_spare

SCHEMA_VERSION = 1
CHANNEL = "helpdesk_kb"
"""The channel every change is announced on; the payload is the new generation."""
CONNECT_TIMEOUT_S = 5
RELISTEN_S = 1.0
"""How soon a follower whose server is away tries to listen again."""
TABLES = ("kb_meta", "kb_passages", "kb_history", "kb_synonyms")
"""The knowledge base's tables; `kb_meta` is there whenever the others are (see `_SCHEMA`)."""
_SCHEMA_LOCK = 0x6B620001
"""An advisory lock key, so two processes creating the schema at once do it one after the other."""

_SCHEMA = [
    """CREATE TABLE kb_meta (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        schema_version integer NOT NULL,
        generation bigint NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE kb_passages (
        id text PRIMARY KEY,
        content text NOT NULL,
        revision text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
    )""",
    """CREATE TABLE kb_history (
        id text NOT NULL,
        number integer NOT NULL,
        reason text NOT NULL CHECK (reason IN ('edit', 'delete', 'restore', 'import')),
        archived_at timestamptz NOT NULL,
        content text NOT NULL,
        PRIMARY KEY (id, number)
    )""",
    """CREATE TABLE kb_synonyms (
        position integer PRIMARY KEY,
        words text[] NOT NULL
    )""",
]

T = TypeVar("T")
log = logging.getLogger(__name__)


class KnowledgeBaseFull(KnowledgeBaseError, NoConnectionToSpare):
    """The server refused the knowledge base a connection: every one it allows is in use."""


class PostgresPassageStore:
    """A knowledge base in one PostgreSQL database; safe to share between threads (one connection,
    used by one thread at a time: the editor's and the CLI's calls are short and rare)."""

    def __init__(
        self,
        url: str,
        *,
        connect_timeout: int = CONNECT_TIMEOUT_S,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        create: bool = True,
    ) -> None:
        # Refused before connecting: libpq would take the database named as the user
        # (`postgres`), and an import would make the knowledge base there.
        if (problem := postgres_url_problem(url)) is not None:
            raise KnowledgeBaseError(f"{display(url)}: {problem}")
        self._url = url
        self._create = create
        """Whether a database without the knowledge base's tables gets them (see `open`)."""
        self._location = display(url)
        self._connect_timeout = connect_timeout
        self._timeout_s = timeout_s
        self._lock = threading.RLock()
        self._conn: psycopg.Connection[Any] | None = None
        self._last_good: dict[str, Passage] = {}

    @classmethod
    def open(
        cls, url: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, create: bool = True
    ) -> PostgresPassageStore:
        """Connect now (creating the schema on first use): a server that refuses is one line.
        `timeout_s` is how long a call may go unanswered (`chatbot.pgdeadline`). Without
        `create`, a database with no knowledge base's tables is refused with one line instead:
        `helpdesk kb` makes them only for an import, as it makes a folder only for one, so a
        mistyped database name never silently becomes a new, nearly empty knowledge base."""
        store = cls(url, timeout_s=timeout_s, create=create)
        store._connection()
        return store

    @property
    def location(self) -> str:
        return self._location

    # Connections --------------------------------------------------------------------------------

    def _fail(
        self, what: str, error: BaseException | str, *, unreachable: bool = False
    ) -> KnowledgeBaseError:
        """One line naming the database (never its password) and what went wrong; `unreachable`:
        the server is away, not refusing this call (`KnowledgeBaseUnreachable`)."""
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        reason = redact(reason, self._url)
        kind = KnowledgeBaseUnreachable if unreachable else KnowledgeBaseError
        return kind(f"{self._location}: {what}: {reason}")

    def connect(self, **options: Any) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self._url, connect_timeout=self._connect_timeout, **options)
        except psycopg.Error as error:
            reason = " ".join(str(error).split())
            if no_connection_to_spare(reason):  # Said as such: not an outage, nor a bad setting.
                said = redact(f"{self._location}: knowledge base: {full_reason(reason)}", self._url)
                raise KnowledgeBaseFull(said) from None
            # libpq's failures to connect are OperationalErrors; others (a bad option) are not.
            unreachable = isinstance(error, psycopg.OperationalError)
            raise self._fail(
                "cannot connect to the knowledge base", error, unreachable=unreachable
            ) from None

    def _connection(self) -> psycopg.Connection[Any]:
        with self._lock:
            if self._conn is None or self._conn.closed or self._conn.broken:
                conn = self.connect(application_name="helpdesk")
                try:
                    self._limit(conn)
                    self._ensure_schema(conn)
                except BaseException:
                    conn.close()
                    raise
                self._conn = conn
            return self._conn

    def _limit(self, conn: psycopg.Connection[Any]) -> None:
        """Have the server end a statement a little before the call's deadline, and a backend
        whose client has gone, as the desk's connections do (`chatbot.pgdeadline`): cut on our
        side only, a write waiting on a held lock left its backend waiting, holding a slot."""
        settings = server_settings(self._timeout_s, server_version=conn.info.server_version)
        try:
            with watchdog.guard(conn.fileno(), self._timeout_s):
                conn.execute("; ".join(f"SET {k} = {v}" for k, v in settings.items()).encode())
                conn.commit()  # Not autocommit: a SET rolled back with its transaction is undone.
        except psycopg.Error as error:
            unreachable = _gone(conn, error)
            raise self._fail(
                "cannot connect to the knowledge base", error, unreachable=unreachable
            ) from None

    def _ensure_schema(self, conn: psycopg.Connection[Any]) -> None:
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                row = conn.execute("SELECT to_regclass('kb_meta') IS NOT NULL").fetchone()
                if row is not None and row[0]:
                    found = conn.execute("SELECT schema_version FROM kb_meta").fetchone()
                    version = int(found[0]) if found is not None else 0
                    if version > SCHEMA_VERSION:
                        raise KnowledgeBaseError(
                            f"{self._location}: the knowledge base's schema is version {version}, "
                            f"newer than this helpdesk knows ({SCHEMA_VERSION}); upgrade helpdesk"
                        )
                    return
                if not self._create:
                    raise KnowledgeBaseError(
                        f"{self._location}: no knowledge base there (no kb_* tables); "
                        "`helpdesk kb import DIR --kb URL` makes one"
                    )
                for statement in _SCHEMA:
                    conn.execute(cast(Any, statement))
                conn.execute("INSERT INTO kb_meta (schema_version) VALUES (%s)", (SCHEMA_VERSION,))
        except psycopg.Error as error:
            unreachable = _gone(conn, error)
            raise self._fail(
                "cannot prepare the knowledge base's tables", error, unreachable=unreachable
            ) from None

    def _run(
        self, what: str, work: Callable[[psycopg.Connection[Any]], T], *, read: bool = False
    ) -> T:
        """`work` in one transaction; database failures become one `KnowledgeBaseError` line.
        A read on a connection the server dropped (it restarted) is tried once more on a new
        one; a write is not: whether it committed is unknown, so the caller is told it failed."""
        with self._lock:
            for attempt in (1, 2):
                conn = self._connection()
                deadline: Deadline | None = None
                try:
                    with watchdog.guard(conn.fileno(), self._timeout_s) as deadline:
                        with conn.transaction():
                            return work(conn)
                except psycopg.errors.QueryCanceled:
                    # (An OperationalError too.) Ended by the server at its `statement_timeout`
                    # (see `_limit`), just before the deadline: the same failure, on a connection
                    # that stays usable.
                    raise self._fail(what, f"no answer in {self._timeout_s:g} s") from None
                except psycopg.OperationalError as error:
                    # The connection may be dead even if psycopg has not marked it so: the next
                    # use opens a new one.
                    gone = _gone(conn, error)
                    self._drop(conn)
                    if deadline is not None and deadline.expired:  # The server is not answering.
                        silent = f"no answer in {self._timeout_s:g} s"
                        raise self._fail(what, silent, unreachable=True) from None
                    if read and attempt == 1:
                        continue
                    raise self._fail(what, error, unreachable=gone) from None
                except psycopg.Error as error:
                    raise self._fail(what, error) from None
            raise AssertionError("unreachable")

    def _drop(self, conn: psycopg.Connection[Any]) -> None:
        if self._conn is conn:
            self._conn = None
        try:
            conn.close()
        except psycopg.Error:
            pass

    @contextmanager
    def _writing(self, conn: psycopg.Connection[Any]) -> Iterator[None]:
        """Hold the knowledge base's write lock for the rest of the transaction."""
        conn.execute("SELECT 1 FROM kb_meta FOR UPDATE")
        yield

    def _announce(self, conn: psycopg.Connection[Any]) -> None:
        """Count the change and tell every listener, both delivered at commit."""
        row = conn.execute(
            "UPDATE kb_meta SET generation = generation + 1 RETURNING generation"
        ).fetchone()
        assert row is not None
        conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, str(row[0])))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # Reading ------------------------------------------------------------------------------------

    def _parse(self, passage_id: str, content: str) -> Passage:
        where = f"{self._location}: passage {passage_id!r}"
        passage = parse_passage(decode_json(content.encode("utf-8"), where=where), where=where)
        if passage.id != passage_id:
            raise KnowledgeBaseError(f"{where}: holds passage {passage.id!r}")
        return passage

    def _rows(self) -> list[tuple[str, str]]:
        return self._run(
            "cannot read passages",
            lambda c: c.execute("SELECT id, content FROM kb_passages ORDER BY id").fetchall(),
            read=True,
        )

    def scan(self) -> Scan:
        good: list[StoredPassage] = []
        problems: list[str] = []
        for passage_id, content in self._rows():
            try:
                passage = self._parse(passage_id, content)
            except KnowledgeBaseError as error:
                problems.append(str(error))
                continue
            good.append(StoredPassage(passage, revision_of(content.encode("utf-8"))))
        return Scan(good, problems, [])

    def read_all(self) -> list[StoredPassage]:
        scan = self.scan()
        if scan.problems:
            raise KnowledgeBaseError(scan.problems[0])
        return scan.passages

    def passages(self) -> list[Passage]:
        loaded = self.load()
        for line in loaded.skipped:
            log.warning("%s", line)
        return loaded.passages

    def load(self) -> LoadedKnowledgeBase:
        """As the files' `load`: a row that is no passage (written by hand) is skipped with a line,
        or keeps the version this store last used."""
        passages: list[Passage] = []
        skipped: list[str] = []
        for passage_id, content in self._rows():
            try:
                passages.append(self._parse(passage_id, content))
            except KnowledgeBaseError as error:
                kept = self._last_good.get(passage_id)
                if kept is not None:
                    passages.append(kept)
                skipped.append(unusable(str(error), kept=kept is not None))
        self._last_good = {passage.id: passage for passage in passages}
        return LoadedKnowledgeBase(passages, skipped)

    def _current(self, conn: psycopg.Connection[Any], passage_id: str) -> str | None:
        row = conn.execute(
            "SELECT content FROM kb_passages WHERE id = %s", (checked_id(passage_id),)
        ).fetchone()
        return None if row is None else str(row[0])

    def _read_current(self, passage_id: str) -> str | None:
        return self._run("cannot read a passage", lambda c: self._current(c, passage_id), read=True)

    def get(self, passage_id: str) -> StoredPassage:
        content = self._read_current(passage_id)
        if content is None:
            raise PassageNotFoundError(f"passage {passage_id!r} not found in {self._location}")
        return StoredPassage(self._parse(passage_id, content), revision_of(content.encode()))

    def exists(self, passage_id: str) -> bool:
        return self._read_current(passage_id) is not None

    def _versions(self, conn: psycopg.Connection[Any], passage_id: str) -> list[Version]:
        rows = conn.execute(
            "SELECT number, reason, archived_at, content FROM kb_history WHERE id = %s "
            "ORDER BY number",
            (checked_id(passage_id),),
        ).fetchall()
        return [
            Version(id=passage_id, number=n, reason=cast(Reason, r), archived_at=at, content=text)
            for n, r, at, text in rows
        ]

    def history(self, passage_id: str) -> list[Version]:
        def read(conn: psycopg.Connection[Any]) -> tuple[list[Version], bool]:
            return self._versions(conn, passage_id), self._current(conn, passage_id) is not None

        versions, exists = self._run("cannot read history", read, read=True)
        if not versions and not exists:
            raise PassageNotFoundError(f"passage {passage_id!r} not found and has no history")
        return versions

    def deleted(self) -> list[str]:
        rows = self._run(
            "cannot read history",
            lambda c: c.execute(
                "SELECT DISTINCT h.id FROM kb_history h "
                "WHERE NOT EXISTS (SELECT 1 FROM kb_passages p WHERE p.id = h.id) ORDER BY h.id"
            ).fetchall(),
            read=True,
        )
        return [str(row[0]) for row in rows]

    def synonyms(self) -> tuple[SynonymGroup, ...]:
        rows = self._run(
            "cannot read synonyms",
            lambda c: c.execute("SELECT words FROM kb_synonyms ORDER BY position").fetchall(),
            read=True,
        )
        return tuple(tuple(row[0]) for row in rows)

    def synonyms_revision(self) -> str | None:
        rows = self._run(
            "cannot read synonyms",
            lambda c: c.execute("SELECT words FROM kb_synonyms ORDER BY position").fetchall(),
            read=True,
        )
        return _synonyms_revision(tuple(tuple(row[0]) for row in rows))

    def save_synonyms(self, groups: Sequence[SynonymGroup], *, based_on: str | None) -> str:
        self._replace_synonyms(groups, based_on=based_on, check=True)
        revision = _synonyms_revision(tuple(groups))
        assert revision is not None or not groups
        return revision or ""

    def set_synonyms(self, groups: Sequence[SynonymGroup]) -> None:
        """Replace every synonym group (what importing a directory's `synonyms.toml` does)."""
        self._replace_synonyms(groups, based_on=None, check=False)

    def _replace_synonyms(
        self, groups: Sequence[SynonymGroup], *, based_on: str | None, check: bool
    ) -> None:
        def write(conn: psycopg.Connection[Any]) -> None:
            with self._writing(conn):
                # The write lock is held: the groups read here are the ones replaced.
                if check:
                    rows = conn.execute(
                        "SELECT words FROM kb_synonyms ORDER BY position"
                    ).fetchall()
                    if _synonyms_revision(tuple(tuple(r[0]) for r in rows)) != based_on:
                        raise ConflictError(
                            "the synonyms were changed by someone else since you opened them"
                        )
                conn.execute("DELETE FROM kb_synonyms")
                for position, words in enumerate(groups):
                    conn.execute(
                        "INSERT INTO kb_synonyms (position, words) VALUES (%s, %s)",
                        (position, list(words)),
                    )
                self._announce(conn)

        self._run("cannot save synonyms", write)

    # Noticing changes ---------------------------------------------------------------------------

    def stamp(self) -> int | None:
        try:
            row = self._run(
                "cannot read",
                lambda c: c.execute("SELECT generation FROM kb_meta").fetchone(),
                read=True,
            )
        except KnowledgeBaseError:
            return None
        return None if row is None else int(row[0])

    def watch(self) -> PostgresWatch:
        return PostgresWatch(self._url, self._connect_timeout, fail=self._fail)

    # Writing ------------------------------------------------------------------------------------

    def add(self, passage: Passage) -> StoredPassage:
        def write(conn: psycopg.Connection[Any]) -> StoredPassage:
            with self._writing(conn):
                if self._current(conn, passage.id) is not None:
                    raise DuplicatePassageError(f"passage {passage.id!r} already exists")
                stored = self._put(conn, passage)
                self._announce(conn)
                return stored

        return self._run("cannot add the passage", write)

    def save(self, passage: Passage, *, based_on: str) -> StoredPassage:
        def write(conn: psycopg.Connection[Any]) -> StoredPassage:
            with self._writing(conn):
                current = self._current(conn, passage.id)
                self._check_revision(passage.id, current, based_on)
                assert current is not None
                if current == passage_file_text(passage):
                    return StoredPassage(passage, revision_of(current.encode("utf-8")))
                self._archive(conn, passage.id, current, reason="edit")
                stored = self._put(conn, passage)
                self._announce(conn)
                return stored

        return self._run("cannot save the passage", write)

    def delete(self, passage_id: str, *, based_on: str | None = None) -> Version:
        def write(conn: psycopg.Connection[Any]) -> Version:
            with self._writing(conn):
                current = self._current(conn, passage_id)
                if current is None:
                    raise PassageNotFoundError(
                        f"passage {passage_id!r} not found in {self._location}"
                    )
                if based_on is not None:
                    self._check_revision(passage_id, current, based_on)
                version = self._archive(conn, passage_id, current, reason="delete")
                conn.execute("DELETE FROM kb_passages WHERE id = %s", (passage_id,))
                self._announce(conn)
                return version

        return self._run("cannot delete the passage", write)

    def restore(
        self, passage_id: str, *, version: int | None = None, based_on: str | None = None
    ) -> StoredPassage:
        def write(conn: psycopg.Connection[Any]) -> StoredPassage:
            with self._writing(conn):
                versions = self._versions(conn, passage_id)
                current = self._current(conn, passage_id)
                if not versions and current is None:
                    raise PassageNotFoundError(
                        f"passage {passage_id!r} not found and has no history"
                    )
                passage = restorable(passage_id, choose_version(passage_id, versions, version))
                if based_on is not None:
                    self._check_revision(passage_id, current, based_on)
                if current == passage_file_text(passage):  # Already the current version.
                    return StoredPassage(passage, revision_of(current.encode("utf-8")))
                if current is not None:
                    self._archive(conn, passage_id, current, reason="restore")
                stored = self._put(conn, passage)
                self._announce(conn)
                return stored

        return self._run("cannot restore the passage", write)

    def import_passages(
        self, passages: Sequence[Passage], *, replace: bool = False
    ) -> ImportReport:
        """All or nothing: one transaction, refused whole if an id exists and not `replace`."""

        def write(conn: psycopg.Connection[Any]) -> ImportReport:
            report = ImportReport()
            with self._writing(conn):
                for passage in passages:
                    current = self._current(conn, passage.id)
                    if current == passage_file_text(passage):
                        report.unchanged.append(passage.id)
                        continue
                    if current is not None and not replace:
                        raise DuplicatePassageError(
                            f"passage {passage.id!r} already exists (use --replace to overwrite; "
                            "nothing was imported)"
                        )
                    if current is None:
                        report.added.append(passage.id)
                    else:
                        report.replaced.append(passage.id)
                        self._archive(conn, passage.id, current, reason="import")
                    self._put(conn, passage)
                if report.added or report.replaced:
                    self._announce(conn)
            return report

        return self._run("cannot import (nothing was imported)", write)

    # Checking -----------------------------------------------------------------------------------

    def check(self) -> CheckReport:
        scan = self.scan()
        notes = [f"passage {pid!r} is deleted; `restore` brings it back" for pid in self.deleted()]
        return CheckReport(passages=len(scan.passages), problems=scan.problems, notes=notes)

    # Internals ----------------------------------------------------------------------------------

    def _check_revision(self, passage_id: str, current: str | None, based_on: str) -> None:
        if current is None:
            raise ConflictError(
                f"passage {passage_id!r} was deleted by someone else since you opened it"
            )
        if revision_of(current.encode("utf-8")) != based_on:
            raise ConflictError(
                f"passage {passage_id!r} was changed by someone else since you opened it"
            )

    def _put(self, conn: psycopg.Connection[Any], passage: Passage) -> StoredPassage:
        content = passage_file_text(passage)
        revision = revision_of(content.encode("utf-8"))
        conn.execute(
            "INSERT INTO kb_passages (id, content, revision) VALUES (%s, %s, %s) "
            "ON CONFLICT (id) DO UPDATE SET content = EXCLUDED.content, "
            "revision = EXCLUDED.revision, updated_at = now()",
            (checked_id(passage.id), content, revision),
        )
        return StoredPassage(passage, revision)

    def _archive(
        self, conn: psycopg.Connection[Any], passage_id: str, content: str, *, reason: Reason
    ) -> Version:
        row = conn.execute(
            "SELECT coalesce(max(number), 0) + 1 FROM kb_history WHERE id = %s", (passage_id,)
        ).fetchone()
        assert row is not None
        version = Version(
            id=passage_id,
            number=int(row[0]),
            reason=reason,
            archived_at=datetime.now(UTC),
            content=content,
        )
        conn.execute(
            "INSERT INTO kb_history (id, number, reason, archived_at, content) "
            "VALUES (%s, %s, %s, %s, %s)",
            (passage_id, version.number, reason, version.archived_at, content),
        )
        return version


class PostgresWatch:
    """`LISTEN helpdesk_kb` on a connection of its own; `wait` returns at the first notification.

    A notification is best-effort (one sent while this reconnects is lost), so a follower still
    compares stamps after every wait, and a wait that cannot listen lasts its whole timeout."""

    def __init__(
        self,
        url: str,
        connect_timeout: int,
        *,
        fail: Callable[[str, BaseException], KnowledgeBaseError],
    ) -> None:
        self._url = url
        self._connect_timeout = connect_timeout
        self._fail = fail
        self._conn: psycopg.AsyncConnection[Any] | None = None

    async def _listening(self) -> psycopg.AsyncConnection[Any]:
        if self._conn is None or self._conn.closed or self._conn.broken:
            await self.aclose()
            conn = await psycopg.AsyncConnection.connect(
                self._url,
                autocommit=True,
                connect_timeout=self._connect_timeout,
                application_name="helpdesk",
            )
            await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
            self._conn = conn
        return self._conn

    async def start(self) -> None:
        """Listen now, so a change made right after this returns is heard."""
        try:
            await self._listening()
        except psycopg.Error as error:
            raise self._fail("cannot listen for changes", error) from None

    async def wait(self, timeout: float) -> bool:
        try:
            conn = await self._listening()
        except psycopg.Error:
            # The server is away: try again soon, not at every turn of a tight loop.
            await asyncio.sleep(min(timeout, RELISTEN_S))
            return False
        try:
            async for _notify in conn.notifies(timeout=timeout, stop_after=1):
                return True
            return False
        except psycopg.Error:
            # The connection dropped (a server restart): the caller compares stamps now, which
            # catches whatever was missed, and the next wait listens again on a new connection.
            await self.aclose()
            return False

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                await conn.close()
            except psycopg.Error:
                pass

    async def __aenter__(self) -> Self:
        try:
            await self.start()
        except KnowledgeBaseError:
            pass  # `wait` keeps trying; a follower falls back on comparing stamps.
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


def _gone(conn: psycopg.Connection[Any], error: psycopg.Error) -> bool:
    """Whether `error` is the connection ending (the server went away, shut down or ended this
    backend), as opposed to the server refusing one statement (a full disk, say)."""
    if conn.closed or conn.broken or error.sqlstate is None:  # None: libpq's own, the link's.
        return True
    return error.sqlstate.startswith(("08", "57P"))  # Connection exception; shutdown, terminated.


def _synonyms_revision(groups: tuple[SynonymGroup, ...]) -> str | None:
    """The revision the files would give the same groups (a digest of their `synonyms.toml`), so
    an editor's save names one kind of revision on both backends; None when there are none."""
    return revision_of(synonyms_toml(groups).encode()) if groups else None
