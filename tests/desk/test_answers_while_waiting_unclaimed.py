"""Questions asked together and judged out of order (a slow Valen): the first escalated, and the
bot's answers to the other two, landing while the conversation waited in the queue, were kept
silent. Nobody had claimed it: the customer heard nothing of the questions the bot could answer.
Waiting, unclaimed, the bot answers every question but the one the conversation waits with; it
stays in the queue for that one. Claimed, it stays silent, as before."""

from __future__ import annotations

from typing import Any

from chatbot.desk.models import (
    Author,
    ChatEvent,
    Decided,
    Escalated,
    Feedback,
    PendingQuestion,
    State,
)
from chatbot.desk.service import DeskService
from chatbot.engine.models import Answer, Candidate, Decision
from tests.backends import Backend
from tests.desk.helpers import WORKER
from tests.store.conftest import FakeClock, escalated

HELMET = "Do I need a helmet to ride?"
DAMAGE = "How do I report damage on a bike?"
BATTERY = "My e-bike battery ran out, what now?"


def answered_from(question: str, passage: str) -> Decision:
    """The bot would answer `question` from `passage`, the one candidate it judged."""
    found = Candidate(id=passage, text=f"The {passage} passage.", bm25=6.0, probability=0.93)
    return Decision(
        question=question,
        answer=Answer(id=found.id, text=found.text, probability=0.93),
        reason=None,
        candidates=(found,),
        threshold=0.7,
        latency_ms=9.0,
    )


def asked_together(desk: DeskService) -> tuple[int, list[PendingQuestion]]:
    """The three questions a second apart, all taken by one worker before it decides any."""
    conversation = desk.ask(None, HELMET).conversation.id
    desk.ask(conversation, DAMAGE)
    desk.ask(conversation, BATTERY)
    leased = desk.lease(WORKER, limit=3, lease_s=60)
    assert [q.text for q in leased] == [HELMET, DAMAGE, BATTERY]
    return conversation, leased


def outcomes(desk: DeskService, conversation: int) -> list[str]:
    return [
        e.event.outcome
        for e in desk.entries(conversation)
        if isinstance(e, ChatEvent) and isinstance(e.event, Decided)
    ]


def bot_answers(desk: DeskService, conversation: int) -> list[str]:
    """The passage each of the bot's answers here quotes, in the order said."""
    return [str(m.passage_id) for m in desk.messages(conversation) if m.author is Author.BOT]


def escalations(desk: DeskService, conversation: int) -> int:
    return sum(
        isinstance(e, ChatEvent) and isinstance(e.event, Escalated)
        for e in desk.entries(conversation)
    )


def test_the_other_questions_are_answered_while_the_first_waits_for_a_person(
    desk: DeskService,
) -> None:
    conversation, (helmet, damage, battery) = asked_together(desk)
    assert desk.record_decision(WORKER, helmet, escalated(HELMET)).outcome == "escalated"
    assert desk.record_decision(WORKER, damage, answered_from(DAMAGE, "damage-report")).outcome == (
        "answered"
    )
    result = desk.record_decision(WORKER, battery, answered_from(BATTERY, "e-bike-battery"))
    assert result.outcome == "answered"
    assert bot_answers(desk, conversation) == ["damage-report", "e-bike-battery"]
    log = [m for m in desk.messages(conversation) if m.author is Author.BOT]
    assert all(m.decision_id is not None for m in log)  # Each answer with its decision.
    waiting = desk.conversation(conversation)
    assert (waiting.state, waiting.question_entry, waiting.pending) == (
        State.WAITING,
        helmet.id,
        0,
    )
    # The agent's queue still names the question the person takes up.
    [item] = desk.queue()
    assert (item.conversation_id, item.question, item.question_entry) == (
        conversation,
        HELMET,
        helmet.id,
    )
    assert escalations(desk, conversation) == 1


def test_an_answer_given_while_waiting_takes_helpful_and_not_helpful_as_any(
    desk: DeskService,
) -> None:
    conversation, (helmet, damage, battery) = asked_together(desk)
    desk.record_decision(WORKER, helmet, escalated(HELMET))
    desk.record_decision(WORKER, damage, answered_from(DAMAGE, "damage-report"))
    desk.record_decision(WORKER, battery, answered_from(BATTERY, "e-bike-battery"))
    latest = [m for m in desk.messages(conversation) if m.author is Author.BOT][-1]
    result = desk.feedback(conversation, entry_id=latest.id, value=Feedback.NOT_HELPFUL)
    assert result.message.feedback is Feedback.NOT_HELPFUL
    # Already in the queue: no second escalation, and it still waits with the helmet question.
    assert not result.escalated
    assert desk.conversation(conversation).question_entry == helmet.id
    assert escalations(desk, conversation) == 1


