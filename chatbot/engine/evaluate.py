"""Evaluate the loop on a labelled data file shaped like the cookbook's `rerank_data.json`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from chatbot.engine.engine import Engine
from chatbot.engine.models import Decision
from chatbot.errors import HelpdeskError
from chatbot.knowledge_base.storage import (
    describe_validation_error,
    load_passages_file,
    read_json,
)
from chatbot.retrieval.retrievers import RetrieverName, make_retriever
from chatbot.valen.judge import PassageJudge
from chatbot.valen.protocol import PREDICATE


class LabelledQuery(BaseModel):
    """A question and the ids of the passages that answer it."""

    model_config = ConfigDict(frozen=True)

    text: str
    relevant: tuple[str, ...]


def load_queries(path: Path, passage_ids: set[str]) -> list[LabelledQuery]:
    data = read_json(path)
    raw = data.get("queries") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        raise HelpdeskError(f"{path}: expected a 'queries' list")
    queries = []
    for index, item in enumerate(raw):
        try:
            query = LabelledQuery.model_validate(item)
        except ValidationError as error:
            raise HelpdeskError(
                f"{path}: queries[{index}]: {describe_validation_error(error)}"
            ) from None
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
        "query": query.text,
        "keyword_order": order,
        "reranked": [{"id": c.id, "answers": c.probability} for c in decision.candidates],
        "keyword_top_correct": bool(order) and order[0] in query.relevant,
        "reranked_top_correct": bool(judged) and judged[0].id in query.relevant,
        "answer_with": decision.answer.id if decision.answer else None,
        "reason": decision.reason.value if decision.reason else None,
    }


async def evaluate(
    data_path: Path,
    *,
    judge: PassageJudge,
    retriever: RetrieverName = "bm25",
    k: int = 5,
    threshold: float = 0.7,
    predicates: Sequence[str] = (PREDICATE,),
) -> dict[str, Any]:
    """Run every labelled query through the loop on the file's own passages.

    The first predicate drives the decision; with several, every wording is also asked about every
    retrieved passage, and the report compares how well each separates relevant passages from the
    rest (the way the cookbook chose its wording).
    """
    passages = load_passages_file(data_path)
    queries = load_queries(data_path, {p.id for p in passages})
    predicates = list(predicates) or [PREDICATE]
    engine = Engine(
        retriever=make_retriever(retriever, passages),
        judge=judge,
        threshold=threshold,
        k=k,
        predicate=predicates[0],
    )
    results = []
    recall_hits = 0
    wording: dict[str, tuple[list[float], list[float]]] = {p: ([], []) for p in predicates}
    for query in queries:
        decision = await engine.answer(query.text)
        # The decision ranks by probability; the keyword order is the retriever's own.
        retrieved = engine.retrieve(query.text)
        order = [r.passage.id for r in retrieved]
        recall_hits += any(pid in query.relevant for pid in order)
        results.append(_query_report(query, decision, order))
        if len(predicates) > 1:
            # The first wording was just judged by the engine; only the others cost requests.
            judged = {c.id: c.probability for c in decision.candidates}
            probabilities: dict[str, list[float | None]] = {
                predicates[0]: [judged.get(r.passage.id) for r in retrieved]
            }
            for instructions in predicates[1:]:
                outcomes = await judge.judge(
                    query.text, [r.passage.text for r in retrieved], instructions=instructions
                )
                probabilities[instructions] = [
                    o if isinstance(o, float) else None for o in outcomes
                ]
            for instructions, values in probabilities.items():
                relevant, other = wording[instructions]
                for r, value in zip(retrieved, values, strict=True):
                    if value is not None:
                        (relevant if r.passage.id in query.relevant else other).append(value)
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
    }
    if len(predicates) > 1:
        report["predicates"] = [_wording_report(p, *wording[p]) for p in predicates]
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
