"""A content gap is a question no passage answers yet: one the bot answered (a passage reached the
threshold) is none, whatever happened after it (the customer asking for a person, a person
holding the conversation when the bot decided), unless the customer said the answer was not
helpful. Checked where gaps are shown: the figures (`helpdesk stats`, F5) and the editor's list,
on every backend."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from chatbot.cli.main import main
from chatbot.desk.models import Feedback, State
from chatbot.desk.service import DeskService
from chatbot.engine.models import Answer, Candidate, Decision, Reason
from tests.backends import Backend
from tests.store.conftest import FakeClock, escalated

WORKER = "worker-1"
BRAKES = "The bike's brakes were already worn when I took it. Will I have to pay for that?"
DAMAGE = Candidate(
    id="damage-fee",
    title="Damage fees",
    text="You pay only for damage you caused; report wear you find before riding.",
    bm25=6.1,
    probability=0.96,
)


def answered_from_damage_fee(question: str) -> Decision:
    answer = Answer(id=DAMAGE.id, title=DAMAGE.title, text=DAMAGE.text, probability=0.96)
    return Decision(question=question, answer=answer, reason=None, candidates=(DAMAGE,),
                    threshold=0.7, latency_ms=9.0)  # fmt: skip


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def desk(backend: Backend, clock: FakeClock) -> Iterator[DeskService]:
    service = backend.service(clock)
    yield service
    service.close()


def decide(desk: DeskService, decision: Decision) -> str:
    [question] = desk.lease(WORKER, limit=1, lease_s=30)
    return desk.record_decision(WORKER, question, decision).outcome


def gaps(desk: DeskService) -> tuple[list[str], list[str]]:
    """The gaps the editor lists, and those the figures count."""
    listed = [gap.question for gap in desk.content_gaps()]
    counted = [gap.question for gap in desk.stats().content_gaps]
    return listed, counted


def test_an_answered_question_is_no_gap_when_the_customer_then_asks_for_a_person(
    desk: DeskService,
) -> None:
    """The tester's case: answered from `damage-fee` at 0.96, then "Talk to a person"."""
    conversation = desk.ask(None, BRAKES).conversation.id
    assert decide(desk, answered_from_damage_fee(BRAKES)) == "answered"
    assert desk.talk_to_person(conversation).escalated
    assert gaps(desk) == ([], [])
    # Still an escalation the customer asked for: only the gaps leave it out.
    figures = desk.stats()
    assert figures.escalations == 1
    assert {r.reason: r.count for r in figures.escalations_by_reason if r.count} == {
        Reason.CUSTOMER_ASKED: 1
    }
    [item] = desk.queue()
    assert (item.question, item.reason) == (BRAKES, Reason.CUSTOMER_ASKED)


def test_an_answered_question_marked_not_helpful_stays_a_gap(desk: DeskService) -> None:
    """The customer said the passage did not answer after all: what they asked still has no
    passage that answers it."""
    conversation = desk.ask(None, BRAKES).conversation.id
    decide(desk, answered_from_damage_fee(BRAKES))
    [answer] = [m for m in desk.messages(conversation) if m.passage_id == DAMAGE.id]
    assert desk.feedback(conversation, entry_id=answer.id, value=Feedback.NOT_HELPFUL).escalated
    assert desk.conversation(conversation).reason is Reason.NOT_HELPFUL
    assert gaps(desk) == ([BRAKES], [BRAKES])
    # The verdict is counted where verdicts are too: per passage.
    [verdicts] = desk.stats().feedback
    assert (verdicts.passage_id, verdicts.not_helpful) == (DAMAGE.id, 1)


def test_a_question_asked_again_after_its_answer_is_no_gap(desk: DeskService) -> None:
    """Asked again, the bot offers a person instead of the same answer (the second asking is
    never judged); the customer takes the offer."""
    conversation = desk.ask(None, BRAKES).conversation.id
    decide(desk, answered_from_damage_fee(BRAKES))
    again = desk.ask(conversation, "  the bike's BRAKES were already worn when I took it. "
                                   "Will I have to pay for that?")  # fmt: skip
    assert not again.message.pending
    assert desk.talk_to_person(conversation).escalated
    assert gaps(desk) == ([], [])


def test_a_question_a_passage_answered_while_a_person_had_it_is_no_gap(
    desk: DeskService,
) -> None:
    conversation = desk.ask(None, BRAKES).conversation.id
    assert desk.talk_to_person(conversation).escalated  # Before the bot decided.
    assert gaps(desk) == ([BRAKES], [BRAKES])  # Not known to be answered yet.
    assert decide(desk, answered_from_damage_fee(BRAKES)) == "kept"
    assert desk.conversation(conversation).state is State.WAITING
    assert gaps(desk) == ([], [])


def test_questions_no_passage_answered_stay_gaps(desk: DeskService, clock: FakeClock) -> None:
    docks = "No free docks, will I pay a late fee?"
    desk.ask(None, docks)
    assert decide(desk, escalated(docks)) == "escalated"
    clock.advance(60)
    # Another conversation answered a question with these words: this one was not answered.
    elsewhere = desk.ask(None, docks).conversation.id
    decide(desk, answered_from_damage_fee(docks))
    assert desk.talk_to_person(elsewhere).escalated
    clock.advance(60)
    # Answered in this conversation, but another question escalated.
    mixed = desk.ask(None, BRAKES).conversation.id
    decide(desk, answered_from_damage_fee(BRAKES))
    desk.ask(mixed, "Can I rent a tandem?")
    assert decide(desk, escalated("Can I rent a tandem?")) == "escalated"
    listed, counted = gaps(desk)
    assert listed == ["Can I rent a tandem?", docks]
    assert counted == ["Can I rent a tandem?", docks]  # Once each, the latest first.
    assert [g.count for g in desk.stats().content_gaps] == [1, 1]


def test_helpdesk_stats_lists_no_answered_question_as_a_gap(
    backend: Backend, desk: DeskService, capsys: pytest.CaptureFixture[str]
) -> None:
    conversation = desk.ask(None, BRAKES).conversation.id
    decide(desk, answered_from_damage_fee(BRAKES))
    desk.talk_to_person(conversation)
    docks = "No free docks, will I pay a late fee?"
    desk.ask(None, docks)
    decide(desk, escalated(docks))
    assert main(["stats", "--db", str(backend.location), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert [gap["question"] for gap in figures["content_gaps"]] == [docks]
    assert main(["stats", "--db", str(backend.location)]) == 0
    assert "already worn" not in capsys.readouterr().out
