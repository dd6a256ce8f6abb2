"""A PostgreSQL server that stops answering: every call gives up at its deadline, in one line.

The server is reached through a relay (`tests/freezing_relay.py`) that can go silent with the
connections still open, which is what a stopped server or a path dropping packets looks like:
nothing fails, nothing answers. Before deadlines, the call waited for ever, and so did every
call queued behind it on the desk's thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

import pytest
from textual.widgets import Input, Static

from chatbot.config import load_settings
from chatbot.dburl import display
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.postgres import PostgresPassageStore
from chatbot.knowledge_base.storage import KnowledgeBaseError
from chatbot.store.interface import StoreError
from chatbot.store.postgres import PostgresStore
from chatbot.tui import create_app
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.backends import postgres_server
from tests.freezing_relay import FreezingRelay
from tests.tui.conftest import Q1, SIZE
from tests.tui.helpers import wait_until

T = TypeVar("T")
DEADLINE_S = 0.5
GIVE_UP_S = 60.0
"""How long the test waits for a call to come back at all: far past the deadline, so only a
call that never returns (the old behaviour) fails here."""


@pytest.fixture
def relayed() -> Iterator[tuple[str, FreezingRelay]]:
    """A database of its own, reached through a relay that can go silent."""
    server = postgres_server()
    url = server.create()
    parts = urlsplit(url)
    relay = FreezingRelay((parts.hostname or "127.0.0.1", parts.port or 5432))
    netloc = parts.netloc.rsplit("@", 1)[0] + f"@127.0.0.1:{relay.port}"
    try:
        yield urlunsplit(parts._replace(netloc=netloc)), relay
    finally:
        relay.close()
        server.drop(url)


def _returns(call: Callable[[], T]) -> T:
    """`call()` on a thread of its own, waited for (not timed): it must come back."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(call).result(timeout=GIVE_UP_S)


def test_a_silent_server_fails_reads_and_writes_at_the_deadline_then_recovers(
    relayed: tuple[str, FreezingRelay],
) -> None:
    url, relay = relayed
    store = PostgresStore.open(url, timeout_s=DEADLINE_S)
    try:
        kept = store.create_conversation()
        for doing, call in (
            ("cannot write", store.create_conversation),
            ("cannot read", store.queue),
        ):
            relay.freeze()
            with pytest.raises(StoreError) as failed:
                _returns(call)
            assert relay.held.is_set()  # The call reached the relay and was held there.
            # One line: which database, what failed, and why.
            assert str(failed.value) == f"{display(url)}: {doing}: no answer in {DEADLINE_S:g} s"
            # Later calls come back too (connecting again meets its own timeout), not queued
            # behind the first for ever.
            with pytest.raises(StoreError, match="database unavailable"):
                _returns(lambda: store.conversation(kept.id))
            relay.thaw()
            # The same store carries on, on a new connection: nothing acknowledged was lost, and
            # the write reported failed did not happen behind the caller's back.
            assert [c.id for c in _returns(store.conversations)] == [kept.id]
    finally:
        relay.thaw()
        store.close()


def test_a_silent_server_fails_the_knowledge_base_at_the_deadline_then_recovers(
    relayed: tuple[str, FreezingRelay],
) -> None:
    url, relay = relayed
    kb = PostgresPassageStore.open(url, timeout_s=DEADLINE_S)
    try:
        kb.add(Passage(id="docks", text="Return the bike to any free dock."))
        relay.freeze()
        with pytest.raises(KnowledgeBaseError) as failed:
            _returns(kb.passages)
        assert relay.held.is_set()
        assert str(failed.value).endswith(f"no answer in {DEADLINE_S:g} s"), failed.value
        relay.thaw()
        assert [p.id for p in _returns(kb.passages)] == ["docks"]
    finally:
        relay.thaw()
        kb.close()


async def test_the_chat_says_so_when_the_database_goes_silent_and_keeps_the_question(
    relayed: tuple[str, FreezingRelay],
) -> None:
    url, relay = relayed
    settings = load_settings(store={"db": url, "timeout_s": DEADLINE_S})
    app = create_app(settings, mode="chat", timings=False, bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.screen.query_one(ChatPanel)
        field = app.screen.query_one("#question", Input)
        relay.freeze()
        field.focus()
        field.value = Q1
        await pilot.press("enter")
        error = app.screen.query_one("#chat-error", Static)
        await wait_until(pilot, lambda: bool(error.display), timeout=GIVE_UP_S)
        assert "The help desk cannot be reached just now" in str(error.render())
        assert field.value == Q1  # Kept for another try.

        relay.thaw()
        await pilot.press("enter")
        await wait_until(pilot, lambda: panel.conversation_id is not None, timeout=GIVE_UP_S)
        assert not error.display and field.value == ""
    store = PostgresStore.open(url)
    try:
        [conversation] = store.conversations()
        assert [e.text for e in store.entries(conversation.id)] == [Q1]  # type: ignore[union-attr]
    finally:
        store.close()


async def test_a_chat_left_idle_hears_of_an_outage_and_of_its_end(
    relayed: tuple[str, FreezingRelay],
) -> None:
    # The customer has asked and waits, typing nothing: before, the chat read only when told of
    # a change, so it said nothing through the outage.
    url, relay = relayed
    settings = load_settings(store={"db": url, "timeout_s": DEADLINE_S})
    app = create_app(settings, mode="chat", timings=False, bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.screen.query_one(ChatPanel)
        field = app.screen.query_one("#question", Input)
        field.focus()
        field.value = Q1
        await pilot.press("enter")
        await wait_until(pilot, lambda: panel.conversation_id is not None)
        error = app.screen.query_one("#chat-error", Static)
        assert not error.display

        relay.cut()
        await wait_until(pilot, lambda: bool(error.display), timeout=GIVE_UP_S)
        assert "What you sent is saved" in str(error.render())

        relay.restore()
        await wait_until(pilot, lambda: not error.display, timeout=GIVE_UP_S)
