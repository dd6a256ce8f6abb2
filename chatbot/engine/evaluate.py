"""Evaluate the loop on a labelled data file shaped like the cookbook's `rerank_data.json`.

Besides the cookbook's per-question report, retrieval alone is measured for each step from exact
words to what the bot uses (stemming, then tags, then synonyms): recall@k (is a correct passage
among the k retrieved?) and MRR (the mean of 1 / rank of the first correct passage, 0 when none
is retrieved). A threshold sweep shows what each answer threshold from 0.5 to 0.95 would do.

Several questions may be judged at once (`concurrency`), through the one judge and its one Valen
client, whose in-flight limit caps the requests of all of them; the report is the one judging
them one at a time gives, in the file's order.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from chatbot.engine.engine import Engine
from chatbot.engine.models import Decision
from chatbot.errors import HelpdeskError
from chatbot.knowledge_base.interface import KnowledgeBaseStore
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.storage import (
    check_unique,
    describe_validation_error,
    parse_passage,
    read_json,
)
from chatbot.knowledge_base.synonyms import SynonymGroup, parse_synonyms
from chatbot.retrieval.retrievers import RetrieverName, SynonymGroups, make_retriever
from chatbot.valen.errors import ValenError
from chatbot.valen.judge import PassageJudge
from chatbot.valen.protocol import PREDICATE

T = TypeVar("T")


class Watch(Protocol):
    """Told of each question as it is judged, by its 1-based number in the data file: with
    several at once, a judge cannot tell from its calls which question they are for."""

    def start(self, number: int, judge: PassageJudge) -> PassageJudge:
        """Question `number` starts: the judge it is judged with (`judge`, or one around it)."""
        ...

    def settled(self, number: int) -> None:
        """Question `number` has been judged, with every predicate wording."""
        ...


class LabelledQuery(BaseModel):
    """A question and the ids of the passages that answer it."""

    model_config = ConfigDict(frozen=True)

    text: str
    relevant: tuple[str, ...]


class DataSet(BaseModel):
    """Passages, synonyms and labelled questions to evaluate on."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    passages: tuple[Passage, ...]
    synonyms: tuple[SynonymGroup, ...]
    queries: tuple[LabelledQuery, ...]


