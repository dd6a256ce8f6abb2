"""Retrievers: from a question to the top-k passages worth asking Valen about."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from chatbot.knowledge_base.models import Passage
from chatbot.retrieval.bm25 import BM25Index
from chatbot.retrieval.tokenizer import Analyzer, analyzer

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

    def explain(self, question: str) -> QueryTrace | None:
        """How the question's words met the index, if the retriever can tell."""
        ...


def indexed_text(passage: Passage, *, tags: bool = True) -> str:
    """What BM25 indexes of a passage: title and tags say what it is about, so they count too."""
    labels = " ".join(passage.tags) if tags else ""
    return f"{passage.title}\n{labels}\n{passage.text}"


SynonymGroups = Sequence[Sequence[str]]
"""Groups of words (or phrases) an editor declared interchangeable, e.g. senior, pensioner."""


@dataclass(frozen=True, slots=True)
class TermMatch:
    """One search term of a question: the customer's word, the term it became, how many passages
    contain it and BM25's idf of it (zero or less: it cannot lift any passage)."""

    word: str
    term: str
    passages: int
    idf: float
    synonym: bool = False
    """Added by a synonym group rather than written by the customer."""


@dataclass(frozen=True, slots=True)
class QueryTrace:
    """How a question's words met the index: enough to say why nothing was retrieved."""

    passages: int
    terms: tuple[TermMatch, ...]


class SynonymExpander:
    """Expands a query's terms with the other members of each synonym group it mentions.

    A member matches when all of its terms are in the query (one term for a single word). Each
    other member's terms are appended once, after the question's own terms, unless the question
    already has them: a synonym counts as one more query term, never twice, and never doubles a
    word the customer wrote. Scoring stays exactly BM25Okapi over the expanded term list.
    """

    def __init__(self, groups: SynonymGroups, analyzer: Analyzer) -> None:
        self.groups = tuple(tuple(group) for group in groups)
        self._members: list[list[tuple[str, ...]]] = []
        self._by_term: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
        for number, group in enumerate(self.groups):
            members = [terms for word in group if (terms := tuple(analyzer.tokenize(word)))]
            self._members.append(members)
            for terms in members:
                self._by_term.setdefault(terms[0], []).append((number, terms))

    def expand(self, terms: Sequence[str]) -> list[str]:
        """The synonym terms to add to a query of `terms`, in a stable order."""
        present = set(terms)
        matched: dict[int, None] = {}
        for term in dict.fromkeys(terms):
            for number, member in self._by_term.get(term, ()):
                if present.issuperset(member):
                    matched.setdefault(number)
        added: dict[str, None] = {}
        for number in matched:
            for member in self._members[number]:
                for term in member:
                    if term not in present:
                        added.setdefault(term)
        return list(added)


def unmatched_synonyms(
    passages: Sequence[Passage], groups: SynonymGroups, *, stem: bool = True, tags: bool = True
) -> list[tuple[str, ...]]:
    """The synonym groups none of whose words (or phrases, every word of one) any passage has,
    as BM25 indexes them: such a group adds query terms that can never find anything."""
    words = analyzer(stem=stem)
    vocabulary: set[str] = set()
    for passage in passages:
        vocabulary.update(words.tokenize(indexed_text(passage, tags=tags)))
    unmatched = []
    for group in groups:
        members = [terms for word in group if (terms := words.tokenize(word))]
        if not any(vocabulary.issuperset(terms) for terms in members):
            unmatched.append(tuple(group))
    return unmatched


class BM25Retriever:
    """BM25 (rank-bm25's Okapi scoring) over the project tokenizer.

    A passage is retrieved only when it shares with the question a term found in fewer than half
    of the passages: each retrieved passage costs a Valen request, and one that shares only a word
    most passages have (BM25Okapi gives those an idf of zero or a small floor) rarely answers.
    Such words still add to the scores of passages retrieved for other words.

    `stem` (Snowball English stems), `tags` (index passage tags with title and text) and
    `synonyms` (query-time expansion) can be turned off to measure what each one brings.
    """

    def __init__(
        self,
        passages: Sequence[Passage],
        *,
        stem: bool = True,
        tags: bool = True,
        synonyms: SynonymGroups = (),
        index: BM25Index | None = None,
    ) -> None:
        self.passages = tuple(passages)
        self.stem = stem
        self.tags = tags
        self.analyzer = analyzer(stem=stem)
        self.synonyms = SynonymExpander(synonyms, self.analyzer)
        self.index = index or BM25Index.from_texts(
            [indexed_text(p, tags=tags) for p in self.passages], self.analyzer
        )

    def with_passages(self, passages: Sequence[Passage]) -> BM25Retriever:
        """A retriever over `passages` that reuses this index for every passage whose id, title,
        tags and text are unchanged, so saving one edit tokenizes and counts one passage, not all.
        Retrieves exactly what `BM25Retriever(passages)` would."""
        previous = {p.id: i for i, p in enumerate(self.passages)}
        reused: set[int] = set()
        sources: list[int | list[str]] = []
        for passage in passages:
            at = previous.get(passage.id)
            if at is not None and at not in reused:
                if indexed_text(self.passages[at], tags=self.tags) == indexed_text(
                    passage, tags=self.tags
                ):
                    reused.add(at)
                    sources.append(at)
                    continue
            sources.append(self.analyzer.tokenize(indexed_text(passage, tags=self.tags)))
        return BM25Retriever(
            passages,
            stem=self.stem,
            tags=self.tags,
            synonyms=self.synonyms.groups,
            index=self.index.derive(sources),
        )

    def with_synonyms(self, synonyms: SynonymGroups) -> BM25Retriever:
        """The same index with other synonym groups (they only change queries)."""
        return BM25Retriever(
            self.passages, stem=self.stem, tags=self.tags, synonyms=synonyms, index=self.index
        )

    def query_terms(self, question: str) -> list[str]:
        """The BM25 query for `question`: its terms, then the synonyms they bring in."""
        terms = self.analyzer.tokenize(question)
        return [*terms, *self.synonyms.expand(terms)]

    def retrieve(self, question: str, k: int) -> list[Retrieved]:
        return [
            Retrieved(self.passages[hit.index], hit.score)
            for hit in self.index.top(self.query_terms(question), k, selective=True)
        ]

    def explain(self, question: str) -> QueryTrace:
        """Each distinct search term of `question` (synonyms last), its passage count and idf."""
        matches: dict[str, TermMatch] = {}
        for word, terms in self.analyzer.words(question):
            for term in terms:
                if term not in matches:
                    matches[term] = self._match(word, term, synonym=False)
        for term in self.synonyms.expand(list(matches)):
            matches.setdefault(term, self._match(term, term, synonym=True))
        return QueryTrace(passages=len(self.passages), terms=tuple(matches.values()))

    def _match(self, word: str, term: str, *, synonym: bool) -> TermMatch:
        index = self.index
        return TermMatch(
            word=word,
            term=term,
            passages=index.document_frequency(term),
            idf=index.idf(term),
            synonym=synonym,
        )


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

    def explain(self, question: str) -> QueryTrace | None:
        return None


def make_retriever(
    name: RetrieverName,
    passages: Sequence[Passage],
    *,
    stem: bool = True,
    tags: bool = True,
    synonyms: SynonymGroups = (),
) -> Retriever:
    """Build the named retriever over `passages` (the options apply to BM25)."""
    if name == "overlap":
        return OverlapRetriever(passages)
    return BM25Retriever(passages, stem=stem, tags=tags, synonyms=synonyms)
