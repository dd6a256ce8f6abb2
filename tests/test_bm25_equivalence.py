"""The postings index answers exactly what rank-bm25's BM25Okapi would: same scores bit for bit,
same ranking, on random corpora with ties, very common terms (idf floored to epsilon times the
average), repeated and unknown query terms, empty documents, and after incremental edits."""

from __future__ import annotations

import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from chatbot.knowledge_base.models import Passage
from chatbot.retrieval.bm25 import BM25Index
from chatbot.retrieval.retrievers import BM25Retriever

Corpus = list[list[str]]


def random_corpus(rng: random.Random, *, common: bool = True) -> Corpus:
    """Small documents over a small vocabulary, so terms repeat, scores tie and some terms occur
    in most documents; a few documents are empty."""
    vocabulary = [f"w{i}" for i in range(rng.randint(1, 25))]
    documents: Corpus = []
    for _ in range(rng.randint(1, 40)):
        length = rng.choice([0, *range(1, 12)])
        # Skewed draws put the first words in most documents (negative raw idf, floored).
        words = [
            vocabulary[min(int(rng.expovariate(0.4)), len(vocabulary) - 1)] for _ in range(length)
        ]
        if common and rng.random() < 0.5:
            words.append("the")
        documents.append(words)
    return documents


def random_query(rng: random.Random, corpus: Corpus) -> list[str]:
    known = sorted({t for doc in corpus for t in doc}) or ["w0"]
    query = [rng.choice(known) for _ in range(rng.randint(0, 5))]
    if rng.random() < 0.3:
        query.append("never-seen")
    if query and rng.random() < 0.3:
        query.append(query[0])  # BM25Okapi counts a repeated query term once per occurrence.
    rng.shuffle(query)
    return query


