"""The desk's figures on every backend, from a scripted day of conversations whose every figure is
worked out by hand below: answered, escalated for each reason, helpful, not helpful, claimed,
replied to, resolved, handed back, released, and one never written in."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from chatbot.desk.service import DeskService
from chatbot.desk.stats import DeskStats
from chatbot.engine.models import Reason
from tests.desk.helpers import DOCKS, Script, script_day
from tests.store.conftest import START, FakeClock, answered


@pytest.fixture
def scripted(desk: DeskService, clock: FakeClock) -> DeskService:
    script_day(desk, clock)
    return desk


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
