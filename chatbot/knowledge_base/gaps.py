"""Closing a content gap: an escalated question, answered by an agent, becomes a passage.

The conversation store lists the gaps and records which are handled; this module only needs the
few fields it reads, so the knowledge base does not import the store.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from chatbot.knowledge_base.interface import KnowledgeBaseStore, StoredPassage
from chatbot.knowledge_base.models import (
    MAX_ID_CHARS,
    MAX_TITLE_CHARS,
    WINDOWS_RESERVED,
    Passage,
)
from chatbot.text import strip_control

GAP_TAG = "from-gap"
_WORD = re.compile(r"[a-z0-9]+")
_ID_WORDS = 6


class Gap(Protocol):
    """The fields of a content gap the editor works from (the store's `ContentGap`)."""

    @property
    def id(self) -> int: ...
    @property
    def question(self) -> str: ...
    @property
    def agent_reply(self) -> str | None: ...


class GapLedger(Protocol):
    """Where a handled gap is recorded (the conversation store): marking one marks every
    escalation of its question handled, however often and in whatever wording it was asked."""

    def mark_gap_handled(self, gap_id: int, *, passage_id: str) -> None: ...


@dataclass(frozen=True, slots=True)
class Draft:
    """A passage form pre-filled from a gap; the editor reviews it before saving."""

    id: str
    title: str
    text: str
    tags: tuple[str, ...]


def suggest_id(question: str, *, gap_id: int, taken: set[str]) -> str:
    """A readable free slug from the question's first words (`gap-<n>` when it has no ASCII
    words, e.g. a Chinese question)."""
    words = _WORD.findall(question.lower())[:_ID_WORDS]
    base = "-".join(words)[:MAX_ID_CHARS].strip("-") or f"gap-{gap_id}"
    if base in WINDOWS_RESERVED:  # "Con?" would suggest an id no passage may have.
        base = f"{base}-{gap_id}"
    candidate, n = base, 2
    while candidate in taken:
        suffix = f"-{n}"
        candidate = base[: MAX_ID_CHARS - len(suffix)].strip("-") + suffix
        n += 1
    return candidate


def draft_from_gap(gap: Gap, *, taken: set[str]) -> Draft:
    """Title from the customer's question, text from the agent's reply (empty if none yet).

    What a customer or agent typed may hold control characters (an ESC pasted into the chat), which
    no passage may: the draft drops them, so the form never shows or saves one."""
    question = strip_control(gap.question)
    title = " ".join(question.split())
    if len(title) > MAX_TITLE_CHARS:
        title = title[: MAX_TITLE_CHARS - 1] + "…"
    return Draft(
        id=suggest_id(question, gap_id=gap.id, taken=taken),
        title=title,
        text=strip_control(gap.agent_reply or "").strip(),
        tags=(GAP_TAG,),
    )


def fill_gap(
    store: KnowledgeBaseStore, ledger: GapLedger, *, gap_id: int, passage: Passage
) -> StoredPassage:
    """Add the passage, then mark the gap handled. The passage is written first: if marking
    fails, the gap stays listed, which is safer than a gap marked handled with no passage."""
    stored = store.add(passage)
    ledger.mark_gap_handled(gap_id, passage_id=passage.id)
    return stored
