"""The account service: the only way to create, change, check or remove an account.

Passwords are hashed with argon2id (argon2-cffi, RFC 9106 parameters): the hash carries its own
salt and parameters, so stronger defaults later rehash old accounts at their next sign-in.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import cached_property
from typing import TypeVar

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
from chatbot.accounts.ratelimit import MAX_FAILURES, NAME_MAX_FAILURES, WINDOW_S, wait_s
from chatbot.desk.clock import Clock, utc_now
from chatbot.errors import HelpdeskError
from chatbot.store.interface import StoreError, unreachable
from chatbot.store.users import AccountNotFound, UserStore

T = TypeVar("T")

QUICK_FAILURE_S = 1.0
"""A read that failed sooner than this met a connection the database had ended while it sat idle
(a restart, an outage now over): it is tried once more, on a new one (`AccountService._read`)."""


@dataclass(frozen=True)
class SignIn:
    """What came of a sign-in: the account, or none (a wrong name or password); or, when
    `retry_after_s` is above 0, a refusal for too many failures, no password checked."""

    account: Account | None
    retry_after_s: float = 0.0


class AccountService:
    """Accounts over a `UserStore`. Synchronous and bound to its store's thread."""

    def __init__(
        self,
        store: UserStore,
        *,
        hasher: PasswordHasher | None = None,
        clock: Clock = utc_now,
        max_failures: int = MAX_FAILURES,
        name_max_failures: int = NAME_MAX_FAILURES,
        window_s: float = WINDOW_S,
    ) -> None:
        self.store = store
        self.hasher = hasher or PasswordHasher()
        self._clock = clock
        """Wall-clock time: failures are kept in the database, compared across hosts."""
        self.max_failures = max_failures
        """For one name from one address (`chatbot.accounts.ratelimit.MAX_FAILURES`)."""
        self.name_max_failures = name_max_failures
        """For one name from every address (`chatbot.accounts.ratelimit.NAME_MAX_FAILURES`)."""
        self.window_s = window_s

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

    def sign_out(self, digest: str, *, expires_at: float) -> None:
        """The sign-in cookie with this digest is signed out: every process sharing the database
        refuses it, and closes its consoles, until it runs out (`expires_at`) anyway."""
        now = self._clock().timestamp()
        self.store.revoke_session(digest, expires_at=expires_at, forget_before=now)

    def signed_out(self, digests: Collection[str]) -> set[str]:
        """Which of these sign-in cookies' digests were signed out (one query for them all)."""
        if not digests:
            return set()
        return self._read(lambda: self.store.revoked_sessions(digests))

    def account(self, name: str) -> Account | None:
        try:
            name = check_name(name)
        except HelpdeskError:
            return None
        stored = self._read(lambda: self.store.get_account(name))
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
        stored = self._read(lambda: self.store.get_account(name)) if name else None
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

    def sign_in(self, name: str, password: str, *, address: str) -> SignIn:
        """`authenticate`, under the limits that every process sharing the database enforces
        together (`chatbot.accounts.ratelimit`): after `max_failures` wrong passwords for a name
        from `address` within `window_s`, further attempts for it from there are refused, their
        password unchecked, until the oldest leaves the window; and from every address once the
        name has `name_max_failures` of them from all addresses together. A right password
        clears the name's failures from its address (from others, they still count: a person
        signing in does not hand a guesser elsewhere a fresh count).

        Failures are counted for any name that could be an account's, whether or not one is:
        a limit only real accounts reached would tell a guesser which names exist. What that
        lets invented names store stays small: each failure costs a password check on this
        service's one thread first, and failures older than the window are deleted."""
        keys = self._limit_keys(name, address)
        if keys is not None and (wait := self._wait(*keys)) > 0:
            return SignIn(account=None, retry_after_s=wait)
        account = self.authenticate(name, password)
        if keys is not None:
            name_key, address_key = keys
            if account is not None:
                self.store.forget_failed_sign_ins(name_key, address_key=address_key)
            else:
                now = self._clock().timestamp()
                self.store.add_failed_sign_in(
                    name_key, address_key=address_key, at=now, forget_before=now - self.window_s
                )
        return SignIn(account=account)

    def sign_in_wait(self, name: str, *, address: str) -> float:
        """Seconds until a sign-in for `name` from `address` is checked again (0: at once)."""
        keys = self._limit_keys(name, address)
        return 0.0 if keys is None else self._wait(*keys)

    def _wait(self, name_key: str, address_key: str) -> float:
        now = self._clock().timestamp()
        since = now - self.window_s
        from_here = self._read(
            lambda: self.store.failed_sign_ins(
                name_key, address_key=address_key, since=since, limit=self.max_failures
            )
        )
        from_everywhere = self._read(
            lambda: self.store.failed_sign_ins(name_key, since=since, limit=self.name_max_failures)
        )
        limits = ((from_here, self.max_failures), (from_everywhere, self.name_max_failures))
        window = self.window_s
        return max(wait_s(at, now=now, max_failures=most, window_s=window) for at, most in limits)

    @cached_property
    def _limit_secret(self) -> bytes:
        # Derived from the database's own secret, so every process counts a name under one key.
        return hmac.digest(self.session_secret(), b"helpdesk sign-in failures", "sha256")

    def _limit_keys(self, name: str, address: str) -> tuple[str, str] | None:
        """What the database counts a name's failures from an address under: keyed hashes, never
        the text typed (which may be a password typed into the name field) nor the address.
        None for a name no account can have: the address's limit alone holds those."""
        try:
            name = check_name(name)
        except HelpdeskError:
            return None
        return self._keyed(f"name:{name}"), self._keyed(f"address:{address}")

    def _keyed(self, text: str) -> str:
        # surrogatepass: a forwarded address is a header's text, undecodable bytes and all.
        data = text.encode(errors="surrogatepass")
        return hmac.new(self._limit_secret, data, hashlib.sha256).hexdigest()[:32]

    def _verify(self, password_hash: str, password: str) -> bool:
        try:
            return self.hasher.verify(password_hash, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    def session_secret(self) -> bytes:
        # Made once, then only read: safe to try again.
        return self._read(self.store.session_secret)

    def _read(self, read: Callable[[], T]) -> T:
        """`read()`, tried once more if it failed at once on the database: the first use of a
        connection the server ended while it sat idle fails so, and the store connects again
        for the next. A failure that took its time (no answer) is not repeated: nobody waits out
        an outage twice."""
        started = time.monotonic()
        try:
            return read()
        except StoreError as error:
            if not unreachable(error) or time.monotonic() - started >= QUICK_FAILURE_S:
                raise
        return read()
