"""What goes over the wire to Valen, in both dialects, and how replies are normalised.

The input layout and predicate are byte-for-byte the cookbook's: the recorded answers in
`caches/rerank.json` were produced from exactly these strings.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from chatbot.valen.errors import InvalidResponseError, RefusedError, ValenError

DEFAULT_BASE_URL = "https://api.valen-team.workers.dev/v1"
SYSTEMONE_BASE_URL = "http://127.0.0.1:8795/v1"

Dialect = Literal["decisions", "systemone"]

PREDICATE = "A support agent could answer the customer's question using only this passage."
ANSWER_NAME = "answers"


QUESTION_PREFIX = "Customer question: "
PASSAGE_SEPARATOR = "\n\nHelp-center passage: "


def input_text(question: str, passage_text: str) -> str:
    """The text Valen reads for one question and one passage."""
    return f"{QUESTION_PREFIX}{question}{PASSAGE_SEPARATOR}{passage_text}"


def question_of(text: object) -> str | None:
    """The customer question in an `input_text`; None for any other value."""
    if not (isinstance(text, str) and text.startswith(QUESTION_PREFIX)):
        return None
    end = text.find(PASSAGE_SEPARATOR)
    return text[len(QUESTION_PREFIX) : end] if end >= 0 else None


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

# How many characters of a string from Valen an error message quotes.
QUOTE_CHARS = 40
# Longer integers are refused before Python converts them: the conversion is quadratic, and past
# 4,300 digits Python refuses it with a ValueError anyway. A probability needs one digit.
MAX_INT_DIGITS = 40

Clean = Callable[[str], str]
"""Scrubs secrets from a string that came from Valen, before it is cut or kept."""


def _unchanged(text: str) -> str:
    return text


class JSONError(ValueError):
    """Bytes that are not JSON this client will read; the message says why, in a few words."""


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise JSONError(f"a number with {len(digits.lstrip('-')):,} digits")
    return int(digits)


def loads(data: bytes | str) -> Any:
    """JSON from untrusted bytes, in linear time: a `JSONError` for anything unreadable, nested
    deeper than Python's recursion limit, or holding an integer too long to convert cheaply."""
    try:
        return json.loads(data, parse_int=_bounded_int)
    except JSONError:
        raise
    except RecursionError:
        raise JSONError("JSON nested too deeply") from None
    except UnicodeDecodeError:
        raise JSONError("not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise JSONError(f"malformed JSON at line {error.lineno} column {error.colno}") from None
    except ValueError as error:  # Anything else the decoder refuses.
        raise JSONError(f"unreadable JSON ({type(error).__name__})") from None


def quote(value: Any, clean: Clean = _unchanged) -> str:
    """A short, safe rendering of a value from a reply: strings scrubbed, then cut, then quoted;
    anything else by its JSON kind, never `str()` of a structure of unknown size or depth."""
    if isinstance(value, str):
        return repr(clean(value)[:QUOTE_CHARS])
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(value) if math.isfinite(value) else str(value).lower()
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _named_answers(answers: Any) -> list[tuple[Any, Any]]:
    """(name, answer) pairs from either a list of answers or a name-keyed map."""
    if isinstance(answers, Mapping):
        return list(answers.items())
    if isinstance(answers, list):
        return [(a.get("name") if isinstance(a, Mapping) else None, a) for a in answers]
    raise InvalidResponseError("'answers' is neither a list nor an object")


def _probability(answer: Any, clean: Clean) -> Outcome:
    """Validate one answer object into a probability, a refusal, or an invalid-response error."""
    if not isinstance(answer, Mapping):
        return InvalidResponseError("an answer is not an object")
    kind = answer.get("type")
    if kind == "refusal":
        return RefusedError("Valen declined to judge this passage")
    if kind is not None and not (isinstance(kind, str) and kind in ANSWER_TYPES):
        return InvalidResponseError(f"answer has type {quote(kind, clean)}, not a predicate")
    field = "noul" if "noul" in answer else "probability"
    value = answer.get(field)
    if value is None:
        return InvalidResponseError(f"answer has no {field!r}")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return InvalidResponseError(f"{field!r} is not a number: {quote(value, clean)}")
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return InvalidResponseError(
            f"{field!r} is not a probability in [0, 1]: {quote(value, clean)}"
        )
    return float(value)


def parse_answers(
    body: Any, names: Sequence[str], *, clean: Clean = _unchanged
) -> dict[str, Outcome]:
    """Normalise a reply (list or map; `probability` or `noul`) to one outcome per asked name.

    A problem with the reply as a whole raises; a problem with one answer only marks that name.
    Every string from the reply that an error message quotes goes through `clean` first.
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
            raise InvalidResponseError(f"answer for unknown name {quote(name, clean)}")
        seen[name] = seen.get(name, 0) + 1
        outcomes[name] = _probability(answer, clean)
    for name in names:
        if seen.get(name, 0) > 1:
            outcomes[name] = InvalidResponseError(f"duplicate answers for {name!r}")
        elif name not in outcomes:
            outcomes[name] = InvalidResponseError(f"no answer for {name!r}")
    return outcomes
