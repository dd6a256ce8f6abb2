"""The account service: the only way to create, change, check or remove an account.

Passwords are hashed with argon2id (argon2-cffi, RFC 9106 parameters): the hash carries its own
salt and parameters, so stronger defaults later rehash old accounts at their next sign-in.
"""

from __future__ import annotations

from functools import cached_property

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from chatbot.accounts.models import (
    MAX_PASSWORD,
    Account,
    Role,
    check_display_name,
    check_name,
    check_password,
    display_name_key,
)
from chatbot.errors import HelpdeskError
from chatbot.store.users import AccountNotFound, UserStore


class AccountService:
    """Accounts over a `UserStore`. Synchronous and bound to its store's thread."""

    def __init__(self, store: UserStore, *, hasher: PasswordHasher | None = None) -> None:
        self.store = store
        self.hasher = hasher or PasswordHasher()

    def close(self) -> None:
        self.store.close()

    @cached_property
    def _decoy_hash(self) -> str:
        """Checked against when the account does not exist, so that a sign-in for a missing
        account takes as long as one for a real account with a wrong password."""
        return self.hasher.hash("not the password of any account")

    def add(
        self, name: str, *, role: Role, password: str, display_name: str | None = None
    ) -> Account:
        name = check_name(name)
        display = check_display_name(display_name if display_name is not None else name)
        check_password(password)
        self._check_unique(display, name=name)
        return self.store.add_account(
            name=name, display_name=display, role=role, password_hash=self.hasher.hash(password)
        )

    def accounts(self) -> list[Account]:
        return self.store.accounts()

    def account(self, name: str) -> Account | None:
        try:
            name = check_name(name)
        except HelpdeskError:
            return None
        stored = self.store.get_account(name)
        return None if stored is None else stored.account

    def remove(self, name: str) -> None:
        self.store.remove_account(check_name(name))

    def set_password(self, name: str, password: str) -> Account:
        """A new password; every session signed in with the old one ends."""
        name = check_name(name)
        check_password(password)
        return self.store.update_account(name, password_hash=self.hasher.hash(password))

    def update(
        self, name: str, *, display_name: str | None = None, role: Role | None = None
    ) -> Account:
        """A new display name or role; either ends the account's sessions (a session signed in
        under the old name would go on claiming under it)."""
        name = check_name(name)
        display = None if display_name is None else check_display_name(display_name)
        stored = self.store.get_account(name)
        if stored is None:
            raise AccountNotFound(f"no account is named {name!r}")
        if display == stored.account.display_name:
            display = None
        if display is None and (role is None or role is stored.account.role):
            return stored.account
        if display is not None:
            self._check_unique(display, name=name)
        return self.store.update_account(name, display_name=display, role=role, end_sessions=True)

    def _check_unique(self, display: str, *, name: str) -> None:
        """Claims, replies and notes are kept under an agent's display name: two accounts with
        one name would each own the other's conversations. Names alike on screen are one name
        (`display_name_key`): with a zero-width space inside, or fullwidth (`Ｂｏｂ`), `Bob` passed
        for another name."""
        key = display_name_key(display)
        for account in self.store.accounts():
            if account.name != name and display_name_key(account.display_name) == key:
                raise HelpdeskError(
                    f"display name {display!r} is account {account.name!r}'s already: "
                    "conversations are claimed under it, so each account needs its own"
                )

    def authenticate(self, name: str, password: str) -> Account | None:
        """The account if `password` is its password, else None (never saying which was wrong).

        A hash made with weaker parameters than today's is replaced on the way.
        """
        try:
            name = check_name(name)
        except HelpdeskError:
            name = ""
        stored = self.store.get_account(name) if name else None
        if stored is None or len(password) > MAX_PASSWORD:
            self._verify(self._decoy_hash, password[:MAX_PASSWORD])
            return None
        if not self._verify(stored.password_hash, password):
            return None
        if self.hasher.check_needs_rehash(stored.password_hash):
            self.store.update_account(
                name, password_hash=self.hasher.hash(password), end_sessions=False
            )
        return stored.account

    def _verify(self, password_hash: str, password: str) -> bool:
        try:
            return self.hasher.verify(password_hash, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    def session_secret(self) -> bytes:
        return self.store.session_secret()
