"""BM25 retrieval with rank-bm25's scoring, answered from postings instead of a full scan.

`rank_bm25.BM25Okapi.get_scores` walks every document for every query term, which costs hundreds of
milliseconds at 100,000 passages, and building it walks every token in Python. This index keeps
BM25Okapi's exact statistics (its idf with the epsilon floor for very common terms, document
lengths, average length, k1 and b), builds them with numpy, and evaluates the same per-term
formula only on the documents that contain the term, adding terms in query order, so every score
is bit-for-bit the one BM25Okapi would compute.

An index is immutable. `derive` builds the index of an edited corpus from this one, re-counting
only the documents that changed, and gives exactly what a fresh build would.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, count, islice

import numpy as np
import numpy.typing as npt

K1 = 1.5
B = 0.75
EPSILON = 0.25

# A term in at least this share of documents keeps a dense weight vector: adding a whole vector
# is several times cheaper than scattering into most of the score array, and adding the zeros
# BM25Okapi adds for the other documents leaves every score unchanged.
DENSE_SHARE = 1 / 8

# `top` estimates a lower bound for the k-th best score from every this-many-th document.
SAMPLE_STRIDE = 64

Int32Array = npt.NDArray[np.int32]
Int64Array = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class ScoredDocument:
    """A document index and its BM25 score for one query."""

    index: int
    score: float


@dataclass(frozen=True, slots=True)
class _Postings:
    """Term-major postings: for each term id, its documents in ascending order.

    `starts[t]:starts[t + 1]` is term `t`'s range in the other arrays. `first` is where the term
    first occurs in the document, which orders the vocabulary by first appearance like BM25Okapi.
    """

    starts: Int64Array
    doc: Int32Array
    tf: Int32Array
    first: Int32Array


def _count(
    documents: Sequence[Sequence[str]], term_ids: dict[str, int]
) -> tuple[Int64Array, Int32Array, Int32Array, Int32Array, Int64Array]:
    """Postings of `documents` as parallel arrays (term, document, tf, first position) sorted by
    (term, document), and the documents' lengths. Unseen terms are added to `term_ids`, numbered
    in order of first appearance."""
    lengths = np.fromiter(map(len, documents), np.int64, count=len(documents))
    total = int(lengths.sum())
    base = len(term_ids)
    # One pass over the tokens: a term seen for the first time gets a provisional id (base plus
    # its token's position), made consecutive below.
    ids = np.fromiter(
        map(term_ids.setdefault, chain.from_iterable(documents), count(base)), np.int64, total
    )
    if len(term_ids) > base:
        added = list(islice(term_ids, base, None))
        provisional = np.fromiter(map(term_ids.__getitem__, added), np.int64, len(added))
        lookup = np.empty(base + total, np.int64)
        lookup[:base] = np.arange(base)
        lookup[provisional] = np.arange(base, base + len(added))
        ids = lookup[ids]
        term_ids.update(zip(added, range(base, base + len(added)), strict=True))
    docs = np.repeat(np.arange(len(documents), dtype=np.int32), lengths)
    # Tokens are in (document, position) order, so a stable sort by term gives (term, doc, pos).
    # numpy sorts 16-bit keys by radix, five times faster: most vocabularies fit.
    keys = ids.astype(np.uint16) if len(term_ids) <= 1 << 16 else ids
    order = np.argsort(keys, kind="stable")
    term = ids[order]
    doc = docs[order]
    new_pair = np.ones(total, bool)
    np.not_equal(term[1:], term[:-1], out=new_pair[1:])
    new_pair[1:] |= doc[1:] != doc[:-1]
    heads = np.flatnonzero(new_pair)
    tf = np.diff(heads, append=total)
    head_docs = doc[heads]
    # A pair's first token is its term's first occurrence in the document (the sort is stable).
    offsets = np.zeros(len(documents), np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    first = order[heads] - offsets[head_docs]
    return term[heads], head_docs, tf.astype(np.int32), first.astype(np.int32), lengths


class BM25Index:
    """BM25Okapi scores over an immutable corpus of tokenized documents, queried through postings.

    `scores(query)` equals `BM25Okapi(documents).get_scores(query)` bit for bit, with BM25Okapi's
    defaults (k1=1.5, b=0.75, epsilon=0.25).
    """

    size: int
    _term_ids: dict[str, int]
    _postings: _Postings
    _doc_len: Int64Array
    _weights: FloatArray
    _dense: dict[int, FloatArray]

    def __init__(self, documents: Sequence[Sequence[str]]) -> None:
        term_ids: dict[str, int] = {}
        term, doc, tf, first, lengths = _count(documents, term_ids)
        self._finish(term_ids, term, doc, tf, first, lengths)

    @classmethod
    def _assemble(
        cls,
        term_ids: dict[str, int],
        term: Int64Array,
        doc: Int32Array,
        tf: Int32Array,
        first: Int32Array,
        lengths: Int64Array,
    ) -> BM25Index:
        index = cls.__new__(cls)
        index._finish(term_ids, term, doc, tf, first, lengths)
        return index

    def _finish(
        self,
        term_ids: dict[str, int],
        term: Int64Array,
        doc: Int32Array,
        tf: Int32Array,
        first: Int32Array,
        lengths: Int64Array,
    ) -> None:
        """Statistics and weights from postings sorted by (term, document)."""
        self.size = len(lengths)
        self._term_ids = term_ids
        self._doc_len = lengths
        vocabulary = len(term_ids)
        df = np.bincount(term, minlength=vocabulary)
        starts = np.zeros(vocabulary + 1, np.int64)
        np.cumsum(df, out=starts[1:])
        self._postings = _Postings(starts, doc, tf, first)
        self._dense = {}
        total = int(lengths.sum())
        if total == 0:
            # BM25Okapi divides by the corpus' total length (or size): nothing can match anyway.
            self._weights = np.zeros(0)
            return
        idf = self._idf(df, starts, doc, first)
        # The same expressions, in the same order, as BM25Okapi.get_scores, so results are equal.
        avgdl = total / self.size
        norm = K1 * (1 - B + B * lengths / avgdl)
        self._weights = idf[term] * (tf * (K1 + 1) / (tf + norm[doc]))
        for t in np.flatnonzero(df >= max(1, math.ceil(self.size * DENSE_SHARE))).tolist():
            dense = np.zeros(self.size)
            start, end = int(starts[t]), int(starts[t + 1])
            dense[doc[start:end]] = self._weights[start:end]
            self._dense[t] = dense

    def _idf(
        self, df: Int64Array, starts: Int64Array, doc: Int32Array, first: Int32Array
    ) -> FloatArray:
        """BM25Okapi's idf per term id, with its floor for terms in over half the documents."""
        corpus_size = self.size
        live = np.flatnonzero(df > 0)
        # One math.log per distinct document frequency: exactly BM25Okapi's arithmetic, cheaply.
        frequencies, inverse = np.unique(df[live], return_inverse=True)
        by_frequency = np.array(
            [math.log(corpus_size - f + 0.5) - math.log(f + 0.5) for f in frequencies.tolist()],
            np.float64,
        )
        idf = np.zeros(len(df))
        idf[live] = by_frequency[inverse]
        # BM25Okapi averages over its vocabulary in first-appearance order; a running sum
        # (cumsum adds one term at a time, like its loop) keeps the rounding identical.
        heads = starts[live]
        appearance = live[np.lexsort((first[heads], doc[heads]))]
        average = float(np.cumsum(idf[appearance])[-1]) / len(live)
        idf[live[idf[live] < 0]] = EPSILON * average
        return idf

    def scores(self, query: Sequence[str]) -> FloatArray:
        """A score per document, equal to `BM25Okapi.get_scores(query)`."""
        scores = np.zeros(self.size)
        postings = self._postings
        for word in query:
            term = self._term_ids.get(word)
            if term is None:
                continue
            dense = self._dense.get(term)
            if dense is not None:
                scores += dense
                continue
            start, end = postings.starts[term], postings.starts[term + 1]
            if start != end:
                scores[postings.doc[start:end]] += self._weights[start:end]
        return scores

    def top(self, query: Sequence[str], k: int) -> list[ScoredDocument]:
        """The `k` best documents with a positive score, best first, ties by document order."""
        if k <= 0 or self.size == 0:
            return []
        scores = self.scores(query)
        floor = 0.0
        if self.size >= SAMPLE_STRIDE * k:
            # The k-th best of every SAMPLE_STRIDE-th score is at most the k-th best overall, so
            # every document that can make the top k scores at least that much: one filtering
            # pass instead of a selection over the large share of documents a common term matches.
            sample = scores[::SAMPLE_STRIDE]
            floor = float(np.partition(sample, sample.size - k)[sample.size - k])
        matched = np.flatnonzero(scores >= floor) if floor > 0 else np.flatnonzero(scores > 0)
        if matched.size > k:
            # Keep every document that ties with the k-th best, then order them exactly.
            kth = np.partition(scores[matched], matched.size - k)[matched.size - k]
            matched = matched[scores[matched] >= kth]
        order = np.lexsort((matched, -scores[matched]))[:k]
        return [ScoredDocument(int(matched[i]), float(scores[matched[i]])) for i in order]

    def derive(self, documents: Sequence[int | Sequence[str]]) -> BM25Index:
        """The index of a new corpus in which each document is either the index of one of this
        index's documents, reused without counting it again, or a new list of tokens.

        Equal to `BM25Index` built from scratch over the resulting token lists. Each old document
        may be reused at most once.
        """
        old = self._postings
        size = len(documents)
        kept_at = np.full(self.size, -1, np.int64)  # old document -> its new index, or -1
        fresh: list[Sequence[str]] = []
        fresh_at: list[int] = []
        for position, source in enumerate(documents):
            if isinstance(source, int | np.integer):
                source = int(source)
                if not 0 <= source < self.size:
                    raise IndexError(f"document {source} is not in this index of {self.size}")
                if kept_at[source] >= 0:
                    raise ValueError(f"document {source} is reused twice")
                kept_at[source] = position
            else:
                fresh.append(source)
                fresh_at.append(position)

        lengths = np.zeros(size, np.int64)
        kept_old = np.flatnonzero(kept_at >= 0)
        lengths[kept_at[kept_old]] = self._doc_len[kept_old]

        # Old postings of kept documents, renumbered; a dropped or replaced document's go away.
        vocabulary = len(self._term_ids)
        old_term = np.repeat(np.arange(vocabulary, dtype=np.int64), np.diff(old.starts))
        new_doc = kept_at[old.doc]
        keep = new_doc >= 0
        term, doc = old_term[keep], new_doc[keep]
        tf, first = old.tf[keep], old.first[keep]

        term_ids = self._term_ids
        if not np.all(np.diff(kept_at[kept_old]) > 0):
            # Kept documents were reordered: sort the old postings by (term, document) again.
            order = np.argsort(term << 32 | doc)
            term, doc, tf, first = term[order], doc[order], tf[order], first[order]
        if fresh:
            # Count the new documents as one small corpus, then merge their postings in place.
            if any(t not in term_ids for t in chain.from_iterable(fresh)):
                term_ids = dict(term_ids)  # Copy on write: this index stays as it was.
            f_term, f_doc, f_tf, f_first, f_len = _count(fresh, term_ids)
            placed = np.array(fresh_at, np.int64)
            lengths[placed] = f_len
            f_placed = placed[f_doc]
            at = np.searchsorted(term << 32 | doc, f_term << 32 | f_placed)
            term = np.insert(term, at, f_term)
            doc = np.insert(doc, at, f_placed)
            tf = np.insert(tf, at, f_tf)
            first = np.insert(first, at, f_first)
        return BM25Index._assemble(term_ids, term, doc.astype(np.int32), tf, first, lengths)

    def replace(self, index: int, tokens: Sequence[str]) -> BM25Index:
        """This corpus with document `index` replaced by `tokens`."""
        return self.derive([tokens if i == index else i for i in range(self.size)])

    def append(self, tokens: Sequence[str]) -> BM25Index:
        """This corpus with `tokens` added as the last document."""
        return self.derive([*range(self.size), tokens])

    def remove(self, index: int) -> BM25Index:
        """This corpus without document `index` (later documents move up by one)."""
        return self.derive([i for i in range(self.size) if i != index])
