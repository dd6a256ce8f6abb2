"""Retrievers: from a question to the top-k passages worth asking Valen about."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from chatbot.knowledge_base.models import Passage
from chatbot.retrieval.bm25 import BM25Index
from chatbot.retrieval.tokenizer import tokenize

RetrieverName = Literal["bm25", "overlap"]


@dataclass(frozen=True, slots=True)
class Retrieved:
    """A passage and the retriever's score for it."""

    passage: Passage
    score: float


class Retriever(Protocol):
    """Anything that ranks passages for a question."""

    passages: tuple[Passage, ...]

    def retrieve(self, question: str, k: int) -> list[Retrieved]:
        """The best `k` passages for `question`, best first."""
        ...


class BM25Retriever:
    """BM25 (rank-bm25's Okapi scoring) over the project tokenizer; zero scores never retrieved."""

    def __init__(self, passages: Sequence[Passage]) -> None:
        self.passages = tuple(passages)
        # The title is part of what a passage is about, so it is indexed with the text.
        self.index = BM25Index([tokenize(f"{p.title}\n{p.text}") for p in self.passages])

    def retrieve(self, question: str, k: int) -> list[Retrieved]:
        return [
            Retrieved(self.passages[hit.index], hit.score)
            for hit in self.index.top(tokenize(question), k)
        ]


# The cookbook's keyword stand-in, kept exactly so its recorded table can be reproduced.
OVERLAP_STOP_WORDS = frozenset(
    {"a", "an", "the", "i", "my", "is", "can", "do", "to", "of", "in", "on", "for", "it", "if",
     "and", "or", "what", "how", "you", "your", "with", "be", "are", "at", "after", "from", "will",
     "does", "this"}
)  # fmt: skip


def overlap_words(text: str) -> set[str]:
    """Distinct lowercase ASCII words of `text`, without the cookbook's stop words."""
    return set(re.findall(r"[a-z]+", text.lower())) - OVERLAP_STOP_WORDS


class OverlapRetriever:
    """Ranks by the number of shared words; ties keep knowledge-base order, as in the cookbook."""

    def __init__(self, passages: Sequence[Passage]) -> None:
        self.passages = tuple(passages)
        self._words = [overlap_words(p.text) for p in self.passages]

    def retrieve(self, question: str, k: int) -> list[Retrieved]:
        query = overlap_words(question)
        scored = [
            Retrieved(passage, float(len(query & words)))
            for passage, words in zip(self.passages, self._words, strict=True)
        ]
        # sorted() is stable, so equal counts stay in knowledge-base order like the cookbook's.
        return sorted(scored, key=lambda r: -r.score)[: max(k, 0)]


def make_retriever(name: RetrieverName, passages: Sequence[Passage]) -> Retriever:
    """Build the named retriever over `passages`."""
    if name == "overlap":
        return OverlapRetriever(passages)
    return BM25Retriever(passages)
