"""The per-address sign-in limit (in memory, per `serve` process), on a clock the tests move by
hand. The per-account limit, counted in the database, is `test_shared_sign_in_limit.py`'s."""

from __future__ import annotations

from chatbot.accounts.ratelimit import ADDRESS_MAX_FAILURES, MAX_FAILURES, AddressLimiter, wait_s


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_21st_failure_in_a_minute_is_refused_until_the_first_leaves_the_window() -> None:
    """20 from one address, whatever the names: above the 5 of one name from one address, so
    that one name locked there leaves the address's other accounts signing in."""
    assert ADDRESS_MAX_FAILURES == 20 > MAX_FAILURES
    clock = Clock()
    limiter = AddressLimiter(clock=clock)
    for _ in range(20):
        assert limiter.check(address="10.0.0.1").allowed
        limiter.failed(address="10.0.0.1")
        clock.now += 0.25
    verdict = limiter.check(address="10.0.0.1")
    assert not verdict.allowed and verdict.retry_after_s == 55.0
    clock.now += 54.9
    assert not limiter.check(address="10.0.0.1").allowed
    clock.now += 0.2
    assert limiter.check(address="10.0.0.1").allowed


def test_the_address_limit_holds_only_for_that_address() -> None:
    limiter = AddressLimiter(clock=Clock())
    for _ in range(ADDRESS_MAX_FAILURES):
        limiter.failed(address="10.0.0.1")
    assert not limiter.check(address="10.0.0.1").allowed
    assert limiter.check(address="10.0.0.2").allowed


def test_memory_is_bounded_however_many_addresses_are_tried() -> None:
    limiter = AddressLimiter(clock=Clock(), max_keys=100)
    for number in range(1000):
        limiter.failed(address=f"10.0.{number // 256}.{number % 256}")
    assert len(limiter._failures) <= 100


def test_the_wait_runs_from_the_oldest_of_the_newest_failures_that_count() -> None:
    newest_first = [1009.0, 1008.0, 1007.0, 1006.0, 1005.0, 1001.0, 900.0]
    assert wait_s(newest_first, now=1010.0, max_failures=5, window_s=60.0) == 55.0
    assert wait_s(newest_first[:4], now=1010.0, max_failures=5, window_s=60.0) == 0.0
    assert wait_s(newest_first, now=1065.5, max_failures=5, window_s=60.0) == 0.0
