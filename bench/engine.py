"""Engine benchmarks: one edited passage made searchable at 10,000 passages, and a whole
answer in-process when every judgment comes from the replay cache.

    python bench/engine.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, median  # noqa: E402
from bench.retrieval import synthetic_corpus  # noqa: E402
from chatbot.engine.engine import Engine  # noqa: E402
from chatbot.knowledge_base.models import Passage  # noqa: E402
from chatbot.knowledge_base.storage import load_knowledge_base, shipped_knowledge_base  # noqa: E402
from chatbot.paths import shipped_cache  # noqa: E402
from chatbot.retrieval.retrievers import BM25Retriever  # noqa: E402
from chatbot.valen.cache import ReplayCache  # noqa: E402
from chatbot.valen.judge import PassageJudge  # noqa: E402

SEED_QUESTIONS = ROOT / "tests" / "data" / "rerank_data.json"


def synthetic_passages(size: int) -> list[Passage]:
    """`size` passages whose text is synthetic Zipf words (see bench/retrieval.py)."""
    _, documents = synthetic_corpus(size, seed=11)
    return [
        Passage(id=f"p{i:06}", title=f"Topic {i}", text=" ".join(words))
        for i, words in enumerate(documents)
    ]


def measure_reindex(quick: bool) -> dict[str, float]:
    """Engine.with_passages after one passage is edited, as the KB editor calls it on save."""
    passages = synthetic_passages(10_000)
    judge = PassageJudge(replay="on", cache=None)
    started = time.perf_counter()
    engine = Engine(retriever=BM25Retriever(passages), judge=judge)
    fresh_ms = (time.perf_counter() - started) * 1000
    times: list[float] = []
    for edit in range(10 if quick else 40):
        at = (edit * 997) % len(passages)
        marker = f"edited{edit}"
        passages = list(passages)
        passages[at] = passages[at].model_copy(update={"text": f"{passages[at].text} {marker}"})
        started = time.perf_counter()
        engine = engine.with_passages(passages)
        hits = engine.retriever.retrieve(marker, 1)  # Searchable: the new word finds it.
        times.append((time.perf_counter() - started) * 1000)
        if not hits or hits[0].passage.id != passages[at].id:
            raise RuntimeError("the edited passage is not searchable")
    return {
        "reindex_after_edit_ms_10k": round(median(times), 2),
        "reindex_fresh_build_ms_10k": round(fresh_ms, 1),
    }


def replay_engine() -> Engine:
    """The shipped knowledge base and recorded answers, replayed with no network."""
    passages = load_knowledge_base(shipped_knowledge_base())
    judge = PassageJudge(replay="on", cache=ReplayCache(shipped_cache()))
    return Engine(retriever=BM25Retriever(passages), judge=judge)


async def _answer_ms(engine: Engine, question: str, times: int) -> list[float]:
    await engine.answer(question)  # Loads the replay cache once, as the app's first question does.
    elapsed: list[float] = []
    for _ in range(times):
        started = time.perf_counter()
        await engine.answer(question)
        elapsed.append((time.perf_counter() - started) * 1000)
    return elapsed


def measure_ask(quick: bool) -> dict[str, float | str]:
    """Engine.answer in-process for seed question 1 (5 passages: 4 recorded, refund-time not)
    and seed question 3 (3 passages, every judgment recorded)."""
    engine = replay_engine()
    questions = [q["text"] for q in json.loads(SEED_QUESTIONS.read_text())["queries"]]
    times = 200 if quick else 2000
    first = asyncio.run(_answer_ms(engine, questions[0], times))
    all_hit = asyncio.run(_answer_ms(engine, questions[2], times))
    return {
        "ask_replay_hit_ms": round(median(first), 3),
        "ask_replay_all_hit_ms": round(median(all_hit), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(json.dumps({**measure_reindex(args.quick), **measure_ask(args.quick)}, indent=2))


if __name__ == "__main__":
    main()
