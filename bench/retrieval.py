"""Retrieval benchmarks over synthetic passages, English and Chinese, at 10,000, 100,000 and
1,000,000 passages: the whole index build from text (tokenizing included), the memory the index
keeps and the build's peak, top-5 query latency next to the best exact peers (bench/
retrieval_peers.py) measured in the same process, and whether every top 5 is identical to theirs
(and, at 10,000, to rank_bm25's BM25Okapi).

English passages are 30-80 words drawn from a Zipf distribution (exponent 1) over 50,000 made-up
words, with a fixed seed; queries are 2-6 words from the same distribution, so most contain a word
found in most passages. Chinese passages are 40-120 characters drawn the same way from 3,500 Han
characters, with a comma or full stop every 6-15; queries are 4-10 characters.

Each (language, size) runs in a fresh process, so memory is the index's alone: retained is the
resident-set growth from before the build to after it (garbage collected, and glibc's free heap
pages handed back with `malloc_trim`), peak is the build's high-water mark above the same start
(Linux `VmHWM`, reset through /proc/self/clear_refs). The build runs with glibc's default malloc,
as the app's does: it reuses freed temporaries' pages from one chunk to the next (an earlier
version fixed the mmap threshold at 128 KiB to keep freed heap out of the retained figure, which
made every temporary fresh zeroed pages: a third of the build's time at 1,000,000).

    python bench/retrieval.py [--quick] [--size en:1000000 ...]
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import median  # noqa: E402
from chatbot.retrieval.bm25 import BM25Index  # noqa: E402
from chatbot.retrieval.tokenizer import analyzer  # noqa: E402

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


CJK_SEED = 20261201
HAN = 3500


def _join(
    words: list[str], lengths: npt.NDArray[np.int64], ranks: npt.NDArray[np.int64], sep: str
) -> list[str]:
    """Passages of `lengths` words each, the words given by rank, joined by `sep`: one string
    join for the lot, then a split (a join per passage is several times slower at 1,000,000)."""
    spaced = np.array([w + sep for w in words], dtype=object)
    ended = np.array([w + "\n" for w in words], dtype=object)
    tokens = spaced[ranks]
    ends = np.cumsum(lengths) - 1
    tokens[ends] = ended[ranks[ends]]
    return "".join(tokens.tolist()).split("\n")[:-1]


def _draw(zipf: Zipf, count: int, rng: np.random.Generator) -> npt.NDArray[np.int64]:
    ranks = np.searchsorted(zipf.cdf, rng.random(count), side="right")
    return np.minimum(ranks, len(zipf.words) - 1)


# English passages are drawn CHUNK at a time, each chunk from its own seeded generator, so any
# size's passages are the first passages of every larger size's: one cached corpus (the largest
# drawn) serves every size.
CHUNK = 50_000


def _cache_path(size: int, seed: int) -> Path:
    return Path(tempfile.gettempdir()) / "helpdesk-bench" / f"en2-{size}-{seed}.txt"


def _cached_corpus(size: int, seed: int) -> tuple[Path, int] | None:
    """The smallest cached corpus holding at least `size` passages, and its size."""
    held: list[tuple[int, Path]] = []
    for path in _cache_path(size, seed).parent.glob(f"en2-*-{seed}.txt"):
        named = path.name.split("-")[1]
        if named.isdigit() and int(named) >= size:
            held.append((int(named), path))
    if not held:
        return None
    count, path = min(held)
    return path, count


def _cached_prefix(size: int, seed: int) -> list[str] | None:
    """The first `size` passages of the smallest cached corpus holding at least that many."""
    found = _cached_corpus(size, seed)
    if found is None:
        return None
    path, count = found
    with path.open(encoding="utf-8", newline="\n") as file:
        if count == size:
            return file.read().split("\n")
        return [line.rstrip("\n") for line in islice(file, size)]


def cache_texts(size: int, seed: int = SEED) -> None:
    """Draw and cache `size` English passages unless a cached corpus already holds them."""
    if _cached_corpus(size, seed) is None:
        synthetic_texts(size, seed)


def synthetic_texts(size: int, seed: int = SEED) -> list[str]:
    """`size` English passages as text: 30-80 Zipf-drawn made-up words each. Kept in a cache
    file after the first run (a million take ~10 s to draw, a second or two to read back)."""
    cached = _cached_prefix(size, seed)
    if cached is not None:
        return cached
    zipf = Zipf(vocabulary(VOCABULARY, np.random.default_rng(seed)))
    texts: list[str] = []
    for chunk, start in enumerate(range(0, size, CHUNK)):
        rng = np.random.default_rng([seed, chunk])
        lengths = rng.integers(MIN_WORDS, MAX_WORDS + 1, size=CHUNK)[: size - start].tolist()
        flat = zipf.draw(sum(lengths), rng)
        at = 0
        for n in lengths:
            texts.append(" ".join(flat[at : at + n]))
            at += n
    cache = _cache_path(size, seed)
    cache.parent.mkdir(exist_ok=True)
    partial = cache.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text("\n".join(texts), encoding="utf-8")
    partial.replace(cache)
    return texts


def english_questions(count: int, seed: int = SEED + 1) -> list[str]:
    rng = np.random.default_rng(SEED)
    zipf = Zipf(vocabulary(VOCABULARY, rng))
    return [" ".join(words) for words in synthetic_queries(zipf, count, seed)]


CJK_WORDS = 20_000


def _chinese_words(rng: np.random.Generator) -> Zipf:
    """Chinese-like words: 1-3 characters (mostly 2) from 3,500 Han characters, themselves
    Zipf-distributed, so words share common characters as real ones do."""
    characters = Zipf([chr(c) for c in rng.choice(np.arange(0x4E00, 0x9FA5), HAN, replace=False)])
    sizes = rng.choice([1, 2, 3], size=CJK_WORDS, p=[0.2, 0.65, 0.15])
    drawn = characters.words[_draw(characters, int(sizes.sum()), rng)].tolist()
    words: dict[str, None] = dict.fromkeys("，、")  # Punctuation, as common as the top words.
    at = 0
    for n in sizes.tolist():
        words.setdefault("".join(drawn[at : at + n]))
        at += n
    return Zipf(list(words))


def chinese_texts(size: int, seed: int = CJK_SEED) -> list[str]:
    """`size` Chinese passages of 20-60 Zipf-drawn words (40-120 characters or so); the commonest
    "words" are commas, which break runs of characters as punctuation does."""
    rng = np.random.default_rng(seed)
    zipf = _chinese_words(rng)
    lengths = rng.integers(20, 61, size=size)
    ranks = _draw(zipf, int(lengths.sum()), rng)
    words: list[str] = zipf.words.tolist()
    return [t + "。" for t in _join(words, lengths, ranks, "")]


def chinese_questions(count: int, seed: int = CJK_SEED + 1) -> list[str]:
    rng = np.random.default_rng(CJK_SEED)
    zipf = _chinese_words(rng)
    ask = np.random.default_rng(seed)
    return ["".join(zipf.draw(int(n), ask)) + "？" for n in ask.integers(2, 5, size=count)]


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _release() -> None:
    """Collect garbage, then hand glibc's free heap pages back to the system, so the resident
    set counts what is held, not build temporaries freed but kept by malloc for reuse."""
    gc.collect()
    try:
        libc = ctypes.CDLL(None)
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass  # Not glibc: the figure may then include freed heap.


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _latencies(
    queries: Sequence[Sequence[str]], top: Callable[[Sequence[str], int], Any], runs: int
) -> tuple[list[float], list[float], list[Any]]:
    """Milliseconds of each top-5 query, every query `runs` times: wall clock, and the thread's
    CPU time (what the query costs whatever else the machine is doing); and each query's top 5
    (from its last run), which the exactness check compares instead of asking again."""
    wall: list[float] = []
    cpu: list[float] = []
    answers: list[Any] = []
    for run in range(runs):
        for query in queries:
            started, cpu_started = time.perf_counter(), time.thread_time()
            answer = top(query, 5)
            cpu.append((time.thread_time() - cpu_started) * 1000)
            wall.append((time.perf_counter() - started) * 1000)
            if run == runs - 1:
                answers.append(answer)
    return wall, cpu, answers


def percentile(values: list[float], share: float) -> float:
    """The `share` quantile (0.5 the median), interpolated between the two nearest values."""
    return float(np.percentile(values, share * 100))


def measure_one(
    language: str, size: int, *, queries: int, runs: int, csr_queries: int, okapi_queries: int
) -> dict[str, Any]:
    """Build, memory, latency and exactness for one language and size (run in a fresh process)."""
    from bench.retrieval_peers import CsrPeer, MaxScorePeer

    texts = synthetic_texts(size) if language == "en" else chinese_texts(size)
    questions = english_questions(queries) if language == "en" else chinese_questions(queries)
    tokens = analyzer(stem=True)
    _release()
    before = _status_kb("VmRSS")
    peak_known = _reset_peak()
    started, cpu_started = time.perf_counter(), time.process_time()
    index = BM25Index.from_texts(texts, tokens)
    build_s = time.perf_counter() - started
    build_cpu_s = time.process_time() - cpu_started
    peak = _status_kb("VmHWM") - before if peak_known else None
    _release()
    retained = _status_kb("VmRSS") - before
    query_terms = [tokens.tokenize(q) for q in questions]

    csr = CsrPeer(index)
    maxscore = MaxScorePeer(csr)
    ours, ours_cpu, ours_top = _latencies(query_terms, index.top, runs)
    # The CSR peer scans every posting of every term (~25 ms a query at 1,000,000): a subset of
    # the queries when quick, enough for its median.
    csr_terms = query_terms[:csr_queries]
    csr_ms, csr_cpu, csr_top = _latencies(csr_terms, csr.top, runs)
    maxscore_ms, maxscore_cpu, maxscore_top = _latencies(query_terms, maxscore.top, runs)
    found = [[(h.index, h.score) for h in hits] for hits in ours_top]
    identical = found == maxscore_top and found[: len(csr_top)] == csr_top
    figures: dict[str, Any] = {
        "build_s": build_s,
        "memory_mb": retained / 1024,
        "peak_mb": None if peak is None else peak / 1024,
        "arrays_mb": index.memory_bytes() / 2**20,
        "p50_ms": median(ours),
        "p90_ms": percentile(ours, 0.9),
        "p99_ms": percentile(ours, 0.99),
        "cpu_p50_ms": median(ours_cpu),
        "csr_cpu_p50_ms": median(csr_cpu),
        "maxscore_cpu_p50_ms": median(maxscore_cpu),
        "csr_p50_ms": median(csr_ms),
        "csr_p90_ms": percentile(csr_ms, 0.9),
        "csr_p99_ms": percentile(csr_ms, 0.99),
        "maxscore_p50_ms": median(maxscore_ms),
        "maxscore_p90_ms": percentile(maxscore_ms, 0.9),
        "maxscore_p99_ms": percentile(maxscore_ms, 0.99),
        "build_cpu_s": build_cpu_s,
        "identical": identical,
        "queries": len(query_terms),
        "csr_queries": len(csr_terms),
    }
    if size <= 10_000:
        # rank_bm25 itself, over the same terms: the definition every score is held to.
        from rank_bm25 import BM25Okapi

        okapi = BM25Okapi([tokens.tokenize(t) for t in texts])
        # rank_bm25 looks each query term up in every document's dict (~50 ms a Chinese query).
        checked = query_terms[:okapi_queries]
        figures["okapi_identical"] = all(
            [(h.index, h.score) for h in index.top(q, 5)] == reference_top(okapi.get_scores(q), 5)
            for q in checked
        )
        figures["okapi_queries"] = len(checked)
    return figures


def _run_one(
    language: str, size: int, *, queries: int, runs: int, csr_queries: int, okapi_queries: int
) -> dict[str, Any]:
    """`measure_one` in a fresh interpreter, so memory figures are the index's alone."""
    result = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--one", language, str(size),
         "--queries", str(queries), "--runs", str(runs), "--csr-queries", str(csr_queries),
         "--okapi-queries", str(okapi_queries)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    figures: dict[str, Any] = json.loads(result.stdout)
    return figures


