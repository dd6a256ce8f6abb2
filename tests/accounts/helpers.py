"""For the account tests: `helpdesk users ...` as it ran, and two servers' account
services on one database with a clock the test moves."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

import pytest
from argon2 import PasswordHasher

from chatbot.accounts.models import Role
from chatbot.accounts.service import AccountService
from chatbot.assembly import open_accounts
from chatbot.config import load_settings
from chatbot.desk.clock import utc_now
from chatbot.store.users import UserStore
from tests.backends import Backend


@dataclass
class Ran:
    """What `helpdesk users ...` did: its exit status and what it printed."""

    returncode: int
    stdout: str
    stderr: str


Helpdesk = Callable[..., Ran]


PASSWORD = "correct horse battery"


class Clock:
    """Wall-clock time that only moves when the test says."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class CountingHasher(PasswordHasher):
    """Real argon2id, small parameters, counting the passwords it checks."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=1024, parallelism=1)
        self.verified = 0

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:  # noqa: A002
        self.verified += 1
        return super().verify(hash, password)


def open_store(backend: Backend, clock: Callable[[], datetime]) -> UserStore:
    if backend.name == "postgresql":
        from chatbot.store.postgres_users import PostgresUserStore

        return PostgresUserStore.open(str(backend.location), clock=clock)
    from chatbot.store.sqlite_users import SQLiteUserStore

    return SQLiteUserStore.open(Path(backend.location), clock=clock)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def two(backend: Backend, clock: Clock) -> Iterator[tuple[AccountService, AccountService]]:
    """Two servers' account services on one database, ana's account in it."""
    first = AccountService(open_store(backend, clock), hasher=CountingHasher(), clock=clock)
    second = AccountService(open_store(backend, clock), hasher=CountingHasher(), clock=clock)
    try:
        first.add("ana", role=Role.AGENT, password=PASSWORD)
        yield first, second
    finally:
        first.close()
        second.close()


def accounts_of(backend: Backend) -> AccountService:
    """The accounts of `backend`'s database, as `helpdesk users` changes them (on the real
    clock; small argon2 parameters, which the server reads from each hash)."""
    return AccountService(open_store(backend, utc_now), hasher=CountingHasher())


def authenticates(db: Path, name: str, password: str) -> bool:
    """Whether the accounts in the SQLite file `db` take `password` for `name`."""
    accounts = open_accounts(load_settings(store={"db": db}))
    try:
        return accounts.authenticate(name, password) is not None
    finally:
        accounts.close()
