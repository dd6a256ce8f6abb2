"""Accounts in the conversations' PostgreSQL database (`UserStore`).

Their tables come with the conversations' migrations (`chatbot.store.postgres_schema`): opening
this store migrates the database as the conversation store does.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg

from chatbot.accounts.models import Account, Role
from chatbot.desk.clock import Clock, utc_now
from chatbot.pgdeadline import DEFAULT_TIMEOUT_S
from chatbot.store.postgres import Link, migrate
from chatbot.store.users import AccountExists, AccountNotFound, StoredAccount

SECRET_BYTES = 32

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


class PostgresUserStore:
    """Accounts over one PostgreSQL database. One instance per thread."""

    def __init__(self, link: Link, *, clock: Clock) -> None:
        self._link = link
        self._clock = clock

    @classmethod
    def open(
        cls, url: str, *, clock: Clock = utc_now, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> PostgresUserStore:
        link = Link(url, timeout_s=timeout_s)
        migrate(link)
        return cls(link, clock=clock)

    def close(self) -> None:
        self._link.drop()

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection[Any]]:
        conn = self._link.connection()
        try:
            with self._link.watched(conn), conn.transaction():
                yield conn
        except psycopg.Error as error:
            if conn.broken or conn.closed:
                self._link.drop()
            raise self._link.fail(error, "cannot use accounts") from None

    def _now(self) -> float:
        return self._clock().timestamp()

    def add_account(
        self, *, name: str, display_name: str, role: Role, password_hash: str
    ) -> Account:
        now = self._now()
        with self._transaction() as conn:
            row = conn.execute(
                "INSERT INTO accounts (name, display_name, role, password_hash, created_at,"
                " updated_at, incarnation) VALUES (%s, %s, %s, %s, %s, %s, %s)"
                f" ON CONFLICT (name) DO NOTHING RETURNING {_COLUMNS}".encode(),
                (name, display_name, role.value, password_hash, now, now,
                 secrets.token_urlsafe(INCARNATION_BYTES)),
            ).fetchone()  # fmt: skip
        if row is None:
            raise AccountExists(f"account {name!r} exists already")
        return _account(row)

    def get_account(self, name: str) -> StoredAccount | None:
        with self._transaction() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM accounts WHERE name = %s".encode(), (name,)
            ).fetchone()
        if row is None:
            return None
        return StoredAccount(account=_account(row), password_hash=row[5])

    def accounts(self) -> list[Account]:
        with self._transaction() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM accounts ORDER BY name".encode()
            ).fetchall()
        return [_account(row) for row in rows]

    def remove_account(self, name: str) -> None:
        with self._transaction() as conn:
            removed = conn.execute("DELETE FROM accounts WHERE name = %s", (name,)).rowcount
        if removed == 0:
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
        with self._transaction() as conn:
            row = conn.execute(
                "UPDATE accounts SET password_hash = coalesce(%s, password_hash),"
                " display_name = coalesce(%s, display_name), role = coalesce(%s, role),"
                f" session_epoch = session_epoch + %s, updated_at = %s WHERE name = %s"
                f" RETURNING {_COLUMNS}".encode(),
                (password_hash, display_name, None if role is None else role.value,
                 int(end_sessions), self._now(), name),
            ).fetchone()  # fmt: skip
        if row is None:
            raise AccountNotFound(f"no account is named {name!r}")
        return _account(row)

    def session_secret(self) -> bytes:
        with self._transaction() as conn:
            # Two processes starting at once both try; the first insert wins and both read it.
            conn.execute(
                "INSERT INTO server_secrets (name, value) VALUES ('session', %s)"
                " ON CONFLICT (name) DO NOTHING",
                (secrets.token_bytes(SECRET_BYTES),),
            )
            row = conn.execute("SELECT value FROM server_secrets WHERE name = 'session'").fetchone()
        assert row is not None
        return bytes(row[0])

    def failed_sign_ins(
        self, name_key: str, *, address_key: str | None = None, since: float, limit: int
    ) -> list[float]:
        pair = "" if address_key is None else " AND address_key = %s"
        with self._transaction() as conn:
            rows = conn.execute(
                f"SELECT at FROM sign_in_failures WHERE name_key = %s{pair} AND at > %s"
                " ORDER BY at DESC LIMIT %s".encode(),
                (name_key, *(() if address_key is None else (address_key,)), since, limit),
            ).fetchall()
        return [float(at) for (at,) in rows]

    def add_failed_sign_in(
        self, name_key: str, *, address_key: str, at: float, forget_before: float
    ) -> None:
        with self._transaction() as conn:
            conn.execute("DELETE FROM sign_in_failures WHERE at < %s", (forget_before,))
            conn.execute(
                "INSERT INTO sign_in_failures (name_key, address_key, at) VALUES (%s, %s, %s)",
                (name_key, address_key, at),
            )

    def forget_failed_sign_ins(self, name_key: str, *, address_key: str) -> None:
        with self._transaction() as conn:
            conn.execute(
                "DELETE FROM sign_in_failures WHERE name_key = %s AND address_key = %s",
                (name_key, address_key),
            )

    def revoke_session(self, digest: str, *, expires_at: float, forget_before: float) -> None:
        with self._transaction() as conn:
            conn.execute("DELETE FROM revoked_sessions WHERE expires_at < %s", (forget_before,))
            conn.execute(
                "INSERT INTO revoked_sessions (digest, expires_at) VALUES (%s, %s)"
                " ON CONFLICT (digest) DO UPDATE SET"
                " expires_at = greatest(revoked_sessions.expires_at, excluded.expires_at)",
                (digest, expires_at),
            )

    def revoked_sessions(self, digests: Collection[str]) -> set[str]:
        wanted = sorted(set(digests))
        if not wanted:
            return set()
        with self._transaction() as conn:
            rows = conn.execute(
                "SELECT digest FROM revoked_sessions WHERE digest = ANY(%s)", (wanted,)
            ).fetchall()
        return {digest for (digest,) in rows}
