"""The client's own exponential backoff is the least it waits between attempts; a server's
`retry-after` can only make the wait longer. `Retry-After: 0`, a negative `retry-after-ms` or an
HTTP date in the past had every retry sent at once (4 attempts for each of 5 passages in 0.1 s).
Waits run on a `FakeClock`: asserted, never waited."""

from __future__ import annotations

import asyncio
import random
import time
from contextlib import AbstractAsyncContextManager
from email.utils import formatdate

import httpx
import pytest

from chatbot.valen.client import RetryPolicy, ValenClient
from chatbot.valen.protocol import ANSWER_NAME, PREDICATE, Question
from tests.valen_server import FakeClock, Reply, ValenTestServer, scripted

POLICY = RetryPolicy(max_attempts=4, base_delay_s=0.5, max_delay_s=8.0)
FLOORS = [0.25, 0.5, 1.0]
"""The least of our jittered backoff after one, two and three failures (half its ceiling)."""


def past_date() -> str:
    return formatdate(time.time() - 30, usegmt=True)


@pytest.mark.parametrize(
    ("status", "headers"),
    [
        (429, {"retry-after": "0"}),
        (429, {"retry-after-ms": "-500"}),
        (429, {"retry-after": "PAST"}),
        (503, {"retry-after": "0"}),
        (503, {"retry-after-ms": "0"}),
    ],
    ids=["429-zero", "429-negative-ms", "429-past-date", "503-zero", "503-zero-ms"],
)
async def test_a_server_asking_for_no_wait_still_gets_our_backoff(
    status: int, headers: dict[str, str], valen_server: ValenTestServer
) -> None:
    if headers.get("retry-after") == "PAST":
        headers = {"retry-after": past_date()}
    refused = Reply(status=status, body={"error": "slow down"}, headers=headers)
    valen_server.responder = scripted(refused, refused, refused)
    clock = FakeClock()
    async with httpx.AsyncClient() as http:
        client = ValenClient(http, base_url=valen_server.base_url, retry=POLICY, clock=clock)
        outcome = await client.decide("input", [Question(ANSWER_NAME, PREDICATE)])
    assert outcome == {ANSWER_NAME: 0.9}  # Answered on the fourth attempt.
    assert valen_server.count() == 4
    assert len(clock.sleeps) == 3
    for wait, floor in zip(clock.sleeps, FLOORS, strict=True):
        assert wait >= floor, clock.sleeps


async def test_a_longer_server_wait_still_wins(valen_server: ValenTestServer) -> None:
    refused = Reply(status=429, body={"error": "slow down"}, headers={"retry-after": "3"})
    valen_server.responder = scripted(refused)
    clock = FakeClock()
    async with httpx.AsyncClient() as http:
        client = ValenClient(http, base_url=valen_server.base_url, retry=POLICY, clock=clock)
        await client.decide("input", [Question(ANSWER_NAME, PREDICATE)])
    [wait] = clock.sleeps
    assert 3.0 <= wait <= 3.0 + POLICY.base_delay_s / 4


class Patient(FakeClock):
    """A `FakeClock` whose budget never runs out mid-request: only the waits count here."""

    def timeout(self, seconds: float) -> AbstractAsyncContextManager[object]:
        return asyncio.timeout(None)


class MostJitter(random.Random):
    """Jitter at its largest, so the wait with it passes the deadline."""

    def uniform(self, a: float, b: float) -> float:
        return b


async def test_at_the_deadline_the_jitter_goes_but_not_the_server_wait(
    valen_server: ValenTestServer,
) -> None:
    # A little more budget than the server's 1 s, less than its 1 s with jitter: the jitter is
    # dropped, the server's wait kept whole.
    refused = Reply(status=429, body={"error": "slow down"}, headers={"retry-after": "1"})
    valen_server.responder = scripted(refused)
    clock = Patient()
    async with httpx.AsyncClient() as http:
        client = ValenClient(http, base_url=valen_server.base_url, retry=POLICY, clock=clock,
                             budget_s=1.05, rng=MostJitter())  # fmt: skip
        outcome = await client.decide("input", [Question(ANSWER_NAME, PREDICATE)])
    assert outcome == {ANSWER_NAME: 0.9}
    assert clock.sleeps == [1.0]
