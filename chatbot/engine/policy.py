"""The answer-or-escalate decision, as a pure function of the judged candidates."""

from __future__ import annotations

from collections.abc import Sequence

from chatbot.engine.models import Answer, Candidate, Reason

DEFAULT_THRESHOLD = 0.7


def rank(candidates: Sequence[Candidate]) -> tuple[Candidate, ...]:
    """Judged candidates by probability, best first (stable, so ties keep retrieval order),
    then the unjudged ones in retrieval order: a passage without a judgment is never on top."""
    judged = [c for c in candidates if c.probability is not None]
    unjudged = [c for c in candidates if c.probability is None]
    judged.sort(key=lambda c: -(c.probability or 0.0))
    return (*judged, *unjudged)


def decide(
    candidates: Sequence[Candidate], threshold: float = DEFAULT_THRESHOLD
) -> tuple[tuple[Candidate, ...], Answer | None, Reason | None]:
    """Rank the candidates and answer from the top one if it reaches `threshold`.

    Otherwise escalate, naming the most useful reason: no passage at all; a Valen failure (an
    unjudged passage might have been the answer, and an operator should look at Valen); replay
    misses or refusals; or, when everything was judged, a low score.
    """
    ranked = rank(candidates)
    if not ranked:
        return ranked, None, Reason.NO_PASSAGES
    top = ranked[0]
    if top.probability is not None and top.probability >= threshold:
        answer = Answer(id=top.id, title=top.title, text=top.text, probability=top.probability)
        return ranked, answer, None
    failures = {c.error_kind for c in ranked if c.probability is None}
    if failures - {"replay-miss", "refused"}:
        return ranked, None, Reason.VALEN_ERROR
    if failures:
        return ranked, None, Reason.NOT_JUDGED
    return ranked, None, Reason.LOW_SCORE
