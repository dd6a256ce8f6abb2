"""Sign-in limits per account and per address, on a clock the tests move by hand."""

from __future__ import annotations

from chatbot.accounts.ratelimit import SignInLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_sixth_failure_in_a_minute_is_refused_until_the_first_leaves_the_window() -> None:
    clock = Clock()
    limiter = SignInLimiter(clock=clock)
    for _ in range(5):
        assert limiter.check(account="ana", address="10.0.0.1").allowed
        limiter.failed(account="ana", address="10.0.0.1")
        clock.now += 1
    verdict = limiter.check(account="ana", address="10.0.0.1")
    assert not verdict.allowed and verdict.retry_after_s == 55.0
    clock.now += 54.9
    assert not limiter.check(account="ana", address="10.0.0.1").allowed
    clock.now += 0.2
    assert limiter.check(account="ana", address="10.0.0.1").allowed


def test_the_account_limit_holds_from_any_address() -> None:
    limiter = SignInLimiter(clock=Clock())
    for number in range(5):
        limiter.failed(account="ana", address=f"10.0.0.{number}")
    assert not limiter.check(account="ana", address="10.9.9.9").allowed
    assert limiter.check(account="bo", address="10.9.9.9").allowed


def test_the_address_limit_holds_for_any_account() -> None:
    limiter = SignInLimiter(clock=Clock())
    for number in range(5):
        limiter.failed(account=f"user{number}", address="10.0.0.1")
    assert not limiter.check(account="someone-else", address="10.0.0.1").allowed
    assert limiter.check(account="someone-else", address="10.0.0.2").allowed


def test_success_clears_the_account_but_not_the_address() -> None:
    limiter = SignInLimiter(clock=Clock())
    for _ in range(4):
        limiter.failed(account="ana", address="10.0.0.1")
    limiter.succeeded(account="ana")
    limiter.failed(account="ana", address="10.0.0.2")
    assert limiter.check(account="ana", address="10.0.0.2").allowed
    limiter.failed(account="bo", address="10.0.0.1")  # The fifth from this address.
    assert not limiter.check(account="carl", address="10.0.0.1").allowed


def test_memory_is_bounded_however_many_names_are_tried() -> None:
    limiter = SignInLimiter(clock=Clock(), max_keys=100)
    for number in range(1000):
        limiter.failed(account=f"user{number}", address="10.0.0.1")
    assert len(limiter._failures) <= 100