def okapi_top(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """BM25Okapi's ranking: positive scores, best first, ties by document order."""
    positive = np.flatnonzero(scores > 0)
    order = np.lexsort((positive, -scores[positive]))[:k]
    return [(int(positive[i]), float(scores[positive[i]])) for i in order]


def assert_same(index: BM25Index, okapi: BM25Okapi, query: list[str]) -> None:
    expected = okapi.get_scores(query)
    actual = index.scores(query)
    assert actual.tobytes() == expected.tobytes(), query  # Bit for bit, not approximately.
    for k in (1, 3, 5, len(expected)):
        assert [(h.index, h.score) for h in index.top(query, k)] == okapi_top(expected, k)


def corpora(count: int, seed: int) -> list[tuple[random.Random, Corpus]]:
    rng = random.Random(seed)
    found: list[tuple[random.Random, Corpus]] = []
    while len(found) < count:
        corpus = random_corpus(rng)
        if any(corpus):  # BM25Okapi divides by the total length.
            found.append((rng, corpus))
    return found


@pytest.mark.parametrize("seed", range(6))
def test_scores_and_ranking_equal_bm25okapi(seed: int) -> None:
    for rng, corpus in corpora(40, seed):
        index, okapi = BM25Index(corpus), BM25Okapi(corpus)
        for _ in range(8):
            assert_same(index, okapi, random_query(rng, corpus))


def test_very_common_terms_get_the_floored_idf() -> None:
    corpus = [["bike", "dock"], ["bike", "fee"], ["bike", "refund", "refund"], ["bike"], []]
    okapi = BM25Okapi(corpus)
    assert okapi.idf["bike"] == okapi.epsilon * okapi.average_idf  # In 4 of 5: floored.
    index = BM25Index(corpus)
    for query in (["bike"], ["bike", "bike"], ["refund", "bike"], ["dock", "fee", "bike"]):
        assert_same(index, okapi, query)


def test_ties_are_broken_by_document_order() -> None:
    corpus = [["a", "b"], ["a", "b"], ["c"], ["a", "b"], ["b", "a"], ["d"], ["e"], ["f"], ["g"]]
    index = BM25Index(corpus)
    assert [h.index for h in index.top(["a"], 3)] == [0, 1, 3]  # Four equal scores.
    assert_same(index, BM25Okapi(corpus), ["a", "b"])


def test_a_large_corpus_with_a_sampled_cutoff_still_ranks_exactly() -> None:
    # Big enough for `top` to prune with a sampled lower bound; many equal scores.
    rng = random.Random(7)
    words = [f"t{i}" for i in range(300)]
    corpus = [
        [words[min(int(rng.paretovariate(1.0)) - 1, 299)] for _ in range(rng.randint(3, 12))]
        for _ in range(3000)
    ]
    index, okapi = BM25Index(corpus), BM25Okapi(corpus)
    for _ in range(15):
        assert_same(index, okapi, random_query(rng, corpus))


def test_nothing_matches_in_an_empty_or_wordless_corpus() -> None:
    assert BM25Index([]).top(["a"], 5) == []
    assert BM25Index([[], []]).top(["a"], 5) == []
    assert BM25Index([["a"]]).top(["a"], 0) == []


@pytest.mark.parametrize("seed", range(4))
def test_incremental_edits_equal_a_fresh_build(seed: int) -> None:
    for rng, corpus in corpora(25, seed + 100):
        index = BM25Index(corpus)
        documents = [list(doc) for doc in corpus]
        for _ in range(4):
            edit = rng.choice(["replace", "append", "remove", "shuffle"])
            new_words = random_corpus(rng)[0] + ["novel", f"n{rng.randint(0, 3)}"]
            if edit == "replace":
                at = rng.randrange(len(documents))
                index, documents[at] = index.replace(at, new_words), new_words
            elif edit == "append":
                index = index.append(new_words)
                documents.append(new_words)
            elif edit == "remove" and len(documents) > 1:
                at = rng.randrange(len(documents))
                index = index.remove(at)
                del documents[at]
            else:
                # Reorder kept documents and replace one: the general `derive`.
                order = list(range(len(documents)))
                rng.shuffle(order)
                sources: list[int | list[str]] = list(order)
                sources[0] = new_words
                index = index.derive(sources)
                documents = [new_words, *(documents[i] for i in order[1:])]
            if not any(documents):
                continue
            fresh, okapi = BM25Index(documents), BM25Okapi(documents)
            for _ in range(5):
                query = random_query(rng, documents)
                assert_same(index, okapi, query)
                assert index.scores(query).tobytes() == fresh.scores(query).tobytes()


def test_derive_leaves_the_original_index_as_it_was() -> None:
    corpus = [["refund", "card"], ["dock", "full"], ["helmet"]]
    index = BM25Index(corpus)
    before = index.scores(["refund", "dock", "brand-new"]).tobytes()
    index.replace(0, ["brand-new", "words"])
    assert index.scores(["refund", "dock", "brand-new"]).tobytes() == before


def passage(pid: str, text: str) -> Passage:
    return Passage(id=pid, title=pid.replace("-", " "), text=text)


def test_retriever_reuses_the_old_index_and_equals_a_fresh_one() -> None:
    rng = random.Random(3)
    words = ["refund", "card", "dock", "station", "battery", "helmet", "late", "fee", "ride"]
    passages = [
        passage(f"p{i:03}", " ".join(rng.choices(words, k=rng.randint(3, 15)))) for i in range(60)
    ]
    retriever = BM25Retriever(passages)
    edited = list(passages)
    edited[10] = passage("p010", "the dock was full so the refund came late")
    edited.insert(20, passage("p019a", "a new passage about helmets and batteries"))
    del edited[40]
    edited.append(passage("p999", "card refund card refund"))
    incremental = retriever.with_passages(edited)
    fresh = BM25Retriever(edited)
    for question in ("refund for a late ride", "dock full", "helmet battery card", "unknown"):
        assert [(r.passage.id, r.score) for r in incremental.retrieve(question, 10)] == [
            (r.passage.id, r.score) for r in fresh.retrieve(question, 10)
        ]


def test_engine_with_passages_retrieves_like_a_fresh_engine() -> None:
    from chatbot.engine.engine import Engine
    from chatbot.valen.judge import PassageJudge

    passages = [passage(f"p{i}", f"refund card dock station {'late ' * i}fee") for i in range(12)]
    engine = Engine(retriever=BM25Retriever(passages), judge=PassageJudge(replay="on"))
    edited = [*passages[:3], passage("p3", "helmet rules at the dock"), *passages[4:]]
    updated = engine.with_passages(edited)
    assert updated.retriever.passages == tuple(edited)
    assert engine.retriever.passages == tuple(passages)  # The old engine is untouched.
    for question in ("helmet at the dock", "late fee refund", "station"):
        assert [(r.passage.id, r.score) for r in updated.retrieve(question)] == [
            (r.passage.id, r.score) for r in BM25Retriever(edited).retrieve(question, updated.k)
        ]