def load_data(path: Path, *, knowledge_base: KnowledgeBaseStore | None = None) -> DataSet:
    """A data file's passages (or a knowledge base's, a folder or PostgreSQL, with its
    synonyms), its optional `synonyms` (word to synonyms, as in `synonyms.toml`) and its labelled
    questions."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise HelpdeskError(f"{path}: expected a JSON object with 'passages' and 'queries'")
    synonyms: tuple[SynonymGroup, ...] = ()
    raw_synonyms = data.get("synonyms", {})
    if not isinstance(raw_synonyms, dict):
        raise HelpdeskError(f"{path}: 'synonyms' must map each word to its synonyms")
    synonyms = parse_synonyms(raw_synonyms, where=f"{path}: synonyms")
    if knowledge_base is not None:
        passages = knowledge_base.passages()
        if not passages:  # Else the data file was blamed: "relevant id ... is not a passage".
            raise HelpdeskError(
                f"{knowledge_base.location}: no passages there to evaluate the questions against "
                "(a knowledge-base folder holds a NAME.json file for each)"
            )
        synonyms = (*knowledge_base.synonyms(), *synonyms)
    else:
        raw = data.get("passages")
        if not isinstance(raw, list) or not raw:
            raise HelpdeskError(
                f"{path}: no passages: add a 'passages' list, or evaluate the questions "
                "against a knowledge base with --passages DIR"
            )
        passages = [parse_passage(p, where=f"{path}: passages[{i}]") for i, p in enumerate(raw)]
        check_unique(passages, where=str(path))
    queries = load_queries(path, {p.id for p in passages}, data=data)
    return DataSet(passages=tuple(passages), synonyms=synonyms, queries=tuple(queries))


QUERY_SHAPE = 'expected an object such as {"text": "Can I get a refund?", "relevant": ["refunds"]}'
"""What a labelled question looks like, for a `queries` item that is not one."""


def load_queries(path: Path, passage_ids: set[str], *, data: Any = None) -> list[LabelledQuery]:
    if data is None:
        data = read_json(path)
    raw = data.get("queries") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        raise HelpdeskError(f"{path}: expected a 'queries' list")
    queries = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            # Pydantic's "a valid dictionary or instance of LabelledQuery" named a class.
            raise HelpdeskError(f"{path}: queries[{index}]: {QUERY_SHAPE}")
        try:
            query = LabelledQuery.model_validate(item)
        except ValidationError as error:
            problem = describe_validation_error(error)
            if error.errors()[0]["type"] == "tuple_type":  # "a valid tuple", no JSON word.
                problem = 'relevant: expected a list of passage ids, such as ["refunds"]'
            raise HelpdeskError(f"{path}: queries[{index}]: {problem}") from None
        if not query.text.strip():
            raise HelpdeskError(f"{path}: queries[{index}]: question is empty")
        for relevant in query.relevant:
            if relevant not in passage_ids:
                raise HelpdeskError(
                    f"{path}: queries[{index}]: relevant id {relevant!r} is not a passage"
                )
        queries.append(query)
    return queries


def _query_report(query: LabelledQuery, decision: Decision, order: list[str]) -> dict[str, Any]:
    judged = [c for c in decision.candidates if c.probability is not None]
    return {
        "relevant": list(query.relevant),
        "query": query.text,
        "keyword_order": order,
        "reranked": [{"id": c.id, "answers": c.probability} for c in decision.candidates],
        "keyword_top_correct": bool(order) and order[0] in query.relevant,
        "reranked_top_correct": bool(judged) and judged[0].id in query.relevant,
        "answer_with": decision.answer.id if decision.answer else None,
        "reason": decision.reason.value if decision.reason else None,
    }


# Each step adds one thing to the one before, from the exact words to what the bot uses.
RETRIEVAL_STEPS: tuple[tuple[str, RetrieverName, dict[str, bool]], ...] = (
    ("overlap (the cookbook's)", "overlap", {}),
    ("bm25, exact words", "bm25", {"stem": False, "tags": False, "synonyms": False}),
    ("+ stemming", "bm25", {"stem": True, "tags": False, "synonyms": False}),
    ("+ tags", "bm25", {"stem": True, "tags": True, "synonyms": False}),
    ("+ synonyms", "bm25", {"stem": True, "tags": True, "synonyms": True}),
)
SWEEP_THRESHOLDS = tuple(round(0.5 + 0.05 * step, 2) for step in range(10))


def retrieval_table(data: DataSet, k: int) -> list[dict[str, Any]]:
    """Recall@k and MRR of each retrieval step on the data set (no Valen involved)."""
    rows = []
    for label, name, options in RETRIEVAL_STEPS:
        synonyms: SynonymGroups = data.synonyms if options.get("synonyms") else ()
        retriever = make_retriever(
            name,
            data.passages,
            stem=options.get("stem", True),
            tags=options.get("tags", True),
            synonyms=synonyms,
        )
        reciprocal: list[float] = []
        missed: list[str] = []
        for query in data.queries:
            order = [r.passage.id for r in retriever.retrieve(query.text, k)]
            rank = next((i for i, pid in enumerate(order, 1) if pid in query.relevant), None)
            reciprocal.append(1 / rank if rank else 0.0)
            if rank is None:
                missed.append(query.text)
        count = len(data.queries)
        if options.get("synonyms") and not data.synonyms:
            label += " (none given)"
        rows.append({
            "retriever": label,
            "hits": count - len(missed),
            "questions": count,
            "recall_at_k": (count - len(missed)) / count if count else 0.0,
            "mrr": fmean(reciprocal) if reciprocal else 0.0,
            "missed": missed,
        })  # fmt: skip
    return rows


def threshold_sweep(
    decisions: Sequence[tuple[Decision, LabelledQuery]], target_precision: float
) -> dict[str, Any]:
    """For each threshold from 0.5 to 0.95: questions answered, answers from a correct passage,
    escalations; and the lowest threshold whose answers reach `target_precision` (1.0: all
    correct), counting only thresholds that answer something."""
    rows = []
    lowest: float | None = None
    for threshold in SWEEP_THRESHOLDS:
        answered = correct = 0
        for decision, query in decisions:
            top = next((c for c in decision.candidates if c.probability is not None), None)
            if top is not None and top.probability is not None and top.probability >= threshold:
                answered += 1
                correct += top.id in query.relevant
        precision = correct / answered if answered else None
        rows.append({
            "threshold": threshold,
            "answered": answered,
            "correct": correct,
            "escalated": len(decisions) - answered,
            "precision": precision,
        })  # fmt: skip
        if lowest is None and precision is not None and precision >= target_precision - 1e-12:
            lowest = threshold
    return {"target_precision": target_precision, "rows": rows, "lowest": lowest}


@dataclass
class _Judged:
    """One question's part of the report, before it is added up in the file's order."""

    query: LabelledQuery
    decision: Decision
    order: list[str]
    """The retrieved passages' ids, in the retriever's order."""
    unjudged: list[str] = field(default_factory=list)
    """The kind of each judgment not made, in the order they were asked."""
    asked: int = 0
    wording: dict[str, tuple[list[float], list[float]]] = field(default_factory=dict)
    """Per predicate wording: the probabilities of relevant passages and of the others."""


async def in_order(
    count: int,
    run: Callable[[int], Coroutine[Any, Any, T]],
    *,
    concurrency: int = 1,
    settled: Callable[[int], None] | None = None,
) -> list[T]:
    """`run(1)` ... `run(count)`, up to `concurrency` at once, their results in that order.

    The first runs alone: what would fail every one (a rejected key) then costs one's requests.
    When one raises, none is started after it and those after it are cancelled, while those
    before it finish; the first of the failed ones in that order is raised, as running them one
    at a time would have raised it. `settled(n)` is called as each one finishes.
    """
    results: dict[int, T] = {}
    failures: dict[int, BaseException] = {}
    running: dict[asyncio.Task[T], int] = {}
    following = 1
    try:
        while True:
            width = concurrency if results else 1
            while following <= count and not failures and len(running) < width:
                running[asyncio.create_task(run(following))] = following
                following += 1
            if not running:
                break
            done, _ = await asyncio.wait(set(running), return_when=asyncio.FIRST_COMPLETED)
            for task in sorted(done, key=running.__getitem__):
                number = running.pop(task)
                if task.cancelled():
                    continue  # Cancelled here, after a failure before it.
                if (error := task.exception()) is not None:
                    failures[number] = error
                    continue
                results[number] = task.result()
                if settled is not None:
                    settled(number)
            if failures:
                first = min(failures)
                for task, number in running.items():
                    if number > first:
                        task.cancel()
    finally:
        # Interrupted (Ctrl+C cancels the run) or failed: nothing is left running behind it.
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
    if failures:
        raise failures[min(failures)]
    return [results[number] for number in range(1, count + 1)]


async def evaluate(
    data_path: Path,
    *,
    judge: PassageJudge,
    retriever: RetrieverName = "bm25",
    k: int = 5,
    threshold: float = 0.7,
    predicates: Sequence[str] = (PREDICATE,),
    knowledge_base: KnowledgeBaseStore | None = None,
    sweep: bool = False,
    target_precision: float = 1.0,
    concurrency: int = 1,
    watch: Watch | None = None,
) -> dict[str, Any]:
    """Run every labelled query through the loop on the file's own passages (or those of
    `knowledge_base`), up to `concurrency` questions at once (see `in_order`), sharing `judge`.

    The first predicate drives the decision; with several, every wording is also asked about every
    retrieved passage, and the report compares how well each separates relevant passages from the
    rest (the way the cookbook chose its wording).
    """
    data = load_data(data_path, knowledge_base=knowledge_base)
    queries = data.queries
    predicates = list(predicates) or [PREDICATE]
    retrieval = make_retriever(retriever, data.passages, synonyms=data.synonyms)

    async def judged(number: int) -> _Judged:
        query = queries[number - 1]
        own = judge if watch is None else watch.start(number, judge)
        engine = Engine(
            retriever=retrieval, judge=own, threshold=threshold, k=k, predicate=predicates[0]
        )
        decision = await engine.answer(query.text)
        # The decision ranks by probability; the keyword order is the retriever's own.
        retrieved = engine.retrieve(query.text)
        result = _Judged(query, decision, [r.passage.id for r in retrieved])
        result.asked += len(decision.candidates)
        result.unjudged += [
            c.error_kind or ValenError.kind for c in decision.candidates if c.probability is None
        ]
        if len(predicates) > 1:
            # The first wording was just judged by the engine; only the others cost requests.
            by_id = {c.id: c.probability for c in decision.candidates}
            probabilities: dict[str, list[float | None]] = {
                predicates[0]: [by_id.get(r.passage.id) for r in retrieved]
            }
            for instructions in predicates[1:]:
                outcomes = await own.judge(
                    query.text, [r.passage.text for r in retrieved], instructions=instructions
                )
                result.asked += len(outcomes)
                result.unjudged += [o.kind for o in outcomes if isinstance(o, ValenError)]
                probabilities[instructions] = [
                    o if isinstance(o, float) else None for o in outcomes
                ]
            for instructions, values in probabilities.items():
                relevant, other = result.wording.setdefault(instructions, ([], []))
                for r, value in zip(retrieved, values, strict=True):
                    if value is not None:
                        (relevant if r.passage.id in query.relevant else other).append(value)
        return result

    settled = None if watch is None else watch.settled
    every = await in_order(len(queries), judged, concurrency=concurrency, settled=settled)
    # Added up in the file's order, as judging one question at a time would: the same report.
    results = []
    decisions: list[tuple[Decision, LabelledQuery]] = []
    recall_hits = 0
    wording: dict[str, tuple[list[float], list[float]]] = {p: ([], []) for p in predicates}
    # Every judgment asked for, and why those not made were not: with a wrong key every one
    # failed, and the report read as a data set no threshold suits.
    asked = 0
    not_judged: Counter[str] = Counter()
    for one in every:
        decisions.append((one.decision, one.query))
        asked += one.asked
        not_judged.update(one.unjudged)
        recall_hits += any(pid in one.query.relevant for pid in one.order)
        results.append(_query_report(one.query, one.decision, one.order))
        for instructions, (relevant, other) in one.wording.items():
            wording[instructions][0].extend(relevant)
            wording[instructions][1].extend(other)
    report: dict[str, Any] = {
        "keyword_top1": sum(r["keyword_top_correct"] for r in results),
        "reranked_top1": sum(r["reranked_top_correct"] for r in results),
        "queries": results,
        "recall_at_k": recall_hits,
        "answered": sum(r["answer_with"] is not None for r in results),
        "escalated": sum(r["answer_with"] is None for r in results),
        "retriever": retriever,
        "k": k,
        "threshold": threshold,
        "passages": len(data.passages),
        "retrieval": retrieval_table(data, k),
        "judgments": {
            "asked": asked,
            "judged": asked - sum(not_judged.values()),
            "not_judged": dict(not_judged.most_common()),
        },
    }
    if len(predicates) > 1:
        report["predicates"] = [_wording_report(p, *wording[p]) for p in predicates]
    if sweep:
        report["sweep"] = threshold_sweep(decisions, target_precision)
    return report


def _wording_report(instructions: str, relevant: list[float], other: list[float]) -> dict[str, Any]:
    relevant_mean = fmean(relevant) if relevant else None
    other_mean = fmean(other) if other else None
    gap = None
    if relevant_mean is not None and other_mean is not None:
        gap = relevant_mean - other_mean
    return {
        "predicate": instructions,
        "relevant_mean": relevant_mean,
        "non_relevant_mean": other_mean,
        "gap": gap,
        "judged": len(relevant) + len(other),
    }
