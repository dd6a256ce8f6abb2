"""A bot worker's warning about a wait longer than it honours says a wait of a day or more as
"a day or more", as the Valen client's own messages do: with `Retry-After: inf` it said "Valen
asked to wait 86400 s", the ceiling a wait is read as, which the server never asked for."""

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
from tests.valen_server import Reply, ValenTestServer, fixed, until


@pytest.mark.parametrize("value", ["inf", "99999999999999999999999", "86400"])
async def test_a_wait_of_a_day_or_more_is_said_in_words(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer, caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    valen_server.responder = fixed(Reply(429, {"error": "later"}, {"retry-after": value}))
    monkeypatch.setenv("VALEN_API_KEY", "sk-bot-0123456789")
    db = tmp_path / "desk.sqlite3"
    settings = settings_for(valen_server.base_url, tmp_path, db=db, k=1)
    desk = AsyncDesk.open(Backend("sqlite", db).service)
    try:
        async with make_http_client(settings) as http:
            engine = build_engine(settings, http)
            worker = BotWorker(desk, lambda: engine, poll_s=0.05)
            task = asyncio.create_task(worker.run())
            with caplog.at_level(logging.WARNING, logger="helpdesk.bot"):
                await desk.ask(None, QUESTION)
                await until(lambda: worker.stats.outcomes.get("escalated") == 1)
            worker.stop()
            await task
    finally:
        await desk.aclose()
    said = [r.getMessage() for r in caplog.records if "asked to wait" in r.getMessage()]
    assert said == [
        "Valen asked to wait a day or more before it is asked again (HTTP 429), more than the "
        "60 s a request waits at most (valen.max_retry_wait_s): that request was not retried, "
        "and no request is sent for 60 s; questions that cannot wait so long go to a person "
        "meanwhile, and then the bot asks Valen again"
    ]
    assert "86400" not in said[0]
