"""BM25 and overlap retrieval over passages."""

import numpy as np
from rank_bm25 import BM25Okapi

from chatbot.knowledge_base import Passage
from chatbot.knowledge_base.storage import load_knowledge_base, load_passages_file
from chatbot.notices import why_no_passages
from chatbot.retrieval import BM25Retriever, OverlapRetriever, Retrieved, tokenize
from chatbot.retrieval.bm25 import BM25Index
from tests.conftest import SEED_DATA, SHIPPED_KB


def test_bm25_scores_equal_rank_bm25_on_the_shipped_knowledge_base() -> None:
    passages = load_knowledge_base(SHIPPED_KB)
    docs = [tokenize(f"{p.title}\n{p.text}") for p in passages]
    query = tokenize("I was charged twice for the same ride, can I get my money back?")
    assert np.array_equal(BM25Index(docs).scores(query), BM25Okapi(docs).get_scores(query))


def test_bm25_puts_the_obvious_passage_first() -> None:
    retriever = BM25Retriever(load_knowledge_base(SHIPPED_KB))
    hits = retriever.retrieve("How much is the student pass?", 5)
    assert hits[0].passage.id == "student-pass"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_bm25_never_retrieves_zero_scores() -> None:
    retriever = BM25Retriever(load_knowledge_base(SHIPPED_KB))
    hits = retriever.retrieve("helmets", 10)
    assert [h.passage.id for h in hits] == ["helmet"]
    assert retriever.retrieve("zebra quantum", 5) == []
    assert all(h.score > 0 for h in retriever.retrieve("ride bike app", 10))


def test_bm25_respects_k() -> None:
    retriever = BM25Retriever(load_knowledge_base(SHIPPED_KB))
    assert len(retriever.retrieve("bike ride app station card refund", 3)) == 3
    assert retriever.retrieve("bike", 0) == []


def test_bm25_finds_chinese_passages() -> None:
    passages = [
        Passage(id="refund", text="退款会在三到五个工作日内退回您的银行卡。"),
        Passage(id="helmet", text="标准单车不提供头盔。"),
        Passage(id="battery", text="电动车电池续航约六十公里。"),
    ]
    hits = BM25Retriever(passages).retrieve("退款要多久？", 5)
    assert hits[0].passage.id == "refund"
    assert "helmet" not in [h.passage.id for h in hits]


def test_empty_knowledge_base_retrieves_nothing() -> None:
    assert BM25Retriever([]).retrieve("anything", 5) == []


def test_overlap_reproduces_the_cookbook_keyword_order() -> None:
    passages = load_passages_file(SEED_DATA)
    retriever = OverlapRetriever(passages)
    expected = {
        "I was charged twice for the same ride, can I get my money back?":
            ["damage-report", "card-charged-twice", "late-return", "damage-fee", "station-full"],
        "The bike's brakes were already worn when I took it. Will I have to pay for that?":
            ["damage-fee", "damage-report", "late-return", "helmet", "e-bike-battery"],
        "There were no free docks at the station so I kept riding. Will I pay a late fee?":
            ["late-return", "station-full", "damage-report", "damage-fee", "refund-time"],
    }  # fmt: skip
    for question, order in expected.items():
        assert [r.passage.id for r in retriever.retrieve(question, 5)] == order


def test_overlap_ties_keep_knowledge_base_order() -> None:
    passages = [Passage(id=name, text="bike ride") for name in ("c", "a", "b")]
    assert [r.passage.id for r in OverlapRetriever(passages).retrieve("ride", 3)] == ["c", "a", "b"]


KB = [
    Passage(id="bikes", title="Bicycles", text="Bicycles can be rented by the hour."),
    Passage(id="dogs", title="Pets", text="Dogs ride free in the front basket."),
    Passage(id="seniors", title="Seniors", text="Seniors get 30 percent off every ride."),
    Passage(id="lost", title="Lost items", tags=("lost-and-found",), text="We keep them a month."),
    Passage(id="helmet", title="Helmets", tags=("equipment",), text="Helmets cost 2 euros."),
]


def ids(hits: list[Retrieved]) -> list[str]:
    return [h.passage.id for h in hits]


