"""Conversations nobody wrote in. A browser's page starts its visitor's conversation before they
write (its id goes in their cookie), so every visit that only looked left one behind, for ever,
and counted in the figures. Now such a conversation is invisible wherever people look (figures,
`helpdesk conversations`, search), and a `helpdesk bot` worker's sweep deletes it a day after it
started or an open page last kept it; one with anything in it (a message, a language chosen, an
escalation, an agent's note) is never deleted. A browser whose cookie names a deleted one gets a
new one. The clock is injected: time passes by advancing it, never by sleeping."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from chatbot.accounts.aio import AsyncAccounts
from chatbot.cli.serve import DeskConversations
from chatbot.config import WebSettings
from chatbot.desk import service as service_module
from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotWorker
from chatbot.desk.service import PRUNE_EVERY_S, DeskService
from chatbot.engine.engine import Engine
from chatbot.store.interface import ConversationNotFound
from chatbot.web.server import CUSTOMER_COOKIE, HelpdeskServer, LiveSession
from chatbot.web.spec import SessionSpec
from tests.backends import Backend
from tests.cli_run import run_cli
from tests.store.conftest import FakeClock

DAY = 24 * 3600.0


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def desk(backend: Backend, clock: FakeClock) -> Iterator[DeskService]:
    service = DeskService(backend.open(clock))
    yield service
    service.close()


def ids(desk: DeskService) -> list[int]:
    return [conversation.id for conversation in desk.conversations(limit=1000)]


def test_only_a_conversation_nobody_wrote_in_goes_and_only_after_a_day(
    desk: DeskService, clock: FakeClock
) -> None:
    looked = desk.start_conversation().id
    asked = desk.start_conversation().id
    desk.ask(asked, "Where is my helmet?")
    chose = desk.start_conversation().id
    desk.set_locale(chose, "zh")  # A language picked, nothing written.
    person = desk.start_conversation().id
    desk.talk_to_person(person)
    noted = desk.start_conversation().id
    desk.add_note(noted, agent="ana", text="Called them back")
    newest = desk.start_conversation().id  # Empty too: the newest always stays.

    clock.advance(DAY - 60)  # The visitor may still be reading the welcome.
    assert desk.prune_empty_conversations() == []
    assert ids(desk) == [looked, asked, chose, person, noted, newest]

    clock.advance(PRUNE_EVERY_S)  # The next sweep.
    assert desk.prune_empty_conversations() == [looked]
    assert ids(desk) == [asked, chose, person, noted, newest]
    with pytest.raises(ConversationNotFound):
        desk.conversation(looked)
    # No id is handed out again: a cookie or a saved draft may still name it.
    assert desk.start_conversation().id > newest

    clock.advance(10 * DAY)
    desk.prune_empty_conversations()
    assert {asked, chose, person, noted} <= set(ids(desk))


def test_a_conversation_an_open_page_keeps_stays_a_day_from_then(
    desk: DeskService, clock: FakeClock
) -> None:
    shown = desk.start_conversation().id
    written = desk.ask(None, "Where is my helmet?").conversation.id
    changed = desk.conversation(written).updated_at
    desk.start_conversation()

    clock.advance(DAY - 60)
    assert desk.keep_conversations([shown, written, shown, 999_999]) == 1
    assert desk.conversation(written).updated_at == changed  # Its last change, as written.
    clock.advance(DAY - 60)  # Two days since it started; under one since it was kept.
    assert desk.prune_empty_conversations() == []
    assert shown in ids(desk)
    clock.advance(PRUNE_EVERY_S)
    assert desk.prune_empty_conversations() == [shown]


def test_the_sweep_runs_hourly_in_batches_and_finds_what_it_left(
    desk: DeskService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service_module, "PRUNE_BATCH", 2)
    monkeypatch.setattr(service_module, "PRUNE_BATCHES", 1)
    first = [desk.start_conversation().id for _ in range(3)]
    clock.advance(1800)
    later = desk.start_conversation().id
    desk.ask(None, "Where is my helmet?")  # The newest, written in.

    clock.advance(DAY - 1800 + 1)  # The first three are a day old; `later` is not yet.
    assert desk.prune_empty_conversations() == first[:2]
    assert desk.prune_empty_conversations() == [first[2]]  # Where the sweep stopped.
    assert desk.prune_empty_conversations() == []  # Its end.
    clock.advance(1800)  # `later` is a day old now, but the next sweep is in half an hour.
    assert desk.prune_empty_conversations() == []
    clock.advance(1800)
    assert desk.prune_empty_conversations() == [later]
    assert len(ids(desk)) == 1


def test_a_conversation_written_in_as_the_sweep_runs_stays(
    backend: Backend, clock: FakeClock, desk: DeskService, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked = desk.start_conversation().id
    desk.start_conversation()
    clock.advance(DAY + 1)
    sweeper = backend.open(clock)
    write = sweeper._write  # type: ignore[attr-defined]

    @contextmanager
    def customer_first(*args: Any, **kwargs: Any) -> Iterator[Any]:
        # The customer writes between the sweep's read and its write.
        desk.ask(looked, "Hello? Is anyone there?")
        with write(*args, **kwargs) as connection:
            yield connection

    monkeypatch.setattr(sweeper, "_write", customer_first)
    try:
        swept = sweeper.prune_empty_conversations(idle_s=DAY)
    finally:
        sweeper.close()
    assert swept.deleted == []
    assert desk.conversation(looked).last_entry > 0


def test_no_figure_list_or_search_shows_a_conversation_nobody_wrote_in(
    backend: Backend, desk: DeskService, capsys: pytest.CaptureFixture[str]
) -> None:
    looked = desk.start_conversation().id
    asked = desk.ask(None, "Where is my helmet?").conversation.id
    chose = desk.start_conversation().id
    desk.set_locale(chose, "zh")

    figures = desk.stats()
    assert figures.conversations == 2
    assert sum(day.conversations for day in figures.per_day) == 2
    assert [c.id for c in desk.conversations(include_empty=False)] == [asked, chose]
    assert desk.search(f"#{looked}") == []
    assert [hit.conversation_id for hit in desk.search(f"#{asked}")] == [asked]

    code, out, _ = run_cli(capsys, "conversations", "list", "--db", str(backend.location), "--json")
    assert code == 0
    assert [c["id"] for c in json.loads(out)] == [asked, chose]
    code, out, _ = run_cli(capsys, "conversations", "export", "--db", str(backend.location))
    assert code == 0
    assert [json.loads(line)["id"] for line in out.splitlines()] == [asked, chose]


async def test_a_bot_worker_sweeps_them(backend: Backend, clock: FakeClock) -> None:
    desk = DeskService(backend.open(clock))
    looked = desk.start_conversation().id
    asked = desk.talk_to_person(None).conversation.id  # No question for the bot to judge.

    def no_engine() -> Engine:
        raise AssertionError("no question to judge")

    opened = AsyncDesk.open(lambda: DeskService(backend.open(clock)))
    worker = BotWorker(opened, no_engine, sweep_s=0.01)
    task = asyncio.create_task(worker.run())
    try:
        async with asyncio.timeout(10):
            while looked in ids(desk):
                clock.advance(600)
                await asyncio.sleep(0.01)
    finally:
        worker.stop()
        await task
        await opened.aclose()
    assert ids(desk) == [asked]
    desk.close()


def server_on(desk: AsyncDesk, clock: FakeClock) -> HelpdeskServer:
    """The server as `helpdesk serve` builds it, on the test's database and clock, not started."""
    return HelpdeskServer(
        settings=WebSettings(port=0, bots=0),
        accounts=cast(AsyncAccounts, None),  # Not asked: only customers come.
        desk=DeskConversations(desk),
        child=lambda spec: [],
        environment={},
        secret=b"s" * 32,
        report=lambda line: None,
        clock=lambda: clock().timestamp(),
    )