def _label(size: int) -> str:
    return f"{size // 1_000_000}m" if size >= 1_000_000 else f"{size // 1000}k"


def measure(quick: bool, plan: Sequence[tuple[str, int]] | None = None) -> dict[str, Any]:
    """English at every size, Chinese at 10,000 and 100,000 (and 1,000,000 without --quick);
    then how the p50s grow from 10,000 passages up."""
    if plan is None:
        plan = [("en", 10_000), ("en", 100_000), ("en", 1_000_000), ("zh", 10_000)]
        plan += [("zh", 100_000)] if quick else [("zh", 100_000), ("zh", 1_000_000)]
    queries, runs = (200, 1) if quick else (1000, 3)
    okapi_queries = 20 if quick else 200
    english = [size for language, size in plan if language == "en"]
    if english:
        # Draw (or find cached) the largest English corpus once: the smaller ones are its first
        # passages, read from the same cache file.
        cache_texts(max(english))
    results: dict[str, Any] = {}
    for language, size in plan:
        # When quick, 1,000,000 passages (and 100,000 Chinese ones) take half the queries: the
        # MaxScore peer's slowest queries (only common words) take up to a second each there.
        # The CSR peer, ~25 ms for every query at 1,000,000, takes 20.
        large = size >= 1_000_000 or (language == "zh" and size >= 100_000)
        asked = queries // 2 if quick and large else queries
        csr_queries = 20 if quick and size >= 1_000_000 else asked
        figures = _run_one(
            language, size, queries=asked, runs=runs, csr_queries=csr_queries,
            okapi_queries=okapi_queries,
        )  # fmt: skip
        tag = ("" if language == "en" else "zh_") + _label(size)
        # The floor is the faster exact peer at the median; its p90 and p99 are that peer's.
        best = min(("csr", "maxscore"), key=lambda name: float(figures[f"{name}_p50_ms"]))
        results[f"retrieval_p50_ms_{tag}"] = round(figures["p50_ms"], 3)
        results[f"retrieval_p90_ms_{tag}"] = round(figures["p90_ms"], 3)
        results[f"retrieval_p99_ms_{tag}"] = round(figures["p99_ms"], 3)
        results[f"retrieval_peer_p50_ms_{tag}"] = round(figures[f"{best}_p50_ms"], 3)
        results[f"retrieval_peer_p90_ms_{tag}"] = round(figures[f"{best}_p90_ms"], 3)
        results[f"retrieval_peer_p99_ms_{tag}"] = round(figures[f"{best}_p99_ms"], 3)
        results[f"retrieval_peer_{tag}"] = best
        results[f"retrieval_cpu_p50_ms_{tag}"] = round(figures["cpu_p50_ms"], 3)
        results[f"retrieval_peer_cpu_p50_ms_{tag}"] = round(figures[f"{best}_cpu_p50_ms"], 3)
        results[f"retrieval_csr_p50_ms_{tag}"] = round(figures["csr_p50_ms"], 3)
        results[f"retrieval_maxscore_p50_ms_{tag}"] = round(figures["maxscore_p50_ms"], 3)
        results[f"retrieval_identical_{tag}"] = figures["identical"]
        results[f"index_build_s_{tag}"] = round(figures["build_s"], 2)
        results[f"index_memory_mb_{tag}"] = round(figures["memory_mb"], 1)
        if figures["peak_mb"] is not None:
            results[f"index_peak_mb_{tag}"] = round(figures["peak_mb"], 1)
        results[f"index_arrays_mb_{tag}"] = round(figures["arrays_mb"], 1)
        if "okapi_identical" in figures:
            results[f"retrieval_okapi_identical_{tag}"] = figures["okapi_identical"]
        results[f"index_build_cpu_s_{tag}"] = round(figures["build_cpu_s"], 2)
    for prefix in ("", "zh_"):
        # How query time grows with the corpus: each size's p50 over the one at 10,000.
        base = results.get(f"retrieval_p50_ms_{prefix}10k")
        peer_base = results.get(f"retrieval_peer_p50_ms_{prefix}10k")
        for label in ("100k", "1m"):
            p50 = results.get(f"retrieval_p50_ms_{prefix}{label}")
            if base and p50 is not None:
                results[f"retrieval_growth_{prefix}10k_to_{label}"] = round(p50 / base, 1)
            peer = results.get(f"retrieval_peer_p50_ms_{prefix}{label}")
            if peer_base and peer is not None:
                results[f"retrieval_peer_growth_{prefix}10k_to_{label}"] = round(
                    peer / peer_base, 1
                )
    results["retrieval_queries"] = queries
    results["retrieval_queries_1m"] = queries // 2 if quick else queries
    results["retrieval_okapi_queries"] = okapi_queries
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--size", action="append", metavar="LANGUAGE:SIZE", help="only these, e.g. zh:1000000"
    )
    parser.add_argument("--one", nargs=2, metavar=("LANGUAGE", "SIZE"), help=argparse.SUPPRESS)
    parser.add_argument("--queries", type=int, default=200, help=argparse.SUPPRESS)
    parser.add_argument("--runs", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--csr-queries", type=int, default=200, help=argparse.SUPPRESS)
    parser.add_argument("--okapi-queries", type=int, default=50, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        language, size = args.one
        figures = measure_one(
            language, int(size), queries=args.queries, runs=args.runs,
            csr_queries=args.csr_queries, okapi_queries=args.okapi_queries,
        )  # fmt: skip
        print(json.dumps(figures))
        return
    plan = None
    if args.size:
        plan = [(language, int(size)) for language, size in (s.split(":") for s in args.size)]
    print(json.dumps(measure(args.quick, plan), indent=2))


if __name__ == "__main__":
    main()
