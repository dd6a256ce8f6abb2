"""Exact peers for the retrieval benchmark: the best known ways to get BM25Okapi's top k with numpy
and scipy, measured in the same run as `BM25Index` and checked to return identical results.

Both read the same postings as the index (document, term frequency, document length: counting is
checked against rank_bm25 separately) but compute and store their own float64 weights, 12 bytes
per posting in a scipy CSR matrix, and answer queries their own way:

- `CsrPeer`: for each query term in query order, add its row of weights into a score vector (the
  order BM25Okapi adds them, so scores are bit-for-bit equal); then the top k.
- `MaxScorePeer`: classic MaxScore over the same rows. A first k-th best score comes from the
  documents where the weightiest term weighs most; terms whose largest weights together stay
  below it are non-essential; documents of the essential terms are scored exactly (in query
  order, looking the other terms up), and the top k taken from them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy import sparse

from chatbot.retrieval.bm25 import EPSILON, K1, B, BM25Index

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
SLACK = 1e-9


class CsrPeer:
    """BM25Okapi weights in a scipy CSR matrix (one row per term), summed row by row."""

    def __init__(self, index: BM25Index) -> None:
        starts = index._starts
        doc = index._doc
        lengths = index._doc_len.astype(np.int64)
        size = len(lengths)
        df = np.diff(starts)
        live = np.flatnonzero(df > 0)
        frequencies, inverse = np.unique(df[live], return_inverse=True)
        by_frequency = [math.log(size - f + 0.5) - math.log(f + 0.5) for f in frequencies.tolist()]
        idf = np.zeros(len(df))
        idf[live] = np.array(by_frequency)[inverse]
        # Term ids are in first-appearance order after a fresh build: BM25Okapi's sum order.
        average = float(np.cumsum(idf[live])[-1]) / len(live)
        idf[live[idf[live] < 0]] = EPSILON * average
        avgdl = int(lengths.sum()) / size
        norm = K1 * (1 - B + B * lengths / avgdl)
        # Weights a few million postings at a time, into one array: temporaries stay small.
        weights = np.empty(doc.size)
        step = 1 << 22
        for lo in range(0, doc.size, step):
            hi = min(lo + step, doc.size)
            # The terms whose postings overlap [lo, hi), each repeated for its postings there.
            first, last = np.searchsorted(starts, [lo, hi - 1], side="right") - 1
            spans = np.minimum(starts[first + 1 : last + 2], hi)
            spans -= np.maximum(starts[first : last + 1], lo)
            terms = np.repeat(np.arange(first, last + 1), spans)
            f = index._tf[lo:hi]
            weights[lo:hi] = idf[terms] * (f * (K1 + 1) / (f + norm[doc[lo:hi]]))
        self.size = size
        self.term_ids = index._term_ids
        self.matrix = sparse.csr_matrix((weights, doc, starts), shape=(len(df), size), copy=False)
        # The largest weight of each term, for MaxScore's bounds.
        self.upper = np.zeros(len(df))
        self.upper[live] = np.maximum.reduceat(weights, starts[live])

    def ids(self, query: Sequence[str]) -> list[int]:
        return [self.term_ids[w] for w in query if w in self.term_ids]

    def row(self, term: int) -> tuple[npt.NDArray[np.int32], FloatArray]:
        m = self.matrix
        a, b = m.indptr[term], m.indptr[term + 1]
        return m.indices[a:b], m.data[a:b]

    def top(self, query: Sequence[str], k: int) -> list[tuple[int, float]]:
        scores = np.zeros(self.size)
        for term in self.ids(query):
            docs, weights = self.row(term)
            scores[docs] += weights
        return _top(np.arange(self.size), scores, k)


class MaxScorePeer(CsrPeer):
    """MaxScore with non-essential terms looked up, over the same precomputed weights."""

    def __init__(self, csr: CsrPeer) -> None:  # Shares the other peer's matrix.
        self.__dict__.update(csr.__dict__)

    def top(self, query: Sequence[str], k: int) -> list[tuple[int, float]]:
        terms = self.ids(query)
        if not terms:
            return []
        distinct = list(dict.fromkeys(terms))
        df = {t: int(self.matrix.indptr[t + 1] - self.matrix.indptr[t]) for t in distinct}
        bound = {t: self.upper[t] * terms.count(t) for t in distinct}
        # A first floor: exact scores of every document of the rarest terms (4,096 postings).
        seeds: list[npt.NDArray[np.int32]] = []
        read = 0
        for term in sorted(distinct, key=df.__getitem__):
            if seeds and read + df[term] > 4096:
                break
            seeds.append(self.row(term)[0])
            read += df[term]
        seed = np.unique(np.concatenate(seeds))
        floor = 0.0
        if seed.size >= k:
            exact = self.exact(seed, terms)
            floor = float(np.partition(exact, exact.size - k)[exact.size - k])
        non_essential: list[int] = []
        total = 0.0
        for term in sorted(distinct, key=bound.__getitem__):
            if (total + bound[term]) * (1 + SLACK) >= floor:
                break
            non_essential.append(term)
            total += bound[term]
        essential = [t for t in distinct if t not in non_essential]
        candidates = np.unique(np.concatenate([self.row(t)[0] for t in essential]))
        if non_essential:
            partial = np.zeros(candidates.size)
            for term in essential:
                docs, weights = self.row(term)
                partial[np.searchsorted(candidates, docs)] += weights * terms.count(term)
            candidates = candidates[(partial + total) * (1 + SLACK) >= floor]
        return _top(candidates, self.exact(candidates, terms), k)

    def exact(self, candidates: npt.NDArray[np.int32], terms: list[int]) -> FloatArray:
        """Scores of sorted candidates, each term added in query order (BM25Okapi's sums)."""
        scores = np.zeros(candidates.size)
        for term in terms:
            docs, weights = self.row(term)
            if not docs.size:
                continue
            at = np.minimum(np.searchsorted(docs, candidates), docs.size - 1)
            hit = docs[at] == candidates
            scores[hit] += weights[at[hit]]
        return scores


def _top(docs: npt.NDArray[np.integer], scores: FloatArray, k: int) -> list[tuple[int, float]]:
    """BM25Okapi's ranking of these documents: positive scores, best first, ties by document."""
    positive = np.flatnonzero(scores > 0)
    if positive.size > k:
        kth = np.partition(scores[positive], positive.size - k)[positive.size - k]
        positive = positive[scores[positive] >= kth]
    order = np.lexsort((docs[positive], -scores[positive]))[:k]
    return [(int(docs[positive[i]]), float(scores[positive[i]])) for i in order]
