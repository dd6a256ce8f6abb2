"""The questions the replay cache has recorded answers for, offered to try in replay mode, and
whether the bot answers each of them now: kept in `chatbot.engine.suggestions` (no Textual
there), where the decider `helpdesk serve`'s browser sessions share runs too."""

from __future__ import annotations

from chatbot.engine.suggestions import (
    MAX_SUGGESTIONS,
    SharedVerdicts,
    Suggestion,
    decided,
    offered,
    recorded_questions,
)

__all__ = [
    "MAX_SUGGESTIONS",
    "SharedVerdicts",
    "Suggestion",
    "decided",
    "offered",
    "recorded_questions",
]
