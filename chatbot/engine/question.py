"""What a question must be before the bot works on it: light enough for a front end to import at
start-up (the engine itself brings numpy and the BM25 index)."""

from __future__ import annotations

from chatbot.errors import HelpdeskError
from chatbot.text import is_blank

MAX_QUESTION_CHARS = 2000


def check_question(question: str) -> str:
    """Refuse a question the bot cannot work with, with a message fit for a person; return it as
    it is to be stored and asked: without the whitespace around it.

    Blank is what shows nothing: whitespace, and format characters too (a zero-width space, a
    word joiner, a bidi mark), which `str.strip` keeps: "\\u200b\\u200b" made a conversation with
    an empty bubble. The limit counts what is left once the whitespace around it is dropped, and
    that is what is stored (and sent to Valen): 2,100 spaces before "refund" were refused as too
    long, and storing them as typed would let a question of any length through the limit."""
    if is_blank(question):
        raise HelpdeskError("question is empty")
    question = question.strip()
    if len(question) > MAX_QUESTION_CHARS:
        # Says by how much: "longer than 2000 characters" left someone who pasted an email
        # guessing how much to cut.
        raise HelpdeskError(
            f"question has {len(question):,} characters; the limit is {MAX_QUESTION_CHARS:,}"
        )
    return question
