"""Positional decision bodies (issue 13): every decision reads back exactly as it was made, and one
the format cannot hold is left to deflated JSON rather than stored wrong."""

from __future__ import annotations

import pytest

from chatbot.engine.models import Answer, Candidate, Decision, QueryTerm, Reason, RetrievalTrace
from chatbot.store import codec

QUESTION = "Mein Fahrrad lässt sich an der STRASSE nicht entsperren – was tun?"
CANDIDATES = (
    Candidate(id="unlock", title="Unlocking", text="Hold the card to the reader.", bm25=7.25,
              probability=0.8912345678901234),
    Candidate(id="dock", title="", text="Docks & stations: ä ö ü 中文.", bm25=3.1415926535,
              probability=None, error="timeout (HTTP 504): gateway (after 3 attempts)",
              error_kind="timeout"),
    Candidate(id="refund", title="Refunds", text="Refund text.", bm25=1.0, probability=None,
              error="replay-miss: no recorded answer for this question and passage",
              error_kind="replay-miss"),
    Candidate(id="odd", title="Odd", text="Odd text.", bm25=-0.5, probability=0.1,
              error="an error line of its own", error_kind=None),
)  # fmt: skip
TRACE = RetrievalTrace(
    passages=1234,
    terms=(
        QueryTerm(word="fahrrad", term="fahrrad", passages=3),
        QueryTerm(word="strasse", term="strass", passages=0),  # "STRASSE", casefolded.
        QueryTerm(word="velo", term="velo", passages=700, synonym=True),  # Not in the question.
        QueryTerm(word="lässt", term="lasst", passages=1),
    ),
)


def decision(**changes: object) -> Decision:
    made = Decision(
        question=QUESTION,
        answer=Answer(id="unlock", title="Unlocking", text=CANDIDATES[0].text,
                      probability=0.8912345678901234),
        reason=None,
        candidates=CANDIDATES,
        threshold=0.7,
        latency_ms=312.123456789,
        retrieval=TRACE,
    )  # fmt: skip
    return made.model_copy(update=changes)


def round_trip(made: Decision, question: str = QUESTION) -> tuple[bytes | None, Decision | None]:
    found, texts = codec.revisions(made)
    numbers = {revision: 40 + n for n, revision in enumerate(found)}
    body = codec.encode(made, question, numbers)
    if body is None:
        return None, None
    back = codec.decode(
        body,
        question=question,
        latency_ms=made.latency_ms,
        revisions={n: r for r, n in numbers.items()},
        texts=texts,
    )
    return body, back


@pytest.mark.parametrize(
    "made",
    [
        decision(),
        decision(answer=None, reason=Reason.LOW_SCORE, threshold=0.123456789),
        decision(answer=None, reason=Reason.NO_PASSAGES, candidates=(), retrieval=None),
        decision(question="A question of its own, not the message's"),
        decision(threshold=1.5, retrieval=RetrievalTrace(passages=0)),
    ],
    ids=["answered", "escalated", "nothing-found", "other-question", "empty-trace"],
)
def test_a_decision_reads_back_exactly(made: Decision) -> None:
    body, back = round_trip(made)
    assert body is not None and codec.is_positional(body)
    assert back == made
    assert codec.unjudged(body) == {
        k: v for k, v in {"timeout": 1, "replay-miss": 1}.items() if made.candidates
    }


def test_the_body_holds_no_text_the_reader_has() -> None:
    body, _ = round_trip(decision())
    assert body is not None
    for candidate in CANDIDATES:
        assert candidate.text.encode() not in body
        assert candidate.id.encode() not in body
    assert QUESTION.encode() not in body and b"fahrrad" not in body
    assert b"no recorded answer" not in body and b"timeout (HTTP" not in body
    assert b" (HTTP 504): gateway" in body  # The rest of the line.


def test_a_decision_the_format_cannot_hold_is_left_to_json() -> None:
    # An answer whose title differs from its candidate's cannot be told from the candidate.
    made = decision(answer=Answer(id="unlock", title="Other", text="Hold the card to the reader.",
                                  probability=0.8912345678901234))  # fmt: skip
    assert round_trip(made) == (None, None)
    # Nor an answer that is no candidate.
    made = decision(answer=Answer(id="elsewhere", text="Elsewhere.", probability=0.9))
    assert round_trip(made) == (None, None)
