"""Presence: an agent whose consoles all closed (a browser tab shut, a terminal killed) is away,
and after the grace their claims go back to the queue, each as its owner's release, the customer
told the agent stepped away. A reload comes back within the grace and keeps them; an agent never
seen (claims from the command line) keeps theirs for ever. The clock is injected: time passes by
advancing it, never by sleeping."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotWorker
from chatbot.desk.models import ChatEvent, Released, State
from chatbot.desk.service import DeskService
from chatbot.engine.engine import Engine
from chatbot.notices import notice
from chatbot.store.interface import ConversationStore, StaleState
from tests.backends import Backend
from tests.store.conftest import FakeClock

GRACE_S = 600.0


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def desk(backend: Backend, clock: FakeClock) -> Iterator[DeskService]:
    service = DeskService(backend.open(clock), release_after_s=GRACE_S)
    yield service
    service.close()


def claimed(desk: DeskService, agent: str = "ana") -> int:
    conversation = desk.talk_to_person(None).conversation.id
    desk.ask(conversation, "Where is my helmet?")
    assert desk.claim(conversation, agent=agent).won
    return conversation


def released_events(desk: DeskService, conversation: int) -> list[Released]:
    return [
        e.event
        for e in desk.entries(conversation)
        if isinstance(e, ChatEvent) and isinstance(e.event, Released)
    ]


# -- the store -------------------------------------------------------------------------------------


def test_the_store_keeps_when_each_agent_was_last_seen(backend: Backend, clock: FakeClock) -> None:
    store: ConversationStore = backend.open(clock)
    try:
        assert store.agents_seen() == {}
        store.agent_seen("ana")
        first = clock()
        clock.advance(30)
        store.agent_seen("ben")
        assert store.agents_seen() == {"ana": first, "ben": clock()}
        store.agent_seen("ana")
        assert store.agents_seen()["ana"] == clock()
    finally:
        store.close()


def test_the_store_lists_the_claims_of_agents_away_longer_than_asked(
    backend: Backend, clock: FakeClock, desk: DeskService
) -> None:
    store: ConversationStore = backend.open(clock)
    try:
        store.agent_seen("ana")
        store.agent_seen("ben")
        anas, bens, cli = claimed(desk, "ana"), claimed(desk, "ben"), claimed(desk, "cho")
        clock.advance(100)
        store.agent_seen("ben")  # Ben's console is still open; nobody ever saw cho's.
        assert store.away_claims(away_s=99) == [(anas, "ana")]
        assert store.away_claims(away_s=100) == []  # Not longer than asked yet.
        clock.advance(1000)
        late = claimed(desk, "ana")  # A claim is a sign of life: Ana claimed it just now.
        assert store.away_claims(away_s=600) == [(anas, "ana"), (bens, "ben")]
        assert cli not in [c for c, _ in store.away_claims(away_s=0)]
        assert late not in [c for c, _ in store.away_claims(away_s=600)]
    finally:
        store.close()


def test_a_release_for_an_agent_away_is_stale_once_they_are_back(
    backend: Backend, clock: FakeClock, desk: DeskService
) -> None:
    store: ConversationStore = backend.open(clock)
    try:
        store.agent_seen("ana")
        conversation = claimed(desk)
        clock.advance(GRACE_S + 1)
        assert store.away_claims(away_s=GRACE_S) == [(conversation, "ana")]
        store.agent_seen("ana")  # Back between the sweep's read and its write.
        with pytest.raises(StaleState):
            store.release(conversation, agent="ana", expect=State.CLAIMED, to=State.WAITING,
                          event=Released(agent="ana", away=True), away_s=GRACE_S)  # fmt: skip
        assert desk.conversation(conversation).state is State.CLAIMED
    finally:
        store.close()


def test_presence_wakes_no_postgres_feed_and_a_release_wakes_every_feed(
    backend: Backend, clock: FakeClock, desk: DeskService
) -> None:
    conversation = claimed(desk)
    feed = desk.open_feed()
    try:
        assert feed.wait(0.0) is False
        desk.agent_seen("ana")
        if backend.name == "postgresql":
            # A console's tick every half minute is no news to anyone: no NOTIFY. (On SQLite any
            # commit moves `data_version`; a woken reader finds no change.)
            assert feed.wait(1.0) is False
        else:
            feed.wait(5.0)
        assert desk.release_away_claims() == []  # Watching Ana's sighting from now.
        clock.advance(GRACE_S + 1)
        assert desk.release_away_claims() == [conversation]
        assert feed.wait(5.0) is True
    finally:
        feed.close()


# -- the service -----------------------------------------------------------------------------------


def test_claims_of_an_agent_gone_past_the_grace_go_back_to_the_queue(
    desk: DeskService, clock: FakeClock
) -> None:
    desk.agent_seen("ana")
    first, second = claimed(desk), claimed(desk)
    desk.agent_seen("ben")
    bens = claimed(desk, "ben")
    assert desk.release_away_claims() == []  # This process starts watching their sightings.
    clock.advance(GRACE_S)
    desk.agent_seen("ben")
    assert desk.release_away_claims() == []  # Gone exactly the grace: not longer.
    clock.advance(1)
    assert desk.release_away_claims() == [first, second]
    for conversation in (first, second):
        after = desk.conversation(conversation)
        assert (after.state, after.agent) == (State.WAITING, None)
        [event] = released_events(desk, conversation)
        assert event == Released(agent="ana", away=True)
        assert notice(event, reader="customer") == (
            "ana stepped away. Another person will reply here."
        )
        assert notice(event, reader="agent") == (
            "ana was away too long: the conversation went back to the queue."
        )
    assert desk.conversation(bens).state is State.CLAIMED  # Ben's console is open.
    assert desk.release_away_claims() == []  # Done once.
    assert desk.queue()[0].conversation_id == first  # Back at its old place in the queue.


def test_a_reload_within_the_grace_keeps_the_claims(desk: DeskService, clock: FakeClock) -> None:
    desk.agent_seen("ana")
    conversation = claimed(desk)
    for _ in range(3):  # A reload, a restart, a dropped link: each back within the grace.
        clock.advance(GRACE_S - 60)
        assert desk.release_away_claims() == []
        desk.agent_seen("ana")
    assert desk.conversation(conversation).agent == "ana"
    assert released_events(desk, conversation) == []


def test_an_agent_never_seen_keeps_their_claims(desk: DeskService, clock: FakeClock) -> None:
    conversation = claimed(desk)  # From the command line, or before presence was kept.
    clock.advance(30 * 24 * 3600)
    assert desk.release_away_claims() == []
    assert desk.conversation(conversation).agent == "ana"


def test_a_grace_of_zero_never_releases(backend: Backend, clock: FakeClock) -> None:
    desk = DeskService(backend.open(clock), release_after_s=0)
    try:
        desk.agent_seen("ana")
        conversation = claimed(desk)
        clock.advance(30 * 24 * 3600)
        assert desk.release_away_claims() == []
        assert desk.conversation(conversation).agent == "ana"
    finally:
        desk.close()


def test_presence_needs_a_name(desk: DeskService) -> None:
    with pytest.raises(Exception, match="agent's name"):
        desk.agent_seen("  ")


def test_two_consoles_racing_release_each_claim_once(
    backend: Backend, clock: FakeClock, desk: DeskService
) -> None:
    desk.agent_seen("ana")
    conversations = [claimed(desk) for _ in range(12)]
    consoles = ["ben", "cho"]
    watching = threading.Barrier(len(consoles) + 1)
    barrier = threading.Barrier(len(consoles))
    released: dict[str, list[int]] = {}

    def console(agent: str) -> None:
        # Each console its own connection, as another process has, watching Ana's last sighting.
        service = DeskService(backend.open(clock), release_after_s=GRACE_S)
        try:
            assert service.release_away_claims(here=agent) == []
            watching.wait()
            watching.wait()  # The grace passes meanwhile.
            barrier.wait()  # The same moment on both.
            released[agent] = service.release_away_claims(here=agent)
        finally:
            service.close()

    threads = [threading.Thread(target=console, args=(agent,)) for agent in consoles]
    for thread in threads:
        thread.start()
    watching.wait(timeout=30)
    clock.advance(GRACE_S + 1)
    watching.wait(timeout=30)
    for thread in threads:
        thread.join(timeout=30)

    assert sorted(released["ben"] + released["cho"]) == conversations
    for conversation in conversations:
        assert len(released_events(desk, conversation)) == 1
        assert desk.conversation(conversation).state is State.WAITING


async def test_a_bot_worker_releases_them_with_no_console_open(
    backend: Backend, clock: FakeClock, desk: DeskService
) -> None:
    desk.agent_seen("ana")
    conversation = claimed(desk)  # Then Ana's only console closed; no other console is open.

    def no_engine() -> Engine:
        raise AssertionError("no question to judge")

    opened = AsyncDesk.open(lambda: DeskService(backend.open(clock), release_after_s=GRACE_S))
    worker = BotWorker(opened, no_engine, sweep_s=0.01)
    task = asyncio.create_task(worker.run())
    try:
        async with asyncio.timeout(10):
            # Time passes while the worker sweeps: it watches her last sighting go stale.
            while desk.conversation(conversation).state is not State.WAITING:
                clock.advance(60)
                await asyncio.sleep(0.01)
    finally:
        worker.stop()
        await task
        await opened.aclose()
    assert len(released_events(desk, conversation)) == 1


def test_a_console_whose_clock_runs_ahead_never_releases_an_agent_at_their_desk(
    backend: Backend, clock: FakeClock, desk: DeskService
) -> None:
    """Ben's console ticks every half minute on his host; Cid's host runs 50 s fast. Read by
    Cid's clock, Ben's newest sighting looked older than a 60 s grace just before each tick."""
    grace = 60.0
    ahead = timedelta(seconds=50)
    bens = DeskService(backend.open(clock), release_after_s=grace)
    cids = DeskService(backend.open(lambda: clock() + ahead), release_after_s=grace)
    try:
        bens.agent_seen("ben")
        conversation = claimed(bens, "ben")
        for _ in range(10):  # Five minutes of Ben at his desk.
            clock.advance(29)
            assert cids.release_away_claims(here="cid") == []
            clock.advance(1)
            bens.agent_seen("ben")
            assert cids.release_away_claims(here="cid") == []
        assert desk.conversation(conversation).agent == "ben"
        assert released_events(desk, conversation) == []
        # His console closes: Cid's, watching by its own clock, lets go after the grace.
        clock.advance(grace + 1)
        assert cids.release_away_claims(here="cid") == [conversation]
    finally:
        bens.close()
        cids.close()


def test_a_console_never_releases_its_own_agents_claims(
    desk: DeskService, clock: FakeClock
) -> None:
    """A laptop asleep longer than the grace: on waking, its console's sweep may run before its
    own sighting is written; its agent is at it all the same."""
    desk.agent_seen("ana")
    conversation = claimed(desk)
    assert desk.release_away_claims(here="ana") == []
    clock.advance(GRACE_S * 3)  # Asleep: no tick.
    assert desk.release_away_claims(here="ana") == []
    assert desk.conversation(conversation).agent == "ana"
    # Anyone else's console, watching all along, would have let go by now.
    assert desk.release_away_claims(here="ben") == [conversation]
