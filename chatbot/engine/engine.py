"""Answer-or-escalate for one question: retrieve, judge each passage, decide."""

from __future__ import annotations

import time
from collections.abc import Sequence

from chatbot.engine.models import Candidate, Decision, QueryTerm, RetrievalTrace
from chatbot.engine.policy import DEFAULT_THRESHOLD, decide
from chatbot.engine.question import MAX_QUESTION_CHARS, check_question
from chatbot.knowledge_base.models import Passage
from chatbot.retrieval.retrievers import BM25Retriever, Retrieved, Retriever, SynonymGroups
from chatbot.valen.errors import ValenError
from chatbot.valen.judge import PassageJudge
from chatbot.valen.protocol import PREDICATE, Outcome

DEFAULT_K = 5

__all__ = ["DEFAULT_K", "MAX_QUESTION_CHARS", "Engine", "candidate", "check_question"]


def candidate(retrieved: Retrieved, outcome: Outcome) -> Candidate:
    """Join a retrieved passage with its judgment."""
    passage = retrieved.passage
    base = {"id": passage.id, "title": passage.title, "text": passage.text,
            "bm25": retrieved.score}  # fmt: skip
    if isinstance(outcome, ValenError):
        return Candidate(**base, error=outcome.describe(), error_kind=outcome.kind)
    return Candidate(**base, probability=outcome)


class Engine:
    """The product's core loop. Immutable once built: a knowledge-base change builds a new one
    (`with_passages`), so a question in flight keeps the index it started with."""

    def __init__(
        self,
        *,
        retriever: Retriever,
        judge: PassageJudge,
        threshold: float = DEFAULT_THRESHOLD,
        k: int = DEFAULT_K,
        predicate: str = PREDICATE,
        locale: str | None = None,
    ) -> None:
        self.retriever = retriever
        self.judge = judge
        self.threshold = threshold
        self.k = k
        self.predicate = predicate
        self.locale = locale
        """The language whose passages alone it searches (see `RetrievalTrace.locale`)."""

    @property
    def passages(self) -> Sequence[Passage]:
        return self.retriever.passages

    def with_passages(self, passages: Sequence[Passage]) -> Engine:
        """The same engine over a new knowledge base (BM25 index built here, off the caller's loop
        if the caller runs this in a thread)."""
        # Reuse the BM25 index for unchanged passages: an editor's save then costs one passage's
        # tokenizing and counting, and retrieval is exactly what a fresh build would give.
        retriever = (
            self.retriever.with_passages(passages)
            if isinstance(self.retriever, BM25Retriever)
            else BM25Retriever(passages)
        )
        return Engine(
            retriever=retriever,
            judge=self.judge,
            threshold=self.threshold,
            k=self.k,
            predicate=self.predicate,
            locale=self.locale,
        )

    def with_synonyms(self, synonyms: SynonymGroups) -> Engine:
        """The same engine with other synonym groups (the index stays: they change queries)."""
        if not isinstance(self.retriever, BM25Retriever):
            return self
        return Engine(
            retriever=self.retriever.with_synonyms(synonyms),
            judge=self.judge,
            threshold=self.threshold,
            k=self.k,
            predicate=self.predicate,
            locale=self.locale,
        )

    def retrieve(self, question: str) -> list[Retrieved]:
        return self.retriever.retrieve(question, self.k)

    async def answer(self, question: str) -> Decision:
        """Retrieve, judge and decide. Valen failures become unjudged candidates, never raise."""
        check_question(question)
        started = time.perf_counter()
        retrieved = self.retrieve(question)
        outcomes = await self.judge.judge(
            question, [r.passage.text for r in retrieved], instructions=self.predicate
        )
        candidates = [candidate(r, o) for r, o in zip(retrieved, outcomes, strict=True)]
        ranked, answer, reason = decide(candidates, self.threshold)
        trace = self.retriever.explain(question)
        return Decision(
            question=question,
            answer=answer,
            reason=reason,
            candidates=ranked,
            threshold=self.threshold,
            latency_ms=(time.perf_counter() - started) * 1000,
            retrieval=None
            if trace is None
            else RetrievalTrace(
                passages=trace.passages,
                terms=tuple(
                    QueryTerm(word=t.word, term=t.term, passages=t.passages, synonym=t.synonym)
                    for t in trace.terms
                ),
                locale=self.locale,
            ),
        )