def open_page(server: HelpdeskServer, conversation: int) -> LiveSession:
    live = LiveSession("127.0.0.1", f"chat:{conversation}", cast(web.WebSocketResponse, None))
    live.spec = SessionSpec(None, conversation)
    server.sessions[len(server.sessions) + 1] = live
    return live


async def test_serve_keeps_the_conversations_of_open_pages(
    backend: Backend, clock: FakeClock, desk: DeskService
) -> None:
    reading = desk.start_conversation().id  # A page left open for days.
    left = desk.start_conversation().id  # A page closed.
    desk.start_conversation()
    opened = AsyncDesk.open(lambda: DeskService(backend.open(clock)))
    try:
        server = server_on(opened, clock)
        open_page(server, reading)
        for _ in range(3 * 24):  # Three days of session checks, an hour apart.
            await server.keep_conversations_once()
            assert await opened.prune_empty_conversations() in ([], [left])
            clock.advance(PRUNE_EVERY_S)
        assert reading in ids(desk)
        assert left not in ids(desk)
    finally:
        await opened.aclose()


async def test_a_cookie_naming_a_deleted_conversation_gets_a_new_one(
    backend: Backend, clock: FakeClock, desk: DeskService
) -> None:
    looked = desk.start_conversation().id
    desk.start_conversation()
    clock.advance(DAY + 1)
    assert desk.prune_empty_conversations() == [looked]
    opened = AsyncDesk.open(lambda: DeskService(backend.open(clock)))
    try:
        server = server_on(opened, clock)
        name = server.cookie_name(CUSTOMER_COOKIE)
        cookie = {"Cookie": f"{name}={server.signer.customer(looked)}"}
        # The page is served, with a cookie for a new visitor in place of the old one...
        page = await server.handle_customer(make_mocked_request("GET", "/", headers=cookie))
        assert page.status == 200
        fresh = page.cookies[name].value
        assert server.signer.read_new_customer(fresh)
        # ... and its chat (with either cookie) starts a new conversation, not an error.
        for sent in (cookie, {"Cookie": f"{name}={fresh}"}):
            request = make_mocked_request("GET", "/ws/chat", headers=sent)
            assert await server.customer_spec(request) is None
    finally:
        await opened.aclose()
