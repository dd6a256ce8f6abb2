"""Sign-in rate limits: a few failures, then refusals that cost little (no password is checked
while a limit holds). Three counts, as OWASP's authentication guidance has them, so that guessing
is slowed without handing anyone a way to keep a person out of their own account:

- per name and address (`MAX_FAILURES`): a few wrong passwords for a name lock that name for that
  address alone. Someone guessing `ann`'s password from their address cannot lock `ann` out
  from hers, nor keep anyone from another account;
- per address (`ADDRESS_MAX_FAILURES`): one address trying many names is refused, whichever name;
- per name, from every address together (`NAME_MAX_FAILURES`): guessing spread over many addresses
  locks the name for everyone, only at a count that takes many addresses to reach.

The counts per name (and address) are kept in the desk's database (`AccountService.sign_in`), so
every `helpdesk serve` sharing it enforces them together: behind a load balancer a guesser gets no
more tries than against one server. Per address they are counted here, in memory, by each `serve`
process on its own. The clocks are injected so tests move time by hand instead of sleeping.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

MAX_FAILURES = 5
"""Failed sign-ins for one name from one address within `WINDOW_S`: then that name is refused
from that address until the oldest leaves the window."""
ADDRESS_MAX_FAILURES = 20
"""Failed sign-ins from one address within `WINDOW_S`, whatever the names: then the address is
refused. Above `MAX_FAILURES`, so that one name locked from an address leaves its other accounts
(several people behind one office's address) signing in."""
NAME_MAX_FAILURES = 50
"""Failed sign-ins for one name from every address together within `WINDOW_S`: then the name is
refused from everywhere. Ten addresses' worth of `MAX_FAILURES`: one address alone can never
reach it, so nobody locks a person out of their account from the person's own address."""
WINDOW_S = 60.0
MAX_KEYS = 100_000
"""Addresses remembered at most: an attacker with many addresses cannot grow this without
bound."""


@dataclass(frozen=True)
class Verdict:
    """Whether a sign-in may be checked now; if not, how long until it may."""

    allowed: bool
    retry_after_s: float = 0.0


def wait_s(failures: Iterable[float], *, now: float, max_failures: int, window_s: float) -> float:
    """Seconds until another sign-in may be checked, given the times of earlier failures: none
    while fewer than `max_failures` of them fall in the last `window_s`; else until the oldest
    of the newest `max_failures` leaves the window."""
    recent = sorted(at for at in failures if at > now - window_s)
    if len(recent) < max_failures:
        return 0.0
    return max(0.0, recent[-max_failures] + window_s - now)


class AddressLimiter:
    """At most `max_failures` failed sign-ins per address in any `window_s`, in this process."""

    def __init__(
        self,
        *,
        max_failures: int = ADDRESS_MAX_FAILURES,
        window_s: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = MAX_KEYS,
    ) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self._clock = clock
        self._max_keys = max_keys
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, address: str, now: float) -> deque[float]:
        times = self._failures.get(address)
        if times is None:
            return deque()
        while times and times[0] <= now - self.window_s:
            times.popleft()
        if not times:
            del self._failures[address]
        return times

    def check(self, *, address: str) -> Verdict:
        """May a sign-in from `address` be checked now?"""
        now = self._clock()
        wait = wait_s(
            self._recent(address, now),
            now=now,
            max_failures=self.max_failures,
            window_s=self.window_s,
        )
        return Verdict(allowed=wait <= 0, retry_after_s=wait)

    def failed(self, *, address: str) -> None:
        """A wrong password from `address`. A right one clears nothing here: someone guessing
        many accounts from one address cannot reset their count by signing in to their own."""
        now = self._clock()
        times = self._recent(address, now)
        if not times:
            self._failures[address] = times
        times.append(now)
        self._failures.move_to_end(address)
        while len(self._failures) > self._max_keys:
            self._failures.popitem(last=False)
