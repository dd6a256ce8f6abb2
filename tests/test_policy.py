"""The answer-or-escalate decision."""

import pytest

from chatbot.engine import Candidate, Reason, decide


def judged(id: str, p: float, bm25: float = 1.0) -> Candidate:
    return Candidate(id=id, text=f"text of {id}", bm25=bm25, probability=p)


def unjudged(id: str, kind: str, bm25: float = 9.0) -> Candidate:
    return Candidate(id=id, text="t", bm25=bm25, error=f"{kind}: why", error_kind=kind)


def test_answers_from_the_most_probable_passage_not_the_best_bm25() -> None:
    ranked, answer, reason = decide([judged("a", 0.2, bm25=5), judged("b", 0.9, bm25=1)])
    assert answer is not None and answer.id == "b" and answer.probability == 0.9
    assert reason is None
    assert [c.id for c in ranked] == ["b", "a"]


def test_threshold_is_inclusive() -> None:
    assert decide([judged("a", 0.7)], 0.7)[1] is not None
    assert decide([judged("a", 0.6999)], 0.7)[1] is None


def test_low_score_when_everything_was_judged() -> None:
    ranked, answer, reason = decide([judged("a", 0.64), judged("b", 0.31)])
    assert answer is None and reason is Reason.LOW_SCORE


def test_no_passages() -> None:
    assert decide([]) == ((), None, Reason.NO_PASSAGES)


def test_an_unjudged_passage_is_never_the_answer_even_with_the_best_bm25() -> None:
    ranked, answer, reason = decide([unjudged("miss", "replay-miss"), judged("a", 0.1)])
    assert answer is None
    assert [c.id for c in ranked] == ["a", "miss"]
    assert reason is Reason.NOT_JUDGED


def test_all_replay_misses_are_not_judged() -> None:
    assert decide([unjudged("x", "replay-miss"), unjudged("y", "refused")])[2] is Reason.NOT_JUDGED


@pytest.mark.parametrize("kind", ["timeout", "server-error", "rate-limited", "invalid-response"])
def test_a_valen_failure_escalates_with_valen_error(kind: str) -> None:
    _, answer, reason = decide(
        [unjudged("x", kind), judged("a", 0.3), unjudged("y", "replay-miss")]
    )
    assert answer is None and reason is Reason.VALEN_ERROR


def test_a_good_answer_wins_even_if_another_passage_failed() -> None:
    _, answer, reason = decide([unjudged("x", "timeout"), judged("a", 0.95)])
    assert answer is not None and answer.id == "a" and reason is None


def test_ties_keep_retrieval_order() -> None:
    ranked, _, _ = decide([judged("first", 0.5), judged("second", 0.5)])
    assert [c.id for c in ranked] == ["first", "second"]
