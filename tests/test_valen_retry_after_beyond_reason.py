"""A Retry-After too long to mean anything (a 23-digit number, `inf`, `1e400`, a date in the year
9999) is read one way, as the longest wait there is (`MAX_RETRY_AFTER_S`), and said as "a day or
more", never as a float's digits.

`Retry-After: 99999999999999999999999` printed "the server asked to wait 99999999999999991611392
s", while `inf` and `1e400` were read as no Retry-After at all (retried on our own backoff).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import httpx
import pytest

from chatbot.valen.client import (
    MAX_RETRY_AFTER_S,
    RetryPolicy,
    ValenClient,
    retry_after_s,
    wait_words,
)
from chatbot.valen.errors import RateLimitedError
from chatbot.valen.protocol import PREDICATE, Question
from tests.valen_server import FakeClock, Reply, ValenTestServer, fixed

NOW = datetime(2026, 11, 30, 8, 0, 0, tzinfo=UTC)
HUGE = ["99999999999999999999999", "inf", "1e400", "Infinity", "1e23",
        "Fri, 31 Dec 9999 23:59:59 GMT"]  # fmt: skip
# A float's stray digits, or the words of one that is not finite.
ARTIFACTS = re.compile(r"\d{7,}|inf|e\+|nan", re.IGNORECASE)


@pytest.mark.parametrize("value", HUGE)
def test_every_spelling_of_forever_reads_as_the_longest_wait(value: str) -> None:
    assert retry_after_s(httpx.Headers({"retry-after": value}), now=NOW) == MAX_RETRY_AFTER_S


@pytest.mark.parametrize("value", ["1e30", "inf", "99999999999999999999999999"])
def test_so_does_retry_after_ms(value: str) -> None:
    headers = httpx.Headers({"retry-after-ms": value, "retry-after": "2"})
    assert retry_after_s(headers, now=NOW) == MAX_RETRY_AFTER_S


def test_what_is_not_a_wait_is_still_none_or_zero() -> None:
    def read(**headers: str) -> float | None:
        return retry_after_s(httpx.Headers(headers), now=NOW)

    assert read(**{"retry-after": "nan"}) is None
    assert read(**{"retry-after-ms": "nan", "retry-after": "2"}) == 2.0  # Unreadable: the other.
    assert read(**{"retry-after": "-inf"}) == 0.0
    assert read(**{"retry-after": "86399"}) == 86_399.0  # Under the ceiling: as it was asked.


def test_waits_are_said_without_stray_digits() -> None:
    assert wait_words(50.0) == "50 s"
    assert wait_words(0.5) == "0.5 s"
    assert wait_words(3600.0) == "3600 s"
    assert wait_words(MAX_RETRY_AFTER_S) == "a day or more"


@pytest.mark.parametrize("value", HUGE[:3])
async def test_a_huge_wait_is_refused_at_once_and_said_sanely(
    value: str, valen_server: ValenTestServer
) -> None:
    valen_server.responder = fixed(Reply(429, {"error": "later"}, {"retry-after": value}))
    async with httpx.AsyncClient() as http:
        client = ValenClient(http, base_url=valen_server.base_url, retry=RetryPolicy(),
                             clock=FakeClock())  # fmt: skip
        with pytest.raises(RateLimitedError) as caught:
            await client.decide("t", [Question("answers", PREDICATE)])
        said = caught.value.describe()
        assert said == (
            "rate-limited (HTTP 429): later; the server asked to wait a day or more, more than "
            "the 60 s we wait"
        )
        # Not retried: waiting 60 s would only be refused again (`inf` was retried 4 times).
        assert caught.value.attempts == 1 and len(valen_server.received) == 1
        assert client.longest_refused_wait_s == MAX_RETRY_AFTER_S

        # The next question is held by that wait, and says so in the same words.
        with pytest.raises(RateLimitedError) as held:
            await client.decide("u", [Question("answers", PREDICATE)])
    later = held.value.describe()
    assert "not sent: Valen asked to wait a day or more, of which requests wait 60 s at most" in (
        later
    ), later
    assert len(valen_server.received) == 1
    for text in (said, later):
        assert not ARTIFACTS.search(text), text
