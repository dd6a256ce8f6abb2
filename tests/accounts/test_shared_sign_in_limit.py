"""The sign-in limits per name (here, of one name from one address) are kept in the desk's
database, so every `helpdesk serve` on one database enforces them together: with two servers,
six wrong passwords for ana on one were refused there while the right password was accepted at
once on the other (and N servers behind a load balancer gave a guesser 5×N tries a minute). Two
services here are two processes' own, each with its own connection to one SQLite file or
PostgreSQL database, on a clock the test moves."""

from __future__ import annotations

from typing import Any

from chatbot.accounts.service import AccountService
from tests.accounts.helpers import PASSWORD, Clock, CountingHasher, clock, two
from tests.backends import Backend
from tests.store.helpers import raw_sql

__all__ = ["clock", "two"]  # Fixtures.

HERE = "203.0.113.7"
"""Every sign-in here comes from one address: the limit of one name from one address, which
two servers count together (the other limits: `test_sign_in_limit_per_address.py`)."""


def test_failures_on_one_server_lock_the_account_on_another(
    two: tuple[AccountService, AccountService], clock: Clock
) -> None:
    first, second = two
    for _ in range(3):
        assert first.sign_in("ana", "wrong guess", address=HERE).account is None
        clock.advance(1)
    for _ in range(2):
        assert (
            second.sign_in("Ana", "wrong guess", address=HERE).account is None
        )  # One account, any case.
        clock.advance(1)
    refused = second.sign_in("ana", PASSWORD, address=HERE)
    assert refused.account is None and refused.retry_after_s == 55.0
    assert (
        first.sign_in_wait("ana", address=HERE) == second.sign_in_wait("ana", address=HERE) == 55.0
    )
    clock.advance(55.5)  # The first failure leaves the minute.
    signed_in = second.sign_in("ana", PASSWORD, address=HERE)
    assert signed_in.account is not None and signed_in.account.name == "ana"


def test_a_refused_sign_in_checks_no_password(
    two: tuple[AccountService, AccountService], clock: Clock
) -> None:
    first, second = two
    for _ in range(5):
        first.sign_in("ana", "wrong guess", address=HERE)
    hasher = second.hasher
    assert isinstance(hasher, CountingHasher)
    for password in ("wrong guess", PASSWORD):
        assert second.sign_in("ana", password, address=HERE).retry_after_s > 0
    assert hasher.verified == 0


def test_a_right_password_clears_the_accounts_failures_for_every_server(
    two: tuple[AccountService, AccountService], clock: Clock
) -> None:
    first, second = two
    for _ in range(4):
        second.sign_in("ana", "wrong guess", address=HERE)
    assert first.sign_in("ana", PASSWORD, address=HERE).account is not None
    for _ in range(4):
        second.sign_in("ana", "wrong guess", address=HERE)
    assert second.sign_in_wait("ana", address=HERE) == 0.0
    assert second.sign_in("ana", PASSWORD, address=HERE).account is not None


def test_a_name_with_no_account_locks_alike_and_its_text_is_never_kept(
    two: tuple[AccountService, AccountService], backend: Backend, clock: Clock
) -> None:
    """Only real accounts locking out would tell a guesser which names exist; and a name typed
    may be a password typed into the wrong field, which the database must not keep."""
    first, second = two
    for service in (first, second, first, second, first):
        assert service.sign_in("hunter2-secret", "whatever", address=HERE).account is None
    assert second.sign_in("hunter2-secret", "whatever", address=HERE).retry_after_s == 60.0
    rows: list[Any] = raw_sql(backend, "SELECT name_key, address_key, at FROM sign_in_failures")
    assert len(rows) == 5
    assert not any("hunter2" in str(key) or "ana" in str(key) for key, _, _ in rows)
    assert not any("203.0.113" in str(address) for _, address, _ in rows)  # Nor the address.
    # Wall-clock seconds, the same for every host reading them.
    assert {at for _, _, at in rows} == {clock.now.timestamp()}


def test_invented_names_leave_only_the_last_minutes_failures(
    two: tuple[AccountService, AccountService], backend: Backend, clock: Clock
) -> None:
    first, second = two
    for number in range(40):
        (first, second)[number % 2].sign_in(f"made-up-{number}", "whatever", address=HERE)
        clock.advance(2)  # 80 s of guessing: the first failures are out of the window.
    [(count,)] = raw_sql(backend, "SELECT count(*) FROM sign_in_failures")
    assert count == 31  # Those of the last 60 s (18 s to 78 s), the older deleted on the way.
    assert second.sign_in("made-up-39", "whatever", address=HERE).account is None
    clock.advance(61)
    first.sign_in("made-up-40", "whatever", address=HERE)
    [(count,)] = raw_sql(backend, "SELECT count(*) FROM sign_in_failures")
    assert count == 1


def test_a_name_no_account_can_have_stores_nothing(
    two: tuple[AccountService, AccountService], backend: Backend
) -> None:
    first, _ = two
    for _ in range(6):
        assert first.sign_in("Not A Name!", "whatever", address=HERE).account is None
    assert raw_sql(backend, "SELECT count(*) FROM sign_in_failures") == [(0,)]
