"""What a question must be before the bot works on it: light enough for a front end to import at
start-up (the engine itself brings numpy and the BM25 index)."""

from __future__ import annotations

from chatbot.errors import HelpdeskError

MAX_QUESTION_CHARS = 2000


def check_question(question: str) -> str:
    """Refuse a question the bot cannot work with, with a message fit for a person."""
    if not question.strip():
        raise HelpdeskError("question is empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise HelpdeskError(f"question is longer than {MAX_QUESTION_CHARS} characters")
    return question
