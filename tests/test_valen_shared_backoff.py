"""A 429's wait is shared by every request of one client, as one bot worker's questions share
it: a request started while another waits out a rate limit waits too, instead of being refused."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx

from chatbot.valen.client import RetryPolicy, ValenClient
from chatbot.valen.protocol import ANSWER_NAME, PREDICATE, Question
from tests.valen_server import Received, Reply, ValenTestServer, input_of, probability_reply

WAIT_S = 0.3


async def test_a_new_request_waits_out_a_rate_limit_met_by_another() -> None:
    arrivals: dict[str, list[float]] = {}
    lock = threading.Lock()

    def respond(received: Received, index: int) -> Reply:
        with lock:
            arrivals.setdefault(input_of(received), []).append(time.monotonic())
        if index == 0:  # The first request meets the limit; every later one is served.
            return Reply(status=429, body={"error": "slow down"},
                         headers={"retry-after-ms": str(int(WAIT_S * 1000))})  # fmt: skip
        return probability_reply(received, 0.9)

    server = ValenTestServer(respond).start()
    try:
        async with httpx.AsyncClient() as http:
            client = ValenClient(http, base_url=server.base_url, retry=RetryPolicy(max_attempts=3))
            question = [Question(ANSWER_NAME, PREDICATE)]
            first = asyncio.create_task(client.decide("first input", question))
            while client.paused_for == 0:  # The first request has met the limit.
                await asyncio.sleep(0.005)
            limited_at = arrivals["first input"][0]
            second = await client.decide("second input", question)
            assert second == {ANSWER_NAME: 0.9}
            assert await first == {ANSWER_NAME: 0.9}
    finally:
        server.stop()
    # The second input was sent once, after the wait: never refused, never early.
    [sent] = arrivals["second input"]
    assert sent - limited_at >= WAIT_S * 0.95
    assert len(arrivals["first input"]) == 2
