"""A bot's warning about a rejected key says what happens: it said questions go to a person
"until the key … is fixed and this worker restarted", but the worker goes on sending each
question, and answers again, with no restart, as soon as Valen accepts the key."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from chatbot.assembly import build_engine, make_http_client
from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotWorker
from tests.backends import Backend
from tests.valen_faults import QUESTION, settings_for
from tests.valen_server import Reply, ValenTestServer, constant, fixed


async def test_the_warning_says_the_worker_answers_again_once_the_key_is_accepted(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    valen_server.responder = fixed(Reply(status=401, body={"error": "key disabled"}))
    monkeypatch.setenv("VALEN_API_KEY", "sk-bot-0123456789")
    db = tmp_path / "desk.sqlite3"
    settings = settings_for(valen_server.base_url, tmp_path, db=db, k=2)
    desk = AsyncDesk.open(Backend("sqlite", db).service)
    try:
        async with make_http_client(settings) as http:
            engine = build_engine(settings, http)
            worker = BotWorker(desk, lambda: engine, poll_s=0.05)
            task = asyncio.create_task(worker.run())
            with caplog.at_level(logging.WARNING, logger="helpdesk.bot"):
                await desk.ask(None, QUESTION)
                async with asyncio.timeout(30):
                    while worker.stats.outcomes.get("escalated") != 1:
                        await asyncio.sleep(0.01)
                # The server takes the same key again: the same worker answers, unrestarted.
                valen_server.responder = constant(0.9)
                await desk.ask(None, QUESTION)
                async with asyncio.timeout(30):
                    while worker.stats.outcomes.get("answered") != 1:
                        await asyncio.sleep(0.01)
            worker.stop()
            await task
    finally:
        await desk.aclose()
    [warning] = [r.getMessage() for r in caplog.records if "rejected the API key" in r.getMessage()]
    assert warning == (
        "Valen rejected the API key: auth (HTTP 401): key disabled; while it does, questions go "
        "to a person. Each question is still sent to Valen, and the bot answers again as soon "
        "as Valen accepts the key; a new key (VALEN_API_KEY or valen.api_key) takes effect when "
        "this worker restarts"
    )
