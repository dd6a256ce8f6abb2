"""Accounts in the conversations' SQLite file (`UserStore`).

Their tables come with the conversations' migrations (`chatbot.store.schema`, version 4): opening
this store opens (and so migrates) the database as the conversation store does, with the same
private file, WAL and busy timeout.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chatbot.accounts.models import Account, Role
from chatbot.desk.clock import Clock, utc_now
from chatbot.store.interface import StoreError
from chatbot.store.sqlite import BUSY_TIMEOUT_MS, SQLiteStore, _connect
from chatbot.store.users import AccountExists, AccountNotFound, StoredAccount

SECRET_BYTES = 32
REVOKED_PER_QUERY = 500

_COLUMNS = "name, display_name, role, session_epoch, created_at, password_hash, incarnation"
INCARNATION_BYTES = 16
"""An account's incarnation (`Account.incarnation`): 128 random bits, never made twice."""


def _account(row: tuple[Any, ...]) -> Account:
    name, display_name, role, epoch, created_at = row[:5]
    return Account(
        name=name,
        display_name=display_name,
        role=Role(role),
        session_epoch=epoch,
        created_at=datetime.fromtimestamp(created_at, UTC),
        incarnation=row[6],
    )


class SQLiteUserStore:
    """Accounts over one SQLite file. One instance per thread."""

    def __init__(self, connection: sqlite3.Connection, *, path: Path, clock: Clock) -> None:
        self._db = connection
        self.path = path
        self._clock = clock

    @classmethod
    def open(cls, path: Path, *, clock: Clock = utc_now, migrate: bool = True) -> SQLiteUserStore:
        """Open (creating it, private, if needed) and migrate the database at `path`.

        `migrate=False` is for the commands that only read (`users list`), as for
        `SQLiteStore.open`: the file must exist and is opened read-only, so a backup or a folder
        this user cannot write is read (migrating made the `-shm` file, and failed there)."""
        # One-off: it runs the migrations, or (not `migrate`) refuses a file not ours or newer.
        checked = SQLiteStore.open(path, clock=clock, migrate=migrate)
        path = checked.path
        checked.close()
        connection = _connect(path, create=migrate)
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        except sqlite3.Error as error:
            connection.close()
            raise StoreError(f"{path}: cannot use database: {error}") from None
        return cls(connection, path=path, clock=clock)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: {error}") from None

    def _now(self) -> float:
        return self._clock().timestamp()

    def add_account(
        self, *, name: str, display_name: str, role: Role, password_hash: str
    ) -> Account:
        now = self._now()
        with self._write() as db:
            try:
                db.execute(
                    "INSERT INTO accounts (name, display_name, role, password_hash, created_at,"
                    " updated_at, incarnation) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (name, display_name, role.value, password_hash, now, now,
                     secrets.token_urlsafe(INCARNATION_BYTES)),
                )  # fmt: skip
            except sqlite3.IntegrityError:
                raise AccountExists(f"account {name!r} exists already") from None
            row = db.execute(f"SELECT {_COLUMNS} FROM accounts WHERE name = ?", (name,)).fetchone()
        return _account(row)

    def get_account(self, name: str) -> StoredAccount | None:
        try:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM accounts WHERE name = ?", (name,)
            ).fetchone()
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: {error}") from None
        if row is None:
            return None
        return StoredAccount(account=_account(row), password_hash=row[5])

    def accounts(self) -> list[Account]:
        try:
            rows = self._db.execute(f"SELECT {_COLUMNS} FROM accounts ORDER BY name").fetchall()
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: {error}") from None
        return [_account(row) for row in rows]

    def remove_account(self, name: str) -> None:
        with self._write() as db:
            if db.execute("DELETE FROM accounts WHERE name = ?", (name,)).rowcount == 0:
                raise AccountNotFound(f"no account is named {name!r}")

    def update_account(
        self,
        name: str,
        *,
        password_hash: str | None = None,
        display_name: str | None = None,
        role: Role | None = None,
        end_sessions: bool = True,
    ) -> Account:
        with self._write() as db:
            changed = db.execute(
                "UPDATE accounts SET password_hash = coalesce(?, password_hash),"
                " display_name = coalesce(?, display_name), role = coalesce(?, role),"
                " session_epoch = session_epoch + ?, updated_at = ? WHERE name = ?",
                (password_hash, display_name, None if role is None else role.value,
                 int(end_sessions), self._now(), name),
            ).rowcount  # fmt: skip
            if changed == 0:
                raise AccountNotFound(f"no account is named {name!r}")
            row = db.execute(f"SELECT {_COLUMNS} FROM accounts WHERE name = ?", (name,)).fetchone()
        return _account(row)

    def session_secret(self) -> bytes:
        with self._write() as db:
            # Two processes starting at once both try; the first insert wins and both read it.
            db.execute(
                "INSERT OR IGNORE INTO server_secrets (name, value) VALUES ('session', ?)",
                (secrets.token_bytes(SECRET_BYTES),),
            )
            (value,) = db.execute(
                "SELECT value FROM server_secrets WHERE name = 'session'"
            ).fetchone()
        return bytes(value)

    def failed_sign_ins(
        self, name_key: str, *, address_key: str | None = None, since: float, limit: int
    ) -> list[float]:
        pair = "" if address_key is None else " AND address_key = ?"
        try:
            rows = self._db.execute(
                f"SELECT at FROM sign_in_failures WHERE name_key = ?{pair} AND at > ?"
                " ORDER BY at DESC LIMIT ?",
                (name_key, *(() if address_key is None else (address_key,)), since, limit),
            ).fetchall()
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: {error}") from None
        return [at for (at,) in rows]

    def add_failed_sign_in(
        self, name_key: str, *, address_key: str, at: float, forget_before: float
    ) -> None:
        with self._write() as db:
            db.execute("DELETE FROM sign_in_failures WHERE at < ?", (forget_before,))
            db.execute(
                "INSERT INTO sign_in_failures (name_key, address_key, at) VALUES (?, ?, ?)",
                (name_key, address_key, at),
            )

    def forget_failed_sign_ins(self, name_key: str, *, address_key: str) -> None:
        with self._write() as db:
            db.execute(
                "DELETE FROM sign_in_failures WHERE name_key = ? AND address_key = ?",
                (name_key, address_key),
            )

    def revoke_session(self, digest: str, *, expires_at: float, forget_before: float) -> None:
        with self._write() as db:
            db.execute("DELETE FROM revoked_sessions WHERE expires_at < ?", (forget_before,))
            db.execute(
                "INSERT INTO revoked_sessions (digest, expires_at) VALUES (?, ?)"
                " ON CONFLICT (digest) DO UPDATE SET"
                " expires_at = max(expires_at, excluded.expires_at)",
                (digest, expires_at),
            )

    def revoked_sessions(self, digests: Collection[str]) -> set[str]:
        wanted = sorted(set(digests))
        found: set[str] = set()
        try:
            # In pieces under SQLite's older limit of 999 parameters: one query up to 500.
            for start in range(0, len(wanted), REVOKED_PER_QUERY):
                piece = wanted[start : start + REVOKED_PER_QUERY]
                rows = self._db.execute(
                    "SELECT digest FROM revoked_sessions"
                    f" WHERE digest IN ({', '.join('?' * len(piece))})",
                    piece,
                ).fetchall()
                found.update(digest for (digest,) in rows)
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: {error}") from None
        return found
