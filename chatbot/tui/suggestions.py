"""The questions the replay cache has recorded answers for, offered to try in replay mode.

With recorded answers only, any other question is "not judged" and goes to a person, so a
newcomer who types their own question would only ever see escalations. A recorded question whose
best recorded probability stays under the threshold goes to a person too, and says so: offering it
among "questions with recorded answers" without that promised an answer the bot never gives.

What the recordings say is only where it starts. Once the engine is built, each question is
decided as the bot would decide it now (replaying is local and takes milliseconds), and again
whenever the knowledge base changes: an edited or deleted passage no longer matches its recorded
answer, and the bot then hands that question to a person.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chatbot.errors import HelpdeskError
from chatbot.valen.cache import CorruptCacheError, read_entries
from chatbot.valen.protocol import PREDICATE, question_of

if TYPE_CHECKING:
    from chatbot.engine.engine import Engine

MAX_SUGGESTIONS = 5


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A question with recorded answers, and whether the bot would answer it."""

    question: str
    answered: bool
    """Some recorded probability for it reaches the threshold: the bot can answer it. False: it
    goes to a person whatever the knowledge base retrieves."""


def recorded_questions(
    cache: Path,
    *,
    threshold: float = 0.7,
    predicate: str = PREDICATE,
    model: str | None = None,
) -> tuple[Suggestion, ...]:
    """Distinct questions in the cache file, in file order; none if it cannot be read. Only the
    answers the engine would replay count (the same predicate and model): the cache key holds
    both, so any other recording is a replay miss."""
    try:
        entries = read_entries(cache) or {}
    except CorruptCacheError:
        return ()  # The engine reports a bad cache itself; suggestions are only a convenience.
    best: dict[str, float] = {}
    for entry in entries.values():
        if not isinstance(entry, dict):
            continue
        question = question_of(entry.get("input"))
        if question is None:
            continue
        if entry.get("instructions") != predicate or entry.get("model") != model:
            continue
        probability = entry.get("probability")
        # bool is an int: `true` is no probability. A refusal (none) never answers.
        if isinstance(probability, bool) or not isinstance(probability, int | float):
            probability = -1.0
        best[question] = max(best.get(question, -1.0), float(probability))
    suggestions = (Suggestion(q, answered=p >= threshold) for q, p in best.items())
    return tuple(suggestions)[:MAX_SUGGESTIONS]


async def decided(suggestions: tuple[Suggestion, ...], engine: Engine) -> tuple[Suggestion, ...]:
    """`suggestions`, each marked as `engine` decides it now (with recorded answers only)."""

    async def answers(question: str) -> bool:
        try:
            return not (await engine.answer(question)).escalated
        except HelpdeskError:  # A recorded question the engine refuses (too long): a person.
            return False

    verdicts = await asyncio.gather(*(answers(s.question) for s in suggestions))
    return tuple(
        Suggestion(s.question, answered=verdict)
        for s, verdict in zip(suggestions, verdicts, strict=True)
    )