def test_stemming_finds_other_word_forms_and_can_be_turned_off() -> None:
    stemmed, exact = BM25Retriever(KB), BM25Retriever(KB, stem=False)
    assert ids(stemmed.retrieve("Can I rent a bicycle?", 5))[0] == "bikes"
    assert ids(stemmed.retrieve("Is my dog allowed?", 5)) == ["dogs"]
    assert exact.retrieve("Is my dog allowed?", 5) == []


def test_tags_are_indexed_and_can_be_turned_off() -> None:
    assert ids(BM25Retriever(KB).retrieve("Where is the equipment?", 5)) == ["helmet"]
    assert BM25Retriever(KB, tags=False).retrieve("Where is the equipment?", 5) == []
    assert ids(BM25Retriever(KB).retrieve("lost and found", 5)) == ["lost"]


def test_synonyms_expand_questions_both_ways() -> None:
    groups = [["senior", "pensioner", "retiree"]]
    retriever = BM25Retriever(KB, synonyms=groups)
    assert ids(retriever.retrieve("Discount for pensioners?", 5)) == ["seniors"]
    assert ids(retriever.retrieve("Discount for retirees?", 5)) == ["seniors"]
    assert BM25Retriever(KB).retrieve("Discount for pensioners?", 5) == []
    # A later edit keeps the synonyms; other synonyms reuse the index.
    edited = retriever.with_passages([*KB, Passage(id="new", text="Pensioner cards.")])
    assert edited.synonyms.groups == retriever.synonyms.groups
    assert retriever.with_synonyms([]).index is retriever.index
    assert retriever.with_synonyms([]).retrieve("Discount for pensioners?", 5) == []


def test_a_multi_word_synonym_needs_all_its_words() -> None:
    retriever = BM25Retriever(KB, synonyms=[["helmet", "head protection"]])
    assert ids(retriever.retrieve("Do you have head protection?", 5)) == ["helmet"]
    assert retriever.retrieve("Does the head count?", 5) == []


def test_with_passages_reindexes_a_passage_whose_tags_changed() -> None:
    retriever = BM25Retriever(KB)
    retagged = [p if p.id != "dogs" else p.model_copy(update={"tags": ("equipment",)}) for p in KB]
    incremental = retriever.with_passages(retagged)
    assert ids(incremental.retrieve("equipment", 5)) == ids(
        BM25Retriever(retagged).retrieve("equipment", 5)
    )
    assert set(ids(incremental.retrieve("equipment", 5))) == {"dogs", "helmet"}


def test_explain_says_which_words_matched_how_many_passages() -> None:
    passages = load_knowledge_base(SHIPPED_KB)
    trace = BM25Retriever(passages).explain("Can I bring my dog on the bikes?")
    assert trace is not None and trace.passages == len(passages)
    by_word = {t.word: t for t in trace.terms}
    assert set(by_word) == {"bring", "dog", "bikes"}
    assert by_word["bikes"].term == "bike" and by_word["bikes"].passages * 2 >= len(passages)
    assert by_word["dog"].passages == 0 and by_word["bring"].passages == 0
    assert OverlapRetriever(passages).explain("anything") is None


async def test_the_engine_decision_carries_the_retrieval_trace() -> None:
    from chatbot.engine.engine import Engine
    from chatbot.valen.judge import PassageJudge

    engine = Engine(retriever=BM25Retriever(KB), judge=PassageJudge(replay="on"))
    decision = await engine.answer("Any zebras?")
    assert decision.candidates == () and decision.retrieval is not None
    assert [(t.word, t.term, t.passages) for t in decision.retrieval.terms] == [
        ("zebras", "zebra", 0)
    ]
    riding = await engine.answer("Zebras riding?")
    assert riding.retrieval is not None
    assert [(t.word, t.term, t.passages) for t in riding.retrieval.terms] == [
        ("zebras", "zebra", 0), ("riding", "ride", 2),
    ]  # fmt: skip
    assert why_no_passages(decision) == "No passage retrieved: “zebras” is in no passage."
    # Restored from JSON (as a store would), the trace still explains.
    again = type(decision).model_validate_json(decision.model_dump_json())
    assert why_no_passages(again) == why_no_passages(decision)
