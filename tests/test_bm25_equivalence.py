"""The postings index answers exactly what rank-bm25's BM25Okapi would: same scores bit for bit,
same ranking, on random corpora with ties, very common terms (idf floored to epsilon times the
average), repeated and unknown query terms, empty documents, and after incremental edits."""

from __future__ import annotations

import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from chatbot.knowledge_base.models import Passage
from chatbot.retrieval import bm25
from chatbot.retrieval.bm25 import BM25Index
from chatbot.retrieval.retrievers import BM25Retriever

Corpus = list[list[str]]


@pytest.fixture(autouse=True, params=["stored weights", "pruned"])
def weights(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test twice: as small corpora are answered (every posting's weight kept, every
    document scored) and as large ones are (weights recomputed, MaxScore-style pruning)."""
    if request.param == "pruned":
        monkeypatch.setattr(bm25, "STORED_WEIGHTS", 0)


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


def selective_top(
    scores: np.ndarray, corpus: Corpus, query: list[str], k: int
) -> list[tuple[int, float]]:
    """BM25Okapi's ranking restricted to documents with a query term in under half of them."""
    size = len(corpus)
    rare = {t for t in query if 2 * sum(t in doc for doc in corpus) < size}
    masked = np.where([bool(rare & set(doc)) for doc in corpus], scores, 0.0)
    return okapi_top(masked, k)


@pytest.mark.parametrize("seed", range(4))
def test_selective_ranking_equals_bm25okapi_restricted_to_rarer_terms(seed: int) -> None:
    for rng, corpus in corpora(40, seed + 50):
        index, okapi = BM25Index(corpus), BM25Okapi(corpus)
        for _ in range(8):
            query = random_query(rng, corpus)
            expected = okapi.get_scores(query)
            for k in (1, 3, 5, len(corpus)):
                assert [(h.index, h.score) for h in index.top(query, k, selective=True)] == (
                    selective_top(expected, corpus, query, k)
                ), query


def test_a_word_in_half_the_documents_never_retrieves_alone() -> None:
    corpus = [["bike", "dock"], ["bike", "fee"], ["helmet"], ["refund"]]
    index = BM25Index(corpus)
    assert index.idf("bike") == 0.0  # In exactly half: BM25Okapi's idf is log(1) = 0.
    assert index.top(["bike"], 5, selective=True) == []
    assert [h.index for h in index.top(["bike", "fee"], 5, selective=True)] == [1]


STEM_WORDS = (
    "bike bikes biking riding rides ride refunds refunded refund charge charged charges station "
    "stations docks dock late fee fees helmet helmets the a of and 退款 退回 时间 Café cafés "
    "ＲＥＦＵＮＤ e-bike e-bikes"
).split()


def random_texts(rng: random.Random) -> list[str]:
    return [
        " ".join(rng.choice(STEM_WORDS) for _ in range(rng.randint(0, 12)))
        + rng.choice([".", "?", ""])
        for _ in range(rng.randint(1, 30))
    ]


@pytest.mark.parametrize("stem", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_an_index_built_from_text_equals_bm25okapi_over_its_terms(stem: bool, seed: int) -> None:
    # The retriever's path: text through the stemming tokenizer, chunk by chunk, into the index.
    from chatbot.retrieval import bm25
    from chatbot.retrieval.tokenizer import Analyzer

    rng = random.Random(seed)
    for _ in range(15):
        texts = random_texts(rng)
        analyzer = Analyzer(stem=stem)
        documents = [analyzer.tokenize(t) for t in texts]
        if not any(documents):
            continue
        chunk = bm25.CHUNK_DOCUMENTS
        try:
            bm25.CHUNK_DOCUMENTS = rng.choice([1, 3, 1000])  # Several chunks, merged.
            index = BM25Index.from_texts(texts, analyzer)
        finally:
            bm25.CHUNK_DOCUMENTS = chunk
        okapi = BM25Okapi(documents)
        for _ in range(6):
            query = analyzer.tokenize(" ".join(rng.choices(STEM_WORDS, k=rng.randint(1, 4))))
            assert_same(index, okapi, query)


def test_stemmed_terms_equal_bm25okapi_on_the_shipped_knowledge_base() -> None:
    from chatbot.knowledge_base.storage import load_knowledge_base
    from chatbot.retrieval.retrievers import indexed_text
    from chatbot.retrieval.tokenizer import tokenize
    from tests.conftest import SHIPPED_KB

    passages = load_knowledge_base(SHIPPED_KB)
    retriever = BM25Retriever(passages)
    okapi = BM25Okapi([tokenize(indexed_text(p)) for p in passages])
    for question in ("Bicycles and helmets for the elderly?", "refunded charges", "e-bikes docks"):
        assert_same(retriever.index, okapi, tokenize(question))


def test_synonym_expansion_is_bm25okapi_over_the_expanded_query() -> None:
    passages = [
        passage("seniors", "Seniors ride at half price on weekdays."),
        passage("students", "The student pass costs 9 euros a month."),
        passage("helmet", "Helmets are not included with standard bikes."),
        passage("lost", "Lost items are kept for 30 days."),
    ]
    groups = [["senior", "pensioner", "retiree", "elderly"], ["helmet", "head protection"]]
    retriever = BM25Retriever(passages, synonyms=groups)
    query = retriever.query_terms("Do pensioners pay less? And the pensioner's helmet?")
    # The question's own terms, then each synonym once; "helmet" is not added twice.
    assert query == ["pension", "pay", "less", "pension", "helmet", "senior", "retire", "elder",
                     "head", "protect"]  # fmt: skip
    okapi = BM25Okapi([retriever.analyzer.tokenize(indexed(p)) for p in passages])
    assert_same(retriever.index, okapi, query)
    assert retriever.retrieve("Do pensioners pay less?", 5)[0].passage.id == "seniors"
    assert BM25Retriever(passages).retrieve("Do pensioners pay less?", 5) == []


def indexed(p: Passage) -> str:
    from chatbot.retrieval.retrievers import indexed_text

    return indexed_text(p)