def test_the_same_whichever_judgment_returns_first(desk: DeskService) -> None:
    conversation, (helmet, damage, battery) = asked_together(desk)
    desk.record_decision(WORKER, battery, answered_from(BATTERY, "e-bike-battery"))
    desk.record_decision(WORKER, damage, answered_from(DAMAGE, "damage-report"))
    desk.record_decision(WORKER, helmet, escalated(HELMET))
    first = desk.conversation(conversation)
    assert (first.state, first.question_entry) == (State.WAITING, helmet.id)
    assert sorted(bot_answers(desk, conversation)) == ["damage-report", "e-bike-battery"]
    # And in the tester's order, on another conversation: the same answers, the same queue row.
    other, (helmet2, damage2, battery2) = asked_together(desk)
    desk.record_decision(WORKER, helmet2, escalated(HELMET))
    desk.record_decision(WORKER, damage2, answered_from(DAMAGE, "damage-report"))
    desk.record_decision(WORKER, battery2, answered_from(BATTERY, "e-bike-battery"))
    second = desk.conversation(other)
    assert (second.state, second.question_entry) == (State.WAITING, helmet2.id)
    assert sorted(bot_answers(desk, other)) == ["damage-report", "e-bike-battery"]


def test_claimed_before_the_decisions_land_the_bot_stays_silent(desk: DeskService) -> None:
    conversation, (helmet, damage, battery) = asked_together(desk)
    desk.record_decision(WORKER, helmet, escalated(HELMET))
    assert desk.claim(conversation, agent="ana").won
    assert desk.record_decision(WORKER, damage, answered_from(DAMAGE, "damage-report")).outcome == (
        "kept"
    )
    result = desk.record_decision(WORKER, battery, answered_from(BATTERY, "e-bike-battery"))
    assert result.outcome == "kept"
    assert bot_answers(desk, conversation) == []
    assert outcomes(desk, conversation) == ["escalated", "kept", "kept"]
    assert len(desk.decisions(conversation)) == 3  # Kept for ana all the same.
    claimed = desk.conversation(conversation)
    assert (claimed.state, claimed.agent, claimed.question_entry) == (
        State.CLAIMED,
        "ana",
        helmet.id,
    )


def test_a_decision_on_the_question_the_conversation_waits_with_is_kept(
    desk: DeskService,
) -> None:
    # The customer asked for a person while the bot judged: the person takes up their latest
    # question, whose decision is kept for them; the earlier one is answered.
    conversation, (helmet, damage, battery) = asked_together(desk)
    assert desk.talk_to_person(conversation).escalated
    assert desk.conversation(conversation).question_entry == battery.id
    result = desk.record_decision(WORKER, battery, answered_from(BATTERY, "e-bike-battery"))
    assert result.outcome == "kept"
    assert desk.record_decision(WORKER, damage, answered_from(DAMAGE, "damage-report")).outcome == (
        "answered"
    )
    assert bot_answers(desk, conversation) == ["damage-report"]
    waiting = desk.conversation(conversation)
    assert (waiting.state, waiting.question_entry) == (State.WAITING, battery.id)


def test_a_decision_that_would_escalate_while_waiting_is_kept(desk: DeskService) -> None:
    conversation, (helmet, damage, battery) = asked_together(desk)
    desk.record_decision(WORKER, helmet, escalated(HELMET))
    assert desk.record_decision(WORKER, damage, escalated(DAMAGE)).outcome == "kept"
    assert desk.record_decision(
        WORKER, battery, answered_from(BATTERY, "e-bike-battery")
    ).outcome == ("answered")
    assert escalations(desk, conversation) == 1
    assert desk.conversation(conversation).question_entry == helmet.id


class EscalatedAgainMeanwhile:
    """A store that, as the worker's first write of a decision begins, lets an agent claim the
    conversation and hand it back, and the customer ask for a person again: it waits once more,
    now with the question being decided, which the service had read as another's."""

    def __init__(self, service: DeskService, rival: DeskService, conversation: int) -> None:
        self._real = service.store
        self._rival = rival
        self._conversation = conversation
        self.writes = 0
        service.store = self

    def record_decision(self, question_id: int, **kwargs: Any) -> Any:
        self.writes += 1
        if self.writes == 1:
            assert self._rival.claim(self._conversation, agent="ana").won
            self._rival.hand_back(self._conversation, agent="ana")
            assert self._rival.talk_to_person(self._conversation).escalated
        return self._real.record_decision(question_id, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def test_escalated_again_with_its_question_meanwhile_the_decision_is_kept(
    backend: Backend, clock: FakeClock
) -> None:
    desk = backend.service(clock)
    rival = backend.service(clock)
    try:
        conversation, (helmet, damage, battery) = asked_together(desk)
        desk.record_decision(WORKER, helmet, escalated(HELMET))
        desk.record_decision(WORKER, damage, answered_from(DAMAGE, "damage-report"))
        store = EscalatedAgainMeanwhile(desk, rival, conversation)
        result = desk.record_decision(WORKER, battery, answered_from(BATTERY, "e-bike-battery"))
        assert store.writes == 2  # The first write found it waiting with this question: again.
        assert result.outcome == "kept"
        assert bot_answers(desk, conversation) == ["damage-report"]
        waiting = desk.conversation(conversation)
        assert (waiting.state, waiting.question_entry) == (State.WAITING, battery.id)
    finally:
        rival.close()
        desk.close()
