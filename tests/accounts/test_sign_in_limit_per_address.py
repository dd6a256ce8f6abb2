"""Sign-in limits that slow guessing without letting anyone lock a person out.

Five wrong passwords for `ann` from one address locked `ann` out for everyone, on every server
sharing the database: anyone could keep any agent out with five requests a minute. Failures are
now counted per name and address (five lock that name from that address alone), and per name from
every address together only at a much higher count (guessing spread over many addresses), so
that one address cannot lock a person out of their account from their own. Both are kept in the
database, as before, so every server enforces them together; a refused attempt still checks no
password, and a name with no account locks exactly as an account's does. Two services here are
two processes' own, on one SQLite file or PostgreSQL database, on a clock the test moves."""

from __future__ import annotations

import pytest

from chatbot.accounts.ratelimit import MAX_FAILURES, NAME_MAX_FAILURES
from chatbot.accounts.service import AccountService
from tests.accounts.helpers import PASSWORD, Clock, CountingHasher, clock, two
from tests.backends import Backend

__all__ = ["clock", "two"]  # Fixtures.

GUESSER = "198.51.100.7"
ANA_AT_HOME = "203.0.113.5"

NAMES = pytest.mark.parametrize("name", ["ana", "no-such-account"])
"""A name with no account is counted and locked as an account's: else the limits would tell a
guesser which names exist."""


def checked(service: AccountService) -> int:
    """How many passwords `service` has checked so far."""
    hasher = service.hasher
    assert isinstance(hasher, CountingHasher)
    return hasher.verified


@NAMES
def test_failures_from_one_address_lock_the_name_from_that_address_alone(
    two: tuple[AccountService, AccountService], clock: Clock, name: str
) -> None:
    first, second = two
    for _ in range(MAX_FAILURES):
        assert first.sign_in(name, "wrong guess", address=GUESSER).account is None
        clock.advance(1)
    before = checked(second)
    refused = second.sign_in(name, PASSWORD, address=GUESSER)  # On the other server too.
    assert refused.account is None and refused.retry_after_s == 55.0
    assert checked(second) == before  # Refused without checking the password.
    assert first.sign_in_wait(name, address=GUESSER) == 55.0
    # From another address the name is not locked: ana signs in from hers, on either server.
    assert second.sign_in_wait(name, address=ANA_AT_HOME) == 0.0
    if name == "ana":
        assert second.sign_in("ana", PASSWORD, address=ANA_AT_HOME).account is not None
        assert first.sign_in("ana", PASSWORD, address=ANA_AT_HOME).account is not None
    # Her signing in gives the guesser no fresh count.
    assert first.sign_in_wait(name, address=GUESSER) == 55.0


def test_a_right_password_clears_its_own_addresss_failures_only(
    two: tuple[AccountService, AccountService], clock: Clock
) -> None:
    first, second = two
    for _ in range(MAX_FAILURES):
        first.sign_in("ana", "wrong guess", address=GUESSER)
    for _ in range(MAX_FAILURES - 1):  # Ana's own typos, at home.
        second.sign_in("ana", "typo", address=ANA_AT_HOME)
    assert first.sign_in("ana", PASSWORD, address=ANA_AT_HOME).account is not None
    for _ in range(MAX_FAILURES - 1):
        second.sign_in("ana", "typo", address=ANA_AT_HOME)
    assert second.sign_in_wait("ana", address=ANA_AT_HOME) == 0.0
    assert second.sign_in_wait("ana", address=GUESSER) == 60.0


@NAMES
def test_guessing_from_many_addresses_locks_the_name_everywhere_at_a_higher_count(
    two: tuple[AccountService, AccountService], clock: Clock, name: str
) -> None:
    first, second = two
    addresses = [f"198.51.100.{number}" for number in range(NAME_MAX_FAILURES // MAX_FAILURES)]
    assert len(addresses) == 10  # One address alone never reaches the count.
    failures = 0
    for address in addresses:
        for _ in range(MAX_FAILURES):
            if failures == NAME_MAX_FAILURES - 1:
                # One short of it: the name still opens from an address that has not failed.
                assert second.sign_in_wait(name, address=ANA_AT_HOME) == 0.0
            assert (first, second)[failures % 2].sign_in(name, "x", address=address).account is None
            failures += 1
    clock.advance(10)
    before = checked(second)
    refused = second.sign_in(name, PASSWORD, address=ANA_AT_HOME)
    assert refused.account is None and refused.retry_after_s == 50.0
    assert checked(second) == before  # No password checked.
    assert first.sign_in_wait(name, address=ANA_AT_HOME) == 50.0
    clock.advance(50.5)  # The minute has passed.
    if name == "ana":
        assert second.sign_in("ana", PASSWORD, address=ANA_AT_HOME).account is not None
    else:
        assert second.sign_in_wait(name, address=ANA_AT_HOME) == 0.0


def test_the_database_keeps_neither_the_name_nor_the_address(
    two: tuple[AccountService, AccountService], backend: Backend
) -> None:
    from tests.store.helpers import raw_sql

    first, _ = two
    first.sign_in("hunter2-secret", "whatever", address=GUESSER)
    [(name_key, address_key)] = raw_sql(
        backend, "SELECT name_key, address_key FROM sign_in_failures"
    )
    assert "hunter2" not in name_key and GUESSER not in address_key and name_key != address_key
