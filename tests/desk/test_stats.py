"""The desk's figures on every backend, from a scripted day of conversations whose every figure is
worked out by hand below: answered, escalated for each reason, helpful, not helpful, claimed,
replied to, resolved, handed back, released, and one never written in."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import pytest

from chatbot.desk.models import Feedback
from chatbot.desk.service import DeskService
from chatbot.desk.stats import DeskStats
from chatbot.engine.models import Answer, Candidate, Decision, Reason
from tests.backends import Backend
from tests.store.conftest import LATE, MISS, START, FakeClock, answered, escalated

WORKER = "worker-1"
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


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def desk(backend: Backend, clock: FakeClock) -> Iterator[DeskService]:
    service = backend.service(clock)
    yield service
    service.close()


@pytest.fixture
def scripted(desk: DeskService, clock: FakeClock) -> DeskService:
    script_day(desk, clock)
    return desk


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


def test_every_figure_of_a_scripted_day(scripted: DeskService) -> None:
    stats = scripted.stats(threshold=0.7)

    assert (stats.conversations, stats.asked, stats.bot_answered, stats.bot_resolved) == (
        9, 9, 4, 2
    )  # fmt: skip
    assert stats.bot_resolution_rate == pytest.approx(2 / 9)
    assert (stats.questions, stats.bot_answers) == (9, 4)
    assert stats.questions_by_hour == tuple(9 if hour == 9 else 0 for hour in range(24))

    assert stats.escalations == 7
    assert {r.reason: r.count for r in stats.escalations_by_reason} == dict.fromkeys(Reason, 1)
    assert [r.reason for r in stats.escalations_by_reason] == list(Reason)
    assert (stats.first_reply_s.count, stats.first_reply_s.p50, stats.first_reply_s.p90) == (
        3, 180.0, 660.0
    )  # fmt: skip
    assert (stats.resolution_s.count, stats.resolution_s.p50, stats.resolution_s.p90) == (
        2, 480.0, 1260.0
    )  # fmt: skip
    assert (stats.waiting_now, stats.oldest_wait_s) == (4, 2000.0 - 201.0)

    assert [(f.passage_id, f.title, f.helpful, f.not_helpful) for f in stats.feedback] == [
        ("card-charged-twice", "Charged twice for one ride", 1, 1)
    ]

    assert (stats.decisions, stats.unscored) == (8, 2)
    assert (stats.judgment_ms.count, stats.judgment_ms.p50, stats.judgment_ms.p90) == (
        8, 12.5, 40.0
    )  # fmt: skip
    assert [(e.kind, e.count) for e in stats.valen_errors] == [("replay-miss", 5), ("timeout", 1)]
    assert {b.low: b.count for b in stats.top_scores if b.count} == {0.6: 2, 0.7: 1, 0.85: 3}
    assert len(stats.top_scores) == 20 and stats.top_scores[-1].high == 1.0
    assert [(t.threshold, t.answers) for t in stats.would_answer] == [
        (0.6, 6), (0.65, 4), (0.7, 4), (0.75, 3), (0.8, 3)
    ]  # fmt: skip
    assert stats.threshold == 0.7

    # q4 was answered (the customer then asked for a person): no gap. q2's answer was "not
    # helpful": a gap still.
    assert [(g.question, g.count) for g in stats.content_gaps] == [
        (DOCKS, 2), ("q8", 1), ("q6", 1), ("xyzzy", 1), ("q2", 1)
    ]  # fmt: skip
    assert stats.content_gaps[0].last_at == START + timedelta(seconds=701)
    assert [(d.day, d.conversations) for d in stats.per_day] == [(date(2026, 1, 5), 9)]


def test_a_window_counts_what_happened_in_it(scripted: DeskService, clock: FakeClock) -> None:
    stats = scripted.stats(since=START + timedelta(seconds=550))

    # Conversations 6 to 10 started after 550 s, 9 never written in; only 10 was answered.
    assert (stats.conversations, stats.asked, stats.bot_answered, stats.bot_resolved) == (
        4, 4, 1, 1
    )  # fmt: skip
    assert stats.escalations == 3  # not judged, Valen error, bot failed
    assert (stats.first_reply_s.count, stats.first_reply_s.p50) == (1, 660.0)
    assert (stats.resolution_s.count, stats.resolution_s.p50) == (2, 480.0)  # both at 582 and up
    assert stats.feedback == ()
    assert (stats.decisions, stats.unscored) == (3, 1)
    assert [(e.kind, e.count) for e in stats.valen_errors] == [("replay-miss", 1), ("timeout", 1)]
    # Waiting is as of now, whatever the window.
    assert stats.waiting_now == 4
    assert stats.threshold is None
    assert [t.threshold for t in stats.would_answer] == [0.6, 0.65, 0.7, 0.75, 0.8]


def test_a_threshold_of_its_own_is_counted_and_each_day_has_a_point(
    scripted: DeskService, clock: FakeClock
) -> None:
    clock.now = START + timedelta(days=2, hours=1)
    scripted.ask(None, "two days later")
    stats = scripted.stats(threshold=0.72, since=datetime(2026, 1, 4, tzinfo=UTC))
    assert (0.72, 4) in [(t.threshold, t.answers) for t in stats.would_answer]
    assert [(d.day, d.conversations) for d in stats.per_day] == [
        (date(2026, 1, 4), 0), (date(2026, 1, 5), 9), (date(2026, 1, 6), 0),
        (date(2026, 1, 7), 1)
    ]  # fmt: skip
    assert stats.questions_by_hour[10] == 1


def test_an_empty_desk_has_zeros_and_no_rate(desk: DeskService) -> None:
    stats = desk.stats()
    assert isinstance(stats, DeskStats)
    assert (stats.conversations, stats.escalations, stats.decisions) == (0, 0, 0)
    assert stats.bot_resolution_rate is None
    assert stats.first_reply_s.p50 is None and stats.oldest_wait_s is None
    assert stats.per_day == ()
    assert stats.to_json()["bot_resolution_rate"] is None


def test_an_escalation_before_the_bot_answers_does_not_count_against_it(
    desk: DeskService, clock: FakeClock
) -> None:
    """ "Afterwards": a customer who asked for a person first, then got the bot back, and the
    bot's answer was the last word, counts as resolved by the bot."""
    s = Script(desk, clock)
    conversation = s.at(0).desk.start_conversation().id
    assert s.at(1).desk.talk_to_person(conversation).escalated
    assert s.at(2).desk.claim(conversation, agent="ana").won
    s.at(3).desk.hand_back(conversation, agent="ana")
    s.at(4).desk.ask(conversation, "q")
    assert s.decide(5, answered("q")) is not None
    stats = desk.stats()
    assert (stats.asked, stats.bot_answered, stats.bot_resolved) == (1, 1, 1)
    # An escalation with no question is no content gap, and no agent replied to it; it counts
    # as the customer asking for a person.
    assert stats.content_gaps == () and stats.first_reply_s.count == 0
    assert stats.escalations == 1
    assert [(r.reason, r.count) for r in stats.escalations_by_reason if r.count] == [
        (Reason.CUSTOMER_ASKED, 1)
    ]
