"""What a bot worker logs: a database outage once, and its end once (the change feed's way), not
the driver's long words at every poll; and a last line that agrees with what it did on stopping.

`Outage` is a desk whose store fails on demand, with the words PostgreSQL's driver uses when its
server is stopped; the console's outage tests use it too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from chatbot.cli import bot as bot_cli
from chatbot.cli.main import main
from chatbot.config import Settings
from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotWorker
from tests.backends import Backend
from tests.desk.bot_helpers import Q1, GatedEngine, Outage, replay_engine


async def until(condition: Callable[[], object], timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def test_an_outage_is_logged_once_and_its_end_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # `helpdesk bot` printed "cannot take questions: … Connection refused Is the server
    # running…" 13 times in 20 s, at every poll.
    desk = AsyncDesk.open(Backend("sqlite", tmp_path / "bot.sqlite3").service)
    outage = Outage.of(desk)
    worker = BotWorker(desk, replay_engine, poll_s=0.01)
    try:
        with caplog.at_level(logging.INFO, logger="helpdesk.bot"):
            outage.down = True
            task = asyncio.create_task(worker.run())
            await until(lambda: outage.failed >= 10)  # Five polls at least, each refused.
            outage.down = False
            asked = await desk.ask(None, Q1)
            await until(lambda: worker.stats.outcomes.get("answered"))
            worker.stop()
            await task
        said = [r.getMessage() for r in caplog.records if r.name == "helpdesk.bot"]
        lost = [line for line in said if line.startswith("cannot take questions")]
        assert len(lost) == 1, said
        assert said.count("taking questions again") == 1, said
        assert said.index("taking questions again") > said.index(lost[0])
        assert (await desk.conversation(asked.conversation.id)).pending == 0
    finally:
        await desk.aclose()


async def test_leases_that_cannot_be_extended_are_said_once_and_their_end_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # While a question was being judged, "cannot extend leases: … Connection refused …" came
    # again every lease_s/3 of the outage.
    desk = AsyncDesk.open(Backend("sqlite", tmp_path / "bot.sqlite3").service)
    outage = Outage.of(desk)
    engine = GatedEngine(replay_engine())
    worker = BotWorker(desk, lambda: engine, poll_s=0.01, lease_s=0.03)
    try:
        with caplog.at_level(logging.INFO, logger="helpdesk.bot"):
            await desk.ask(None, Q1)
            task = asyncio.create_task(worker.run())
            await until(lambda: engine.waiting == 1)  # In flight: its lease is kept alive.
            outage.down = True
            # Polls and heartbeats every 0.01 s: ten or so of each refused.
            await until(lambda: outage.failed >= 30)
            outage.down = False

            def said() -> list[str]:
                return [r.getMessage() for r in caplog.records if r.name == "helpdesk.bot"]

            await until(lambda: "extending leases again" in said())
            engine.gate.set()
            worker.stop()
            await task
        lost = [line for line in said() if line.startswith("cannot extend leases")]
        assert len(lost) == 1, said()
        assert said().count("extending leases again") == 1, said()
    finally:
        await desk.aclose()


def test_the_last_line_counts_the_questions_given_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # On SIGTERM it printed "gave back 1 question unjudged", then "stopped; no questions".
    async def stopped_while_judging(settings: Settings, *, log: logging.Logger) -> BotWorker:
        from chatbot.assembly import open_service

        desk = AsyncDesk.open(lambda: open_service(settings))
        try:
            engine = GatedEngine(replay_engine())
            await desk.ask(None, Q1)
            worker = BotWorker(desk, lambda: engine, grace_s=0, poll_s=60, log=log)
            task = asyncio.create_task(worker.run())
            await until(lambda: engine.waiting == 1)
            worker.stop()  # What SIGTERM does.
            await task
            return worker
        finally:
            await desk.aclose()

    monkeypatch.setattr(bot_cli, "serve", stopped_while_judging)
    assert main(["bot", "-v", "--db", str(tmp_path / "bot.sqlite3")]) == 0
    err = capsys.readouterr().err
    assert "gave back 1 question unjudged" in err
    last = err.strip().splitlines()[-1]
    assert last.endswith(": stopped; 1 given back unjudged"), err
