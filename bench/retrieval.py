"""Retrieval benchmarks over synthetic passages: query latency next to a numpy floor, exactness
against rank-bm25, index build time, and how fast one edited passage becomes searchable.

The corpus: passages of 30-80 words drawn from a Zipf distribution (exponent 1) over 50,000
made-up words, with a fixed seed. Queries are 2-6 words from the same distribution, so most of
them contain a word found in most passages, the case BM25Okapi floors the idf of.

    python bench/retrieval.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import median  # noqa: E402
from chatbot.retrieval.bm25 import BM25Index  # noqa: E402

SEED = 20261130
VOCABULARY = 50_000
MIN_WORDS, MAX_WORDS = 30, 80
LETTERS = np.array(list("bcdfghjklmnpqrstvwxz"))  # No vowels: never an English stop word.
VOWELS = np.array(list("aeiou"))


def vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    """`size` distinct lowercase made-up words (consonant-vowel syllables), in random rank order."""
    words: set[str] = set()
    while len(words) < size:
        syllables = rng.integers(2, 5, size=size)
        consonants = rng.choice(LETTERS, size=(size, 4))
        vowels = rng.choice(VOWELS, size=(size, 4))
        for n, c, v in zip(syllables.tolist(), consonants, vowels, strict=True):
            words.add("".join(a + b for a, b in zip(c[:n], v[:n], strict=True)))
    ordered = sorted(words)[:size]
    rng.shuffle(ordered)
    return ordered


class Zipf:
    """Draws words with probability proportional to 1 / rank."""

    def __init__(self, words: list[str]) -> None:
        self.words = np.array(words, dtype=object)
        weights = 1.0 / np.arange(1, len(words) + 1)
        self.cdf = np.cumsum(weights) / weights.sum()

    def draw(self, count: int, rng: np.random.Generator) -> list[str]:
        ranks = np.searchsorted(self.cdf, rng.random(count), side="right")
        drawn: list[str] = self.words[np.minimum(ranks, len(self.words) - 1)].tolist()
        return drawn


def synthetic_corpus(size: int, seed: int = SEED) -> tuple[Zipf, list[list[str]]]:
    """`size` tokenized passages of 30-80 Zipf-distributed words, the same for the same seed."""
    rng = np.random.default_rng(seed)
    zipf = Zipf(vocabulary(VOCABULARY, rng))
    lengths = rng.integers(MIN_WORDS, MAX_WORDS + 1, size=size)
    flat = zipf.draw(int(lengths.sum()), rng)
    ends = np.cumsum(lengths).tolist()
    return zipf, [flat[end - n : end] for end, n in zip(ends, lengths.tolist(), strict=True)]


def synthetic_queries(zipf: Zipf, count: int, seed: int = SEED + 1) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    return [zipf.draw(int(n), rng) for n in rng.integers(2, 7, size=count)]


class FloorIndex:
    """The floor: a plain numpy inverted index (term -> documents, weights), BM25 weights,
    scatter-add per query term, argpartition for the top k. No exactness guarantees."""

    def __init__(self, documents: Sequence[Sequence[str]]) -> None:
        ids: dict[str, int] = {}
        flat = np.array([ids.setdefault(t, len(ids)) for d in documents for t in d], np.int64)
        lengths = np.array([len(d) for d in documents], np.int64)
        self.size = len(documents)
        docs = np.repeat(np.arange(self.size, dtype=np.int64), lengths)
        keys, tf = np.unique(flat * self.size + docs, return_counts=True)
        terms, pdocs = keys // self.size, keys % self.size
        df = np.bincount(terms, minlength=len(ids))
        idf = np.log(self.size - df + 0.5) - np.log(df + 0.5)
        idf = np.where(idf < 0, 0.25 * idf.mean(), idf)
        norm = 1.5 * (0.25 + 0.75 * lengths / lengths.mean())
        weights = idf[terms] * (tf * 2.5 / (tf + norm[pdocs]))
        starts = np.concatenate([[0], np.cumsum(df)])
        self.postings = {
            term: (pdocs[starts[i] : starts[i + 1]], weights[starts[i] : starts[i + 1]])
            for term, i in ids.items()
        }

    def top(self, query: Sequence[str], k: int) -> npt.NDArray[np.int64]:
        scores = np.zeros(self.size)
        for term in query:
            posting = self.postings.get(term)
            if posting is not None:
                scores[posting[0]] += posting[1]
        best = np.argpartition(scores, self.size - k)[self.size - k :]
        return best[np.argsort(-scores[best])]


def reference_top(scores: npt.NDArray[np.float64], k: int) -> list[tuple[int, float]]:
    """BM25Okapi's ranking: positive scores, best first, ties by document order."""
    positive = np.flatnonzero(scores > 0)
    order = np.lexsort((positive, -scores[positive]))[:k]
    return [(int(positive[i]), float(scores[positive[i]])) for i in order]


def latencies_ms(
    queries: Sequence[Sequence[str]], top: Callable[[Sequence[str], int], object]
) -> list[float]:
    """Milliseconds each query's top 5 takes."""
    times: list[float] = []
    for query in queries:
        started = time.perf_counter()
        top(query, 5)
        times.append((time.perf_counter() - started) * 1000)
    return times


def measure(quick: bool) -> dict[str, float | bool | int]:
    """Query latency and build time at 100,000 passages, the floor, and exactness."""
    from rank_bm25 import BM25Okapi

    zipf, documents = synthetic_corpus(100_000)
    queries = synthetic_queries(zipf, 200 if quick else 1000)
    runs = 3 if quick else 5
    builds: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        index = BM25Index(documents)
        builds.append(time.perf_counter() - started)
    floor = FloorIndex(documents)
    ours: list[float] = []
    floors: list[float] = []
    ratios: list[float] = []
    for _ in range(runs):
        our_p50 = median(latencies_ms(queries, index.top))
        floor_p50 = median(latencies_ms(queries, floor.top))
        ours.append(our_p50)
        floors.append(floor_p50)
        ratios.append(our_p50 / floor_p50)

    # get_scores scans every passage in Python (~60 ms per query term here): a subset when quick.
    okapi = BM25Okapi(documents)
    checked = queries[:: len(queries) // 12] if quick else queries
    identical = all(
        [(h.index, h.score) for h in index.top(q, 5)] == reference_top(okapi.get_scores(q), 5)
        for q in checked
    )
    return {
        "retrieval_p50_ms_100k": round(median(ours), 3),
        "retrieval_floor_p50_ms_100k": round(median(floors), 3),
        "retrieval_vs_floor": round(median(ratios), 2),
        "retrieval_identical": identical,
        "retrieval_identical_queries": len(checked),
        "index_build_s_100k": round(median(builds), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(json.dumps(measure(args.quick), indent=2))


if __name__ == "__main__":
    main()
