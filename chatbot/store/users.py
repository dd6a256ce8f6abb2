"""The account store's interface: what `AccountService` needs from storage.

Accounts live in the same database as conversations, so one backup, one `--db` and (later) one
PostgreSQL server hold everything. Backend-neutral: no SQL types, no connections.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from chatbot.accounts.models import Account, Role
from chatbot.errors import HelpdeskError


class AccountExists(HelpdeskError):
    """An account with that name exists already."""


class AccountNotFound(HelpdeskError):
    """No account has that name."""


class StoredAccount(BaseModel):
    """An account with its password hash, as the store keeps it."""

    model_config = ConfigDict(frozen=True)

    account: Account
    password_hash: str


class UserStore(Protocol):
    """Accounts and the key that signs web sessions. One instance is used from one thread."""

    def close(self) -> None: ...

    def add_account(
        self, *, name: str, display_name: str, role: Role, password_hash: str
    ) -> Account:
        """Create an account (`AccountExists` if the name is taken)."""
        ...

    def get_account(self, name: str) -> StoredAccount | None: ...

    def accounts(self) -> list[Account]:
        """Every account, by name."""
        ...

    def remove_account(self, name: str) -> None:
        """`AccountNotFound` if there is none."""
        ...

    def update_account(
        self,
        name: str,
        *,
        password_hash: str | None = None,
        display_name: str | None = None,
        role: Role | None = None,
        end_sessions: bool = True,
    ) -> Account:
        """Change what is given; with `end_sessions`, every session signed before is void."""
        ...

    def session_secret(self) -> bytes:
        """The key web sessions are signed with: made at random the first time, then the same
        for every process on every host that shares the database."""
        ...

    def failed_sign_ins(
        self, name_key: str, *, address_key: str | None = None, since: float, limit: int
    ) -> list[float]:
        """When the newest `limit` failed sign-ins under `name_key` after `since` were (seconds
        since the epoch), newest first, whichever process on whichever host counted them: those
        from the address under `address_key` alone if it is given, else from every address."""
        ...

    def add_failed_sign_in(
        self, name_key: str, *, address_key: str, at: float, forget_before: float
    ) -> None:
        """Count a failed sign-in under `name_key` from the address under `address_key`; every
        failure (of any name) before `forget_before` is deleted on the way, so the table holds
        only the window's."""
        ...

    def forget_failed_sign_ins(self, name_key: str, *, address_key: str) -> None:
        """A right password from that address: the failures under `name_key` from it no longer
        count (those from other addresses still do)."""
        ...

    def revoke_session(self, digest: str, *, expires_at: float, forget_before: float) -> None:
        """A sign-in signed out: the cookie with this digest is refused from now on, by every
        process sharing the database, until `expires_at` (when it runs out anyway). Revocations
        that expired before `forget_before` are deleted on the way."""
        ...

    def revoked_sessions(self, digests: Collection[str]) -> set[str]:
        """Which of `digests` are revoked: one query, however many (a round of session checks
        asks for every open console at once)."""
        ...


__all__ = ["AccountExists", "AccountNotFound", "StoredAccount", "UserStore"]
