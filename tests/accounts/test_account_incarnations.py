"""Each account's incarnation: a random value made as it is added, never made again, which its
sign-in cookies carry (`tests/web/test_readded_account_cookie.py` for the server). An account
removed and added again under its name gets another, though its session epoch starts over; the
accounts of a database made before incarnations existed get one each as it is migrated."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatbot.accounts.models import Role
from chatbot.accounts.service import AccountService
from chatbot.store.postgres_schema import COMPONENT
from chatbot.store.postgres_schema import MIGRATIONS as POSTGRES_MIGRATIONS
from chatbot.store.schema import MIGRATIONS as SQLITE_MIGRATIONS
from tests.accounts.helpers import PASSWORD, Clock, CountingHasher, clock, open_store, two
from tests.backends import Backend, postgres_server

__all__ = ["clock", "two"]  # Fixtures.


def test_an_account_added_again_is_another_incarnation(
    two: tuple[AccountService, AccountService],
) -> None:
    first, second = two
    ana = first.account("ana")
    assert ana is not None and len(ana.incarnation) >= 22  # 128 random bits.
    changed = second.set_password("ana", "another horse battery")
    assert changed.incarnation == ana.incarnation and changed.session_epoch == 1
    seen = {ana.incarnation}
    for role in (Role.AGENT, Role.ADMIN, Role.AGENT):
        first.remove("ana")
        again = second.add("ana", role=role, password=PASSWORD)
        assert again.session_epoch == 0 and again.incarnation not in seen
        seen.add(again.incarnation)
    other = first.add("ben", role=Role.AGENT, password=PASSWORD)
    assert other.incarnation not in seen


def _has_incarnations(migration: object) -> bool:
    return not callable(migration) and any(
        "incarnation" in statement
        for statement in migration  # type: ignore[attr-defined]
    )


def _before_incarnations(backend: Backend) -> None:
    """The backend's database as the helpdesk before incarnations left it, with two accounts."""
    accounts = ("INSERT INTO accounts (name, display_name, role, password_hash, created_at,"
                " updated_at) VALUES ('ana', 'Ana', 'agent', 'x', 1, 1),"
                " ('ben', 'Ben', 'admin', 'x', 1, 1)")  # fmt: skip
    if backend.name == "sqlite":
        version = next(i for i, m in enumerate(SQLITE_MIGRATIONS) if _has_incarnations(m))
        conn = sqlite3.connect(backend.location, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        for migration in SQLITE_MIGRATIONS[:version]:
            if callable(migration):
                migration(conn)
            else:
                for statement in migration:
                    conn.execute(statement)
        conn.execute(accounts)
        conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("COMMIT")
        conn.close()
        return
    import psycopg

    version = next(i for i, m in enumerate(POSTGRES_MIGRATIONS) if _has_incarnations(m))
    with psycopg.connect(str(backend.location)) as pg, pg.transaction():
        for migration in POSTGRES_MIGRATIONS[:version]:
            for statement in migration:
                pg.execute(statement.encode())
        pg.execute(accounts.encode())
        pg.execute(
            "CREATE TABLE schema_versions (component text PRIMARY KEY, version integer NOT NULL)"
        )
        pg.execute("INSERT INTO schema_versions VALUES (%s, %s)", (COMPONENT, version))


@pytest.fixture(params=["sqlite", "postgresql"])
def older(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A database of the test's own from before incarnations, ana and ben in it."""
    if request.param == "sqlite":
        backend = Backend("sqlite", tmp_path / "helpdesk.sqlite3")
        _before_incarnations(backend)
        yield backend
        return
    server = postgres_server()
    url = server.create(migrated=False)
    try:
        backend = Backend("postgresql", url)
        _before_incarnations(backend)
        yield backend
    finally:
        server.drop(url)


def test_the_accounts_of_an_older_database_get_an_incarnation_each(
    older: Backend, clock: Clock
) -> None:
    service = AccountService(open_store(older, clock), hasher=CountingHasher())  # Migrates.
    try:
        ana, ben = service.accounts()
        assert ana.incarnation and ben.incarnation and ana.incarnation != ben.incarnation
        service.remove("ana")
        again = service.add("ana", role=Role.ADMIN, password=PASSWORD)
        assert again.incarnation not in (ana.incarnation, ben.incarnation)
    finally:
        service.close()
