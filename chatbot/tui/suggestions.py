"""The questions the replay cache has recorded answers for, offered to try in replay mode.

With recorded answers only, any other question is "not judged" and goes to a person, so a
newcomer who types their own question would only ever see escalations.
"""

from __future__ import annotations

from pathlib import Path

from chatbot.valen.cache import CorruptCacheError, read_entries

PREFIX = "Customer question: "
SEPARATOR = "\n\nHelp-center passage: "
MAX_SUGGESTIONS = 5


def recorded_questions(cache: Path) -> tuple[str, ...]:
    """Distinct questions in the cache file, in file order; none if it cannot be read."""
    try:
        entries = read_entries(cache) or {}
    except CorruptCacheError:
        return ()  # The engine reports a bad cache itself; suggestions are only a convenience.
    questions: dict[str, None] = {}
    for entry in entries.values():
        text = entry.get("input", "") if isinstance(entry, dict) else ""
        if isinstance(text, str) and text.startswith(PREFIX) and SEPARATOR in text:
            questions[text[len(PREFIX) : text.index(SEPARATOR)]] = None
    return tuple(questions)[:MAX_SUGGESTIONS]
