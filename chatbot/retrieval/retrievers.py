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


def indexed_text(passage: Passage) -> str:
    """What BM25 indexes of a passage: the title is part of what it is about, so title and text."""
    return f"{passage.title}\n{passage.text}"


class BM25Retriever:
    """BM25 (rank-bm25's Okapi scoring) over the project tokenizer; zero scores never retrieved."""

    def __init__(self, passages: Sequence[Passage], *, index: BM25Index | None = None) -> None:
        self.passages = tuple(passages)
        self.index = index or BM25Index([tokenize(indexed_text(p)) for p in self.passages])

    def with_passages(self, passages: Sequence[Passage]) -> BM25Retriever:
        """A retriever over `passages` that reuses this index for every passage whose id, title
        and text are unchanged, so saving one edit tokenizes and counts one passage, not all.
        Retrieves exactly what `BM25Retriever(passages)` would."""
        previous = {p.id: i for i, p in enumerate(self.passages)}
        reused: set[int] = set()
        sources: list[int | list[str]] = []
        for passage in passages:
            at = previous.get(passage.id)
            if at is not None and at not in reused:
                before = self.passages[at]
                if before.title == passage.title and before.text == passage.text:
                    reused.add(at)
                    sources.append(at)
                    continue
            sources.append(tokenize(indexed_text(passage)))
        return BM25Retriever(passages, index=self.index.derive(sources))

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
