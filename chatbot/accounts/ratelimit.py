"""Sign-in rate limits: a few failures per account and per address, then refusals that cost
nothing (no password is checked while a limit holds).

In memory, in the one `helpdesk serve` process that checks passwords. The clock is injected so
tests move time by hand instead of sleeping.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass

MAX_FAILURES = 5
WINDOW_S = 60.0
MAX_KEYS = 100_000
"""Keys remembered at most: an attacker inventing names cannot grow this without bound."""


@dataclass(frozen=True)
class Verdict:
    """Whether a sign-in may be checked now; if not, how long until it may."""

    allowed: bool
    retry_after_s: float = 0.0


class SignInLimiter:
    """At most `max_failures` failed sign-ins per account and per address in any `window_s`."""

    def __init__(
        self,
        *,
        max_failures: int = MAX_FAILURES,
        window_s: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = MAX_KEYS,
    ) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self._clock = clock
        self._max_keys = max_keys
        self._failures: OrderedDict[tuple[str, str], deque[float]] = OrderedDict()

    def _recent(self, key: tuple[str, str], now: float) -> deque[float]:
        times = self._failures.get(key)
        if times is None:
            return deque()
        while times and times[0] <= now - self.window_s:
            times.popleft()
        if not times:
            del self._failures[key]
        return times

    def check(self, *, account: str, address: str) -> Verdict:
        """May a sign-in for `account` from `address` be checked now?"""
        now = self._clock()
        wait = 0.0
        for key in (("account", account), ("address", address)):
            times = self._recent(key, now)
            if len(times) >= self.max_failures:
                # Allowed again once the oldest failure that counts leaves the window.
                wait = max(wait, times[-self.max_failures] + self.window_s - now)
        return Verdict(allowed=wait <= 0, retry_after_s=wait)

    def failed(self, *, account: str, address: str) -> None:
        now = self._clock()
        for key in (("account", account), ("address", address)):
            times = self._recent(key, now)
            if not times:
                self._failures[key] = times
            times.append(now)
            self._failures.move_to_end(key)
        while len(self._failures) > self._max_keys:
            self._failures.popitem(last=False)

    def succeeded(self, *, account: str) -> None:
        """A right password clears the account's failures, not the address's: someone guessing
        many accounts from one address cannot reset their count by signing in to their own."""
        self._failures.pop(("account", account), None)
