"""A claim its agent left behind (quit keeping it, went home) can be put back in the queue by a
colleague: its customer was told a person was helping, and only the owner could let it go."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chatbot.desk.models import ChatEvent, Released, State
from chatbot.desk.service import DeskService
from chatbot.desk.states import Refused
from chatbot.notices import notice
from tests.backends import Backend
from tests.store.conftest import FakeClock


@pytest.fixture
def desk(backend: Backend) -> Iterator[DeskService]:
    service = backend.service(FakeClock())
    yield service
    service.close()


def claimed_by_ana(desk: DeskService) -> int:
    conversation = desk.talk_to_person(None).conversation.id
    desk.ask(conversation, "Where is my helmet?")
    assert desk.claim(conversation, agent="ana").won
    return conversation


def test_a_colleague_puts_a_claim_left_behind_back_in_the_queue(desk: DeskService) -> None:
    conversation = claimed_by_ana(desk)
    back = desk.take_back(conversation, agent="ben", owner="ana")
    assert (back.state, back.agent) == (State.WAITING, None)
    [event] = [
        e.event
        for e in desk.entries(conversation)
        if isinstance(e, ChatEvent) and isinstance(e.event, Released)
    ]
    assert event == Released(agent="ana", by="ben")
    # The customer reads that their agent stepped away; agents read who put it back.
    assert notice(event, reader="customer") == ("ana stepped away. Another person will reply here.")
    assert notice(event, reader="agent") == "ben put ana's claim back in the queue."
    assert desk.claim(conversation, agent="ben").won


def test_a_claim_that_changed_hands_meanwhile_is_not_taken(desk: DeskService) -> None:
    conversation = claimed_by_ana(desk)
    desk.release(conversation, agent="ana")
    assert desk.claim(conversation, agent="cho").won  # Ben's screen still says ana.
    with pytest.raises(Refused, match="claimed by cho now"):
        desk.take_back(conversation, agent="ben", owner="ana")
    assert desk.conversation(conversation).agent == "cho"
