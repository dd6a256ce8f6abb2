"""The account store's interface: what `AccountService` needs from storage.

Accounts live in the same database as conversations, so one backup, one `--db` and (later) one
PostgreSQL server hold everything. Backend-neutral: no SQL types, no connections.
"""

from __future__ import annotations

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


__all__ = ["AccountExists", "AccountNotFound", "StoredAccount", "UserStore"]
