"""Driving the desk through its service: questions taken and answered as a worker would,
conversations brought to a state, and a scripted day whose every figure is known."""

from __future__ import annotations

from datetime import timedelta

from chatbot.desk.models import Author, ChatMessage, Feedback, PendingQuestion, State
from chatbot.desk.service import DeskService
from chatbot.engine.models import Answer, Candidate, Decision, Reason
from tests.store.conftest import LATE, MISS, START, FakeClock, answered, escalated

WORKER = "worker-1"
Q1 = "I was charged twice, can I get my money back?"
Q2 = "How long does a refund take?"


def take(desk: DeskService, worker: str = WORKER) -> PendingQuestion:
    [question] = desk.lease(worker, limit=1, lease_s=30)
    return question


def answer_next(desk: DeskService, question: str = Q1) -> ChatMessage:
    """Let a worker answer the oldest pending question; returns the bot's answer."""
    leased = take(desk)
    result = desk.record_decision(WORKER, leased, answered(question))
    assert result.outcome == "answered"
    return [m for m in desk.messages(leased.conversation_id) if m.author is Author.BOT][-1]


def in_state(desk: DeskService, state: State) -> int:
    """A conversation brought to `state` through the service; ana holds any claim."""
    asked = desk.ask(None, Q1)
    conversation_id = asked.conversation.id
    answer_next(desk)
    if state is State.BOT:
        return conversation_id
    assert desk.talk_to_person(conversation_id).escalated
    if state is State.WAITING:
        return conversation_id
    assert desk.claim(conversation_id, agent="ana").won
    if state is State.RESOLVED:
        desk.resolve(conversation_id, agent="ana")
    return conversation_id


DOCKS = "No free docks, will I pay a late fee?"
TIMEOUT = Candidate(id="refund-time", text="Refund text.", bm25=1.7, error="timeout: 20 s",
                    error_kind="timeout")  # fmt: skip
SEVENTY_TWO = Candidate(id="late-return", title="Late returns", text="Late fee text.", bm25=5.3,
                        probability=0.72)  # fmt: skip


def unanswered(question: str, reason: Reason, candidates: tuple[Candidate, ...],
               latency_ms: float) -> Decision:  # fmt: skip
    return Decision(question=question, answer=None, reason=reason, candidates=candidates,
                    threshold=0.7, latency_ms=latency_ms)  # fmt: skip


class Script:
    """Drives the desk through the service at exact times (seconds after START)."""

    def __init__(self, desk: DeskService, clock: FakeClock) -> None:
        self.desk = desk
        self.clock = clock

    def at(self, seconds: float) -> Script:
        self.clock.now = START + timedelta(seconds=seconds)
        return self

    def ask(self, seconds: float, text: str) -> int:
        return self.at(seconds).desk.ask(None, text).conversation.id

    def decide(self, seconds: float, decision: Decision) -> int | None:
        """A worker settles the pending question; returns the bot's answer entry, if any."""
        [question] = self.at(seconds).desk.lease(WORKER, limit=1, lease_s=30)
        result = self.desk.record_decision(WORKER, question, decision)
        if result.outcome != "answered":
            return None
        latest = self.desk.store.latest_answer(question.conversation_id)
        assert latest is not None
        return latest.id


def script_day(desk: DeskService, clock: FakeClock) -> None:
    """Ten conversations on 2026-01-05 from 09:00 UTC; the clock is left at 09:33:20."""
    s = Script(desk, clock)
    # 1: answered (12.5 ms), marked helpful: the bot resolved it.
    c1 = s.ask(0, "q1")
    a1 = s.decide(1, answered("q1"))
    assert a1 is not None
    s.at(2).desk.feedback(c1, entry_id=a1, value=Feedback.HELPFUL)
    # 2: answered, marked not helpful (escalated at 102); claimed, replied to 180 s after the
    # escalation, resolved 480 s after it.
    c2 = s.ask(100, "q2")
    a2 = s.decide(101, answered("q2"))
    assert a2 is not None
    assert s.at(102).desk.feedback(c2, entry_id=a2, value=Feedback.NOT_HELPFUL).escalated
    assert s.at(162).desk.claim(c2, agent="ana").won
    s.at(282).desk.reply(c2, agent="ana", text="Sorry, here is what happened.")
    s.at(582).desk.resolve(c2, agent="ana")
    # 3: low score (0.644, 8 ms), waiting since 201.
    s.ask(200, DOCKS)
    assert s.decide(201, escalated(DOCKS)) is None
    # 4: answered, then the customer asks for a person (302); ben replies 70 s later and hands
    # it back to the bot.
    c4 = s.ask(300, "q4")
    assert s.decide(301, answered("q4")) is not None
    assert s.at(302).desk.talk_to_person(c4).escalated
    assert s.at(312).desk.claim(c4, agent="ben").won
    s.at(372).desk.reply(c4, agent="ben", text="Hello!")
    s.at(400).desk.hand_back(c4, agent="ben")
    # 5: nothing retrieved (5 ms, no score); claimed and released unanswered: waiting since 501.
    c5 = s.ask(500, "xyzzy")
    s.decide(501, unanswered("xyzzy", Reason.NO_PASSAGES, (), 5.0))
    assert s.at(521).desk.claim(c5, agent="ana").won
    s.at(541).desk.release(c5, agent="ana")
    # 6: not judged (a replay miss, 20 ms, no score); replied to 660 s after, resolved 1,260 s.
    c6 = s.ask(600, "q6")
    s.decide(601, unanswered("q6", Reason.NOT_JUDGED, (MISS,), 20.0))
    assert s.at(661).desk.claim(c6, agent="ana").won
    s.at(1261).desk.reply(c6, agent="ana", text="Let me check.")
    s.at(1861).desk.resolve(c6, agent="ana")
    # 7: Valen timed out on one passage (0.644 on the other, 30 ms): the same question as 3, in
    # other case; waiting since 701.
    s.ask(700, DOCKS.lower())
    s.decide(701, unanswered(DOCKS.lower(), Reason.VALEN_ERROR, (LATE, TIMEOUT), 30.0))
    # 8: workers kept failing on it: a person takes it (801), no decision stored.
    s.ask(800, "q8")
    [question] = s.at(801).desk.lease(WORKER, limit=1, lease_s=30)
    desk.fail_question(WORKER, question, reason=Reason.BOT_FAILED)
    # 9: opened, never written in (a browser visitor who only looked): counted nowhere.
    s.at(900).desk.start_conversation()
    # 10: answered at 0.72 (40 ms), no verdict: the bot resolved it.
    s.ask(1000, "q10")
    answer = Answer(id="late-return", title="Late returns", text="Late fee text.", probability=0.72)
    s.decide(1001, Decision(question="q10", answer=answer, reason=None,
                            candidates=(SEVENTY_TWO,), threshold=0.7, latency_ms=40.0))  # fmt: skip
    s.at(2000)
