"""`serve`'s bot workers restarted every 2 s for ever when they could not start (a broken
upgrade, a bad setting), a traceback each time, and nothing said that no bot was answering: the
wait now doubles while a worker keeps failing as it starts, and the log says what it means."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from chatbot.web.bots import BotWorkers
from tests.web.harness import run_async, server_environment


def test_a_worker_that_keeps_failing_as_it_starts_waits_longer_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Not an async test: a browser module's Playwright may hold this worker's thread's loop.
    waits: list[float] = []
    four = asyncio.Event()

    async def sleep(seconds: float) -> None:  # Time injected: the waits are recorded, not slept.
        waits.append(seconds)
        if len(waits) == 4:
            four.set()
        await asyncio.sleep(0)

    # A setting no worker can start with: each exits at once, status 2.
    environment = server_environment(tmp_path) | {"HELPDESK_ENGINE__K": "0"}
    bots = BotWorkers(1, environment=environment, grace_s=1.0, sleep=sleep)

    async def run() -> None:
        await bots.start()
        await asyncio.wait_for(four.wait(), timeout=120)
        await bots.stop()

    with caplog.at_level(logging.WARNING, logger="helpdesk.web"):
        run_async(run())
    assert waits[:4] == [2.0, 4.0, 8.0, 16.0]
    said = [record.getMessage() for record in caplog.records]
    assert said[:2] == ["bot worker 0 exited with status 2; starting another"] * 2
    assert said[2] == (
        "bot worker 0 keeps failing as it starts (3 times in a row, last status 2): no bot "
        "answers questions; its error is above; next try in 8 s"
    )
