"""What goes over the wire to Valen, in both dialects, and how replies are normalised.

The input layout and predicate are byte-for-byte the cookbook's: the recorded answers in
`caches/rerank.json` were produced from exactly these strings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from chatbot.valen.errors import InvalidResponseError, RefusedError, ValenError

Dialect = Literal["decisions", "systemone"]

PREDICATE = "A support agent could answer the customer's question using only this passage."
ANSWER_NAME = "answers"


def input_text(question: str, passage_text: str) -> str:
    """The text Valen reads for one question and one passage."""
    return f"Customer question: {question}\n\nHelp-center passage: {passage_text}"


@dataclass(frozen=True, slots=True)
class Question:
    """One predicate asked about an input, under a name that is unique within its request."""

    name: str
    instructions: str


def route(dialect: Dialect) -> str:
    """The path, relative to the base URL, that each dialect posts to."""
    return "/systemone" if dialect == "systemone" else "/decisions"


def request_body(
    dialect: Dialect, *, text: str, questions: Sequence[Question], model: str | None
) -> dict[str, Any]:
    """The JSON body for one request. `model` is left out entirely when it is not configured."""
    body: dict[str, Any]
    if dialect == "systemone":
        body = {
            "state": text,
            "questions": {
                q.name: {"type": "noul", "instructions": q.instructions} for q in questions
            },
        }
    else:
        body = {
            "input": text,
            "questions": [
                {"type": "predicate", "name": q.name, "instructions": q.instructions}
                for q in questions
            ],
        }
    if model:
        body = {"model": model, **body}
    return body


# The answer types that carry the predicate's probability, one per dialect.
ANSWER_TYPES = frozenset({"predicate", "noul"})

# One outcome per question: a probability, or the error that stopped it being judged.
Outcome = float | ValenError


def _named_answers(answers: Any) -> list[tuple[Any, Any]]:
    """(name, answer) pairs from either a list of answers or a name-keyed map."""
    if isinstance(answers, Mapping):
        return list(answers.items())
    if isinstance(answers, list):
        return [(a.get("name") if isinstance(a, Mapping) else None, a) for a in answers]
    raise InvalidResponseError("'answers' is neither a list nor an object")


def _probability(answer: Any) -> Outcome:
    """Validate one answer object into a probability, a refusal, or an invalid-response error."""
    if not isinstance(answer, Mapping):
        return InvalidResponseError("an answer is not an object")
    kind = answer.get("type")
    if kind == "refusal":
        return RefusedError("Valen declined to judge this passage")
    if kind is not None and kind not in ANSWER_TYPES:
        return InvalidResponseError(f"answer has type {str(kind)[:40]!r}, not a predicate")
    field = "noul" if "noul" in answer else "probability"
    value = answer.get(field)
    if value is None:
        return InvalidResponseError(f"answer has no {field!r}")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return InvalidResponseError(f"{field!r} is not a number: {str(value)[:40]!r}")
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return InvalidResponseError(f"{field!r} is not a probability in [0, 1]: {value!r}")
    return float(value)


def parse_answers(body: Any, names: Sequence[str]) -> dict[str, Outcome]:
    """Normalise a reply (list or map; `probability` or `noul`) to one outcome per asked name.

    A problem with the reply as a whole raises; a problem with one answer only marks that name.
    """
    if not isinstance(body, Mapping) or "answers" not in body:
        raise InvalidResponseError("reply has no 'answers'")
    pairs = _named_answers(body["answers"])
    outcomes: dict[str, Outcome] = {}
    seen: dict[str, int] = {}
    for name, answer in pairs:
        if not isinstance(name, str):
            raise InvalidResponseError("an answer has no name")
        if name not in names:
            raise InvalidResponseError(f"answer for unknown name {name[:40]!r}")
        seen[name] = seen.get(name, 0) + 1
        outcomes[name] = _probability(answer)
    for name in names:
        if seen.get(name, 0) > 1:
            outcomes[name] = InvalidResponseError(f"duplicate answers for {name!r}")
        elif name not in outcomes:
            outcomes[name] = InvalidResponseError(f"no answer for {name!r}")
    return outcomes
