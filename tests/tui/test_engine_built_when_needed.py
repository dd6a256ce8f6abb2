"""A customer's chat with no bot of its own, asking Valen live (a browser's session), built the
engine after its first screen though nothing in it reads one: its questions go to the desk's
bots, and it has no recorded questions to decide. It builds none now; with a bot, or recorded
questions to offer, it still does."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from chatbot.config import Settings, load_settings
from chatbot.tui import create_app
from tests.tui.conftest import FrozenClock
from tests.tui.helpers import ask, engine_ready


def live_settings(db_path: Path) -> Settings:
    return load_settings(
        store={"db": db_path},
        valen={"replay": "off", "api_key": "k-test", "base_url": "http://127.0.0.1:9/v1"},
    )


async def test_a_live_customer_chat_with_no_bot_builds_no_engine(
    db_path: Path, http: httpx.AsyncClient, clock: FrozenClock
) -> None:
    app = create_app(live_settings(db_path), mode="chat", http=http, clock=clock, bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await ask(pilot, "Where is my refund?", wait=False)  # Stored, for the desk's bots.
        [conversation] = await app.services.desk.conversations()
        assert conversation.pending == 1
        # Frames after the first, where the build started (`_start_engine`): none was.
        assert app._engines is None and not app.services.live.ready


@pytest.mark.parametrize("bot", [True, False], ids=["bot", "recorded-questions"])
async def test_an_engine_is_built_where_it_is_read(
    db_path: Path, http: httpx.AsyncClient, clock: FrozenClock, bot: bool
) -> None:
    settings = live_settings(db_path) if bot else load_settings(store={"db": db_path})
    app = create_app(settings, mode="chat", http=http, clock=clock, bot=bot)
    async with app.run_test(size=(80, 24)):
        assert (await engine_ready(app)) is app.services.live.engine
