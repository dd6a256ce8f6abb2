"""The engine's result: one immutable object that the CLI, the chat, the agent console and the
content-gap list all render. Nothing downstream calls Valen or BM25 itself."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict


class Reason(StrEnum):
    """Why a question went to a person."""

    LOW_SCORE = "low-score"
    """Every retrieved passage was judged and none reached the threshold."""
    NO_PASSAGES = "no-passages"
    """Retrieval found nothing that shares a word with the question."""
    NOT_JUDGED = "not-judged"
    """Some passages had no judgment (replay misses, refusals) and no judged one was good enough."""
    VALEN_ERROR = "valen-error"
    """Valen failed for at least one passage and no judged one was good enough."""
    CUSTOMER_ASKED = "customer-asked"
    """The customer asked for a person."""
    NOT_HELPFUL = "not-helpful"
    """The customer marked the bot's latest answer as not helpful."""
    BOT_FAILED = "bot-failed"
    """Bot workers took the question again and again without deciding (each one crashed or was
    killed while judging it), so it goes to a person instead of being judged once more."""


class Candidate(BaseModel):
    """A retrieved passage with its retrieval score and Valen's judgment (or why there is none)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    title: str = ""
    text: str
    bm25: float
    """The retriever's score (BM25, or the shared-word count for the overlap retriever)."""
    probability: float | None = None
    """Valen's probability that the passage answers the question; None when not judged."""
    error: str | None = None
    """Why the passage was not judged, for the agent: kind, status and message on one line."""
    error_kind: str | None = None
    """The machine-readable kind of `error` (`replay-miss`, `timeout`, `refused`, ...)."""


class Answer(BaseModel):
    """The passage the bot answers from."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    title: str = ""
    text: str
    probability: float


class QueryTerm(BaseModel):
    """One search term of the question and how it met the knowledge base."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    word: str
    """The customer's word (normalised), or the synonym that was added."""
    term: str
    """What it was searched as (its stem, or a CJK character or pair)."""
    passages: int
    """How many passages contain the term."""
    synonym: bool = False
    """Added from a synonym group rather than written by the customer."""


class RetrievalTrace(BaseModel):
    """How the question's words met the knowledge base: enough to say why nothing was found."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    passages: int
    """How many passages the knowledge base had."""
    terms: tuple[QueryTerm, ...] = ()
    locale: str | None = None
    """The language whose passages alone were searched (an engine over a translated knowledge
    base, a conversation in that language's); None: the whole knowledge base. Without it, "in
    no passage" named words of passages in the other language."""

    def common(self, term: QueryTerm) -> bool:
        """In half the passages or more: counts toward scores but never retrieves on its own."""
        return term.passages > 0 and 2 * term.passages >= self.passages


class Decision(BaseModel):
    """What the bot does with one question: answer from a passage, or escalate with a reason."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    question: str
    answer: Answer | None
    reason: Reason | None
    candidates: tuple[Candidate, ...]
    """Judged candidates by probability (best first), then the unjudged in retrieval order."""
    threshold: float
    latency_ms: float = 0.0
    retrieval: RetrievalTrace | None = None
    """The question's search terms and their passage counts (None from the overlap retriever)."""

    @property
    def escalated(self) -> bool:
        return self.answer is None

    @property
    def top_probability(self) -> float | None:
        """The best judged probability, shown in the queue next to the reason."""
        judged = [c.probability for c in self.candidates if c.probability is not None]
        return max(judged) if judged else None

    def to_json(self) -> dict[str, Any]:
        """The `helpdesk ask --json` shape."""
        return {
            "question": self.question,
            "answer": None
            if self.answer is None
            else {"id": self.answer.id, "text": self.answer.text,
                  "probability": self.answer.probability},
            "reason": None if self.reason is None else self.reason.value,
            "candidates": [
                {"id": c.id, "bm25": c.bm25, "probability": c.probability, "error": c.error}
                for c in self.candidates
            ],
        }  # fmt: skip
