"""Presence per console, beside presence per agent.

Two consoles under one agent's name were one sighting: a console quitting could not tell another
was open, and handed back the claims that one was working (tests/tui/test_quit_other_console.py
for the app). Now each console's tick names its session too, in the same write: the store keeps a
row per console, forgets one not seen for `AWAY_AFTER_S` as consoles write theirs, and drops one
as it ends; the desk counts the agent's other consoles open, and knows which claims a console made
by their time. Both backends; the clock is injected, moved by hand."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.models import State
from chatbot.desk.service import AWAY_AFTER_S, DeskService
from chatbot.store.interface import ConversationStore
from tests.backends import Backend
from tests.store.conftest import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(backend: Backend, clock: FakeClock) -> Iterator[ConversationStore]:
    opened = backend.open(clock)
    yield opened
    opened.close()


@pytest.fixture
def desk(backend: Backend, clock: FakeClock) -> Iterator[DeskService]:
    service = DeskService(backend.open(clock))
    yield service
    service.close()


def waiting(desk: DeskService) -> int:
    conversation = desk.talk_to_person(None).conversation.id
    desk.ask(conversation, "Where is my helmet?")
    return conversation


def test_the_store_keeps_a_row_per_console_beside_the_agents(
    store: ConversationStore, clock: FakeClock
) -> None:
    store.agent_seen("ben", session="one")
    first = clock()
    clock.advance(10)
    store.agent_seen("ben", session="two")
    store.agent_seen("ana", session="three")
    store.agent_seen("cho")  # A console from before sessions: its agent's row alone.
    assert store.sessions_seen("ben") == {"one": first, "two": clock()}
    assert store.sessions_seen("ana") == {"three": clock()}
    assert store.sessions_seen("cho") == {}
    assert store.agents_seen() == {"ben": clock(), "ana": clock(), "cho": clock()}
    store.session_ended("ben", session="one")
    store.session_ended("ben", session="gone already")  # Nothing to drop: nothing happens.
    assert store.sessions_seen("ben") == {"two": clock()}
    assert store.agents_seen()["ben"] == clock()  # The agent's own sighting stays.


def test_a_console_not_seen_for_a_while_is_forgotten_as_others_write(
    store: ConversationStore, clock: FakeClock
) -> None:
    store.agent_seen("ben", session="killed", forget_s=60)
    clock.advance(30)
    store.agent_seen("ana", session="open", forget_s=60)
    assert set(store.sessions_seen("ben")) == {"killed"}  # 30 s: not yet.
    clock.advance(31)
    store.agent_seen("ana", session="open", forget_s=60)
    assert store.sessions_seen("ben") == {}
    assert store.sessions_seen("ana") == {"open": clock()}


def test_the_desk_counts_the_agents_other_consoles_open(
    desk: DeskService, clock: FakeClock
) -> None:
    assert desk.other_sessions("ben", session="one") == 0
    desk.agent_seen("ben", session="one")
    assert desk.other_sessions("ben", session="one") == 0  # Itself is not another.
    desk.agent_seen("ben", session="two")
    desk.agent_seen("ana", session="three")
    assert desk.other_sessions("ben", session="one") == 1
    assert desk.other_sessions("ben", session="two") == 1
    clock.advance(AWAY_AFTER_S)
    desk.agent_seen("ben", session="one")
    assert desk.other_sessions("ben", session="one") == 1  # Two ticks late: still open.
    clock.advance(1)
    assert desk.other_sessions("ben", session="one") == 0  # Not seen for over a minute.
    desk.agent_seen("ben", session="two")
    assert desk.other_sessions("ben", session="one") == 1
    desk.session_ended("ben", session="two")
    assert desk.other_sessions("ben", session="one") == 0


def test_a_claim_is_this_consoles_while_it_is_the_same_claim(
    desk: DeskService, clock: FakeClock
) -> None:
    mine, given_up, theirs = waiting(desk), waiting(desk), waiting(desk)
    made = {}
    for conversation in (mine, given_up):
        result = desk.claim(conversation, agent="ben")
        made[conversation] = result.conversation.claimed_at
        clock.advance(1)
    assert desk.claim(theirs, agent="ben").won  # By his other console.
    desk.release(given_up, agent="ben")
    clock.advance(1)
    assert desk.claim(given_up, agent="ben").won  # Given up here, taken again there.
    assert desk.still_claimed("ben", made) == [mine]
    assert desk.still_claimed("ana", made) == []

    assert desk.release_claims("ben", only=[mine]) == [mine]
    assert [desk.conversation(c).state for c in (mine, given_up, theirs)] == [
        State.WAITING, State.CLAIMED, State.CLAIMED,
    ]  # fmt: skip


async def test_the_async_desk_names_its_console_and_keeps_the_claims_it_won(
    backend: Backend, clock: FakeClock, desk: DeskService
) -> None:
    """One app, one `AsyncDesk`: its ticks name its session, and F6, Ctrl+L or a reopen there
    are the claims it made."""
    here = AsyncDesk.open(lambda: DeskService(backend.open(clock)))
    there = AsyncDesk.open(lambda: DeskService(backend.open(clock)))
    try:
        assert here.session != there.session
        await here.agent_seen("ben")
        assert await there.other_sessions("ben") == 1
        assert await here.other_sessions("ben") == 0
        taken, claimed, reopened, elsewhere = (waiting(desk) for _ in range(4))
        result = await here.take_next(agent="ben")
        assert result is not None and result.conversation.id == taken
        assert (await here.claim(claimed, agent="ben")).won
        assert (await there.claim(elsewhere, agent="ben")).won
        desk.claim(reopened, agent="ben")
        desk.resolve(reopened, agent="ben")
        assert (await here.reopen(reopened, agent="ben")).won
        assert await here.claimed_here("ben") == [taken, claimed, reopened]
        assert await there.claimed_here("ben") == [elsewhere]
        await here.session_ended("ben")
        assert await there.other_sessions("ben") == 0
    finally:
        here.close()
        there.close()
