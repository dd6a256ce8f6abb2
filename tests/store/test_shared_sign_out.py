"""Signing out is kept in the accounts' database: with two `helpdesk serve` processes
on one database, a browser signed out on one went on working on the other, its cookie valid there
until it ran out (12 hours). Two services here are two processes' own, each with its own
connection to one SQLite file or PostgreSQL database, on a clock the test moves."""

from __future__ import annotations

import uuid
from typing import Any

from chatbot.accounts.service import AccountService
from chatbot.web.cookies import CookieSigner

# Two servers' account services on one database, ana's account in it, on a clock the test moves.
from tests.accounts.helpers import Clock, clock, two
from tests.backends import Backend
from tests.store.helpers import raw_sql

__all__ = ["clock", "two"]  # Fixtures.

HOURS = 12


def signer(clock: Clock) -> CookieSigner:
    return CookieSigner(
        uuid.uuid4().bytes * 2,  # A database of its own each test: cookies unlike any other's.
        customer_max_age_s=3600,
        account_max_age_s=HOURS * 3600,
        clock=lambda: clock.now.timestamp(),
    )


def rows_of(backend: Backend, digests: list[str]) -> list[Any]:
    marks = ", ".join("?" * len(digests))
    return raw_sql(
        backend,
        f"SELECT digest, expires_at FROM revoked_sessions WHERE digest IN ({marks})",
        tuple(digests),
    )


def test_a_cookie_signed_out_on_one_server_is_signed_out_on_the_other(
    two: tuple[AccountService, AccountService], backend: Backend, clock: Clock
) -> None:
    first, second = two
    cookies = signer(clock)
    tab = cookies.account("ana", 0, "first")  # This browser's sign-in.
    clock.advance(1)
    laptop = cookies.account("ana", 0, "first")  # The same account signed in on another computer.
    tab_claim, laptop_claim = cookies.read_account(tab), cookies.read_account(laptop)
    assert tab_claim is not None and laptop_claim is not None
    assert tab_claim.digest != laptop_claim.digest
    assert second.signed_out([tab_claim.digest, laptop_claim.digest]) == set()

    first.sign_out(tab_claim.digest, expires_at=tab_claim.until)
    # One call for every open console's sign-in: only the one signed out is.
    assert second.signed_out([tab_claim.digest, laptop_claim.digest]) == {tab_claim.digest}
    assert first.signed_out([tab_claim.digest]) == {tab_claim.digest}
    assert second.signed_out([]) == set()
    # Signed out again (a copy of the cookie posted to the other server): still one revocation.
    second.sign_out(tab_claim.digest, expires_at=tab_claim.until)
    rows = rows_of(backend, [tab_claim.digest, laptop_claim.digest])
    assert [(digest, float(at)) for digest, at in rows] == [(tab_claim.digest, tab_claim.until)]
    # The database keeps a digest, never the cookie itself.
    assert tab not in str(rows) and tab_claim.digest != tab


def test_revocations_are_forgotten_once_their_cookies_have_run_out(
    two: tuple[AccountService, AccountService], backend: Backend, clock: Clock
) -> None:
    first, second = two
    cookies = signer(clock)
    early = cookies.read_account(cookies.account("ana", 0, "first"))
    clock.advance(3600)
    late = cookies.read_account(cookies.account("ana", 0, "first"))
    assert early is not None and late is not None
    first.sign_out(early.digest, expires_at=early.until)
    second.sign_out(late.digest, expires_at=late.until)
    clock.advance(HOURS * 3600 - 1800)  # The early cookie has run out; the late one has not.
    fresh = cookies.read_account(cookies.account("ana", 0, "first"))
    assert fresh is not None
    first.sign_out(fresh.digest, expires_at=fresh.until)  # Forgets what ran out on the way.
    kept = {digest for digest, _ in rows_of(backend, [early.digest, late.digest, fresh.digest])}
    assert kept == {late.digest, fresh.digest}
    assert second.signed_out([early.digest, late.digest, fresh.digest]) == kept
