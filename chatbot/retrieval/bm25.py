"""BM25 retrieval with rank-bm25's scoring, answered from compact postings with exact pruning.

`rank_bm25.BM25Okapi.get_scores` walks every document for every query term. This index keeps
BM25Okapi's exact statistics (its idf with the epsilon floor for very common terms, document
lengths, average length, k1 and b) and evaluates the same per-term formula, in the same order, on
the documents that can still make the top k, so every score it returns is bit for bit the one
BM25Okapi would compute.

Memory: one term-major set of postings (document id int32, term frequency uint8 when it fits,
first position uint16 when it fits), about 7 bytes per distinct (term, document) pair, plus a
few numbers per term and per document. Weights are not stored: they are recomputed for the
postings a query touches, which is what keeps them exact without 8 bytes per posting.

Query: MaxScore. Each term's largest weight in any document bounds what it can add. The best
documents of the rarest terms give a first k-th best score; terms whose bounds together stay
below it cannot lift a document into the top k on their own, so only documents containing one of
the other terms are candidates, and of those only the ones whose bound still reaches the k-th
best are scored exactly.

An index is immutable. `derive` builds the index of an edited corpus from this one, re-counting
only the documents that changed, and gives exactly what a fresh build would.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import numpy.typing as npt

from chatbot.retrieval.tokenizer import Analyzer, encode_tokens

K1 = 1.5
B = 0.75
EPSILON = 0.25

# Documents counted per step of a build: bounds the build's temporary memory, and keeps a
# chunk's document numbers within 16 bits.
CHUNK_DOCUMENTS = 8192
# When the query's weightiest term is in more documents than this, seed the k-th best score from
# the champions of its common terms.
SEED_POSTINGS = 4096
# Past this share of the corpus, scoring candidates one by one costs more than a full sweep; and
# a term in at least this share of documents also keeps its term frequency in every document
# (one byte each, about what its postings cost), so looking candidates up is one gather.
DENSE_SHARE = 1 / 8
# Up to this many documents, a query whose terms have no more postings than there are documents
# is scored for every document, which beats pruning's bookkeeping there.
DIRECT_SIZE = 1 << 15
# Up to this many postings, every posting's weight is kept (8 bytes each, 16 MB at most) and
# every query scores every document from them: at 10,000 passages that beats both pruning and
# recomputing weights per query.
STORED_WEIGHTS = 1 << 21
# Terms in at least this many documents keep the documents where they weigh most (their
# champions), a cheap first guess at the k best for queries of common words.
CHAMPION_MIN_DF = 1024
CHAMPIONS = 16
# Relative slack on bounds, far above float64 rounding of a sum of a few dozen positive terms.
BOUND_SLACK = 1e-9

Int32Array = npt.NDArray[np.int32]
Int64Array = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
UIntArray = npt.NDArray[np.unsignedinteger]


@dataclass(frozen=True, slots=True)
class ScoredDocument:
    """A document index and its BM25 score for one query."""

    index: int
    score: float


@dataclass(frozen=True, slots=True)
class _Pairs:
    """Postings of some documents, sorted by (term, document)."""

    term: Int64Array
    doc: Int32Array
    tf: Int64Array
    first: Int64Array


def _smallest(maximum: int) -> type[np.unsignedinteger]:
    """The narrowest unsigned dtype holding 0..maximum."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if maximum <= np.iinfo(dtype).max:
            return dtype
    return np.uint64


def _pairs(ids: Int32Array, lengths: Int64Array, doc_base: int) -> _Pairs:
    """(term, document) pairs of consecutive documents given as concatenated term ids, with term
    frequency and the position of the term's first occurrence in the document."""
    total = ids.size
    documents = len(lengths)
    offsets = np.zeros(documents + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    # One sort of (term, position) keys orders tokens by term, then document, then position.
    keys = ids.astype(np.int64) << 32
    keys |= np.arange(total, dtype=np.int64)
    keys.sort()
    term = keys >> 32
    position = keys & 0xFFFFFFFF
    del keys
    doc_of = np.repeat(np.arange(documents, dtype=np.int32), lengths)[position]
    head = np.ones(total, bool)
    np.not_equal(term[1:], term[:-1], out=head[1:])
    head[1:] |= doc_of[1:] != doc_of[:-1]
    heads = np.flatnonzero(head)
    tf = np.diff(heads, append=total)
    doc = doc_of[heads]
    first = position[heads] - offsets[doc]
    return _Pairs(term[heads], doc + np.int32(doc_base), tf, first)


@dataclass(frozen=True, slots=True)
class _Chunk:
    """One build step's postings, compactly, until they are merged: the distinct terms and their
    counts (postings are in term order), then per posting the document (relative to the chunk),
    term frequency and first position in the narrowest dtypes that hold them."""

    terms: Int64Array
    counts: Int64Array
    doc: UIntArray
    tf: UIntArray
    first: UIntArray
    doc_base: int


def _compact(pairs: _Pairs, doc_base: int) -> _Chunk:
    size = pairs.term.size
    head = np.ones(size, bool)
    np.not_equal(pairs.term[1:], pairs.term[:-1], out=head[1:])
    heads = np.flatnonzero(head)
    local = pairs.doc - np.int32(doc_base)
    return _Chunk(
        terms=pairs.term[heads],
        counts=np.diff(heads, append=size),
        doc=local.astype(_smallest(int(local.max(initial=0)))),
        tf=pairs.tf.astype(_smallest(int(pairs.tf.max(initial=0)))),
        first=pairs.first.astype(_smallest(int(pairs.first.max(initial=0)))),
        doc_base=doc_base,
    )


class BM25Index:
    """BM25Okapi scores over an immutable corpus of tokenized documents.

    `scores(query)` equals `BM25Okapi(documents).get_scores(query)` bit for bit, with BM25Okapi's
    defaults (k1=1.5, b=0.75, epsilon=0.25), and `top(query, k)` ranks exactly as those scores do.
    """

    size: int
    _term_ids: dict[str, int]
    _starts: Int64Array
    _doc: Int32Array
    _tf: UIntArray
    _first: UIntArray
    _doc_len: Int32Array
    _norm: FloatArray
    _idf: FloatArray
    _upper: FloatArray
    _champions: dict[int, Int32Array]
    _dense_tf: dict[int, UIntArray]
    _stored: FloatArray | None

    def __init__(self, documents: Sequence[Sequence[str]]) -> None:
        term_ids: dict[str, int] = {}

        def encode(start: int, end: int) -> tuple[Int32Array, Int64Array]:
            return encode_tokens(documents[start:end], term_ids)

        self._build(len(documents), encode, term_ids)

    @classmethod
    def from_texts(cls, texts: Sequence[str], analyzer: Analyzer) -> BM25Index:
        """The index of `[analyzer.tokenize(t) for t in texts]`, tokenized a chunk at a time so the
        corpus' tokens never exist all at once."""
        index = cls.__new__(cls)
        term_ids: dict[str, int] = {}
        encoder = analyzer.encoder(term_ids)

        def encode(start: int, end: int) -> tuple[Int32Array, Int64Array]:
            return encoder.encode(texts[start:end])

        index._build(len(texts), encode, term_ids)
        return index

    def _build(
        self,
        size: int,
        encode: Callable[[int, int], tuple[Int32Array, Int64Array]],
        term_ids: dict[str, int],
    ) -> None:
        chunks: list[_Chunk] = []
        lengths = np.zeros(size, np.int64)
        for start in range(0, size, CHUNK_DOCUMENTS):
            end = min(start + CHUNK_DOCUMENTS, size)
            ids, chunk_lengths = encode(start, end)
            lengths[start:end] = chunk_lengths
            chunks.append(_compact(_pairs(ids, chunk_lengths, start), start))
        self._merge(term_ids, chunks, lengths)
        # Term ids were handed out in order of first appearance: BM25Okapi's vocabulary order.
        self._finish(appearance=None)

    def _merge(self, term_ids: dict[str, int], chunks: list[_Chunk], lengths: Int64Array) -> None:
        """Term-major postings from chunks in document order, freeing each once it is copied."""
        vocabulary = len(term_ids)
        df = np.zeros(vocabulary, np.int64)
        for chunk in chunks:
            df[chunk.terms] += chunk.counts
        starts = np.zeros(vocabulary + 1, np.int64)
        np.cumsum(df, out=starts[1:])
        total = int(starts[-1])
        doc = np.empty(total, np.int32)
        tf = np.empty(total, _smallest(max((int(c.tf.max(initial=0)) for c in chunks), default=0)))
        first = np.empty(
            total, _smallest(max((int(c.first.max(initial=0)) for c in chunks), default=0))
        )
        cursor = starts[:-1].copy()
        while chunks:
            chunk = chunks.pop(0)
            # A chunk adds, for each of its terms, the next run of that term's range.
            group_starts = np.zeros(chunk.terms.size, np.int64)
            np.cumsum(chunk.counts[:-1], out=group_starts[1:])
            at = np.repeat(cursor[chunk.terms] - group_starts, chunk.counts)
            at += np.arange(at.size)
            cursor[chunk.terms] += chunk.counts
            doc[at] = chunk.doc.astype(np.int32) + np.int32(chunk.doc_base)
            tf[at] = chunk.tf
            first[at] = chunk.first
        self._set(term_ids, starts, doc, tf, first, lengths)

    def _set(
        self,
        term_ids: dict[str, int],
        starts: Int64Array,
        doc: Int32Array,
        tf: UIntArray,
        first: UIntArray,
        lengths: Int64Array,
    ) -> None:
        self.size = len(lengths)
        self._term_ids = term_ids
        self._starts = starts
        self._doc = doc
        self._tf = tf
        self._first = first
        self._doc_len = lengths.astype(np.int32)

    def _finish(self, appearance: Int64Array | None) -> None:
        """idf, document norms and each term's largest weight, from the postings.

        `appearance` lists the live term ids in order of first appearance in the corpus; None
        when term ids are already in that order."""
        df = np.diff(self._starts)
        total = int(self._doc_len.sum(dtype=np.int64))
        if total == 0:
            # BM25Okapi divides by the corpus' total length (or size): nothing can match anyway.
            self._norm = np.zeros(self.size)
            self._idf = np.zeros(len(df))
            self._upper = np.zeros(len(df))
            self._champions = {}
            self._dense_tf = {}
            self._stored = None
            return
        # The same expressions, in the same order, as BM25Okapi.get_scores, so results are equal.
        avgdl = total / self.size
        self._norm = np.asarray(K1 * (1 - B + B * self._doc_len / avgdl), np.float64)
        self._idf = self._compute_idf(df, appearance)
        self._upper = self._idf * self._largest_share(df)  # Also finds the champions.
        self._dense_tf = {}
        for term in np.flatnonzero(df >= max(1, math.ceil(self.size * DENSE_SHARE))).tolist():
            span = slice(int(self._starts[term]), int(self._starts[term + 1]))
            dense = np.zeros(self.size, self._tf.dtype)
            dense[self._doc[span]] = self._tf[span]
            self._dense_tf[term] = dense
        self._stored = None
        if self._doc.size <= STORED_WEIGHTS:
            # Each term's weights from its own idf: the same expression, element by element.
            terms = np.repeat(np.arange(len(df)), df)
            self._stored = _weight(self._idf[terms], self._tf, self._norm[self._doc])

    def _compute_idf(self, df: Int64Array, appearance: Int64Array | None) -> FloatArray:
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
        order = live if appearance is None else appearance
        average = float(np.cumsum(idf[order])[-1]) / len(live)
        idf[live[idf[live] < 0]] = EPSILON * average
        return idf

    def _largest_share(self, df: Int64Array) -> FloatArray:
        """Per term, the largest `tf * (k1 + 1) / (tf + norm)` over its documents: times the idf
        (a non-negative factor, so rounding keeps the order), its largest weight. Sets the
        champions of common terms: the documents with the largest shares."""
        largest = np.zeros(len(df))
        self._champions = {}
        live = np.flatnonzero(df > 0)
        # Terms in slices of about a million postings bound the temporary arrays.
        edges = np.searchsorted(self._starts[live], np.arange(0, self._doc.size, 1 << 20))
        begin = 0
        for end in [*edges.tolist()[1:], live.size]:
            if end <= begin:
                continue
            terms = live[begin:end]
            lo, hi = int(self._starts[terms[0]]), int(self._starts[terms[-1] + 1])
            share = self._share(lo, hi)
            largest[terms] = np.maximum.reduceat(share, self._starts[terms] - lo)
            for term in terms[df[terms] >= CHAMPION_MIN_DF].tolist():
                a, b = int(self._starts[term]) - lo, int(self._starts[term + 1]) - lo
                best = np.argpartition(share[a:b], b - a - CHAMPIONS)[b - a - CHAMPIONS :]
                self._champions[term] = np.sort(self._doc[lo + a + best])
            begin = end
        return largest

    def _share(self, lo: int, hi: int) -> FloatArray:
        tf = self._tf[lo:hi]
        share: FloatArray = tf * (K1 + 1) / (tf + self._norm[self._doc[lo:hi]])
        return share

    def _weights(self, term: int, positions: Int64Array | slice) -> FloatArray:
        """BM25Okapi's weight of `term` in the documents at these postings, its own arithmetic."""
        start = int(self._starts[term])
        if self._stored is not None:
            return self._stored[positions if isinstance(positions, slice) else positions + start]
        if isinstance(positions, slice):
            tf = self._tf[positions]
            doc = self._doc[positions]
        else:
            tf = self._tf[positions + start]
            doc = self._doc[positions + start]
        return _weight(self._idf[term], tf, self._norm[doc])

    def _lookup(self, term: int, docs: Int32Array) -> tuple[Int64Array, FloatArray]:
        """Where in sorted distinct `docs` the term occurs, and its weights there."""
        dense = self._dense_tf.get(term)
        if dense is not None:
            tf = dense[docs]
            hit = np.flatnonzero(tf)
            return hit, _weight(self._idf[term], tf[hit], self._norm[docs[hit]])
        postings = self._postings(term)
        if postings.size <= docs.size:
            at = np.searchsorted(docs, postings)
            hit = np.flatnonzero(docs[np.minimum(at, docs.size - 1)] == postings)
            return at[hit], self._weights(term, hit)
        at = np.searchsorted(postings, docs)
        hit = np.flatnonzero(postings[np.minimum(at, postings.size - 1)] == docs)
        return hit, self._weights(term, at[hit])

    def _postings(self, term: int) -> Int32Array:
        return self._doc[self._starts[term] : self._starts[term + 1]]

    def _term_list(self, query: Sequence[str]) -> list[int]:
        ids = self._term_ids
        return [ids[word] for word in query if word in ids]

    def document_frequency(self, term: str) -> int:
        """How many documents contain `term`."""
        at = self._term_ids.get(term)
        return 0 if at is None else int(self._starts[at + 1] - self._starts[at])

    def idf(self, term: str) -> float:
        """BM25Okapi's idf of `term` (0 for a term in no document)."""
        at = self._term_ids.get(term)
        return 0.0 if at is None or self._idf.size == 0 else float(self._idf[at])

    def scores(self, query: Sequence[str]) -> FloatArray:
        """A score per document, equal to `BM25Okapi.get_scores(query)`."""
        return self.scores_of(self._term_list(query))

    def scores_of(self, terms: list[int]) -> FloatArray:
        """Every document's score for a query given as term ids."""
        scores = np.zeros(self.size)
        if self._idf.size:
            for term in terms:
                span = slice(int(self._starts[term]), int(self._starts[term + 1]))
                # Documents without the term would add 0.0, which changes no score.
                scores[self._doc[span]] += self._weights(term, span)
        return scores

    def _exact(self, candidates: Int32Array, terms: list[int]) -> FloatArray:
        """Exact scores of sorted distinct `candidates`: each term's weight added in query order,
        as BM25Okapi adds them."""
        scores = np.zeros(candidates.size)
        if not candidates.size:
            return scores
        found: dict[int, tuple[Int64Array, FloatArray]] = {}
        for term in terms:
            if term not in found:
                found[term] = self._lookup(term, candidates)
            where, weights = found[term]
            scores[where] += weights
        return scores

    def top(self, query: Sequence[str], k: int, *, selective: bool = False) -> list[ScoredDocument]:
        """The `k` best documents with a positive score, best first, ties by document order.

        With `selective`, only documents containing a query term found in fewer than half of the
        documents are ranked: terms in half or more of them (whose idf BM25Okapi sets to zero or
        to its small epsilon floor) still add to scores but never bring a document in alone.
        """
        terms = self._term_list(query)
        if k <= 0 or not terms or self._idf.size == 0:
            return []
        distinct = list(dict.fromkeys(terms))
        df = {t: int(self._starts[t + 1] - self._starts[t]) for t in distinct}
        opens = {t for t in distinct if not selective or 2 * df[t] < self.size}
        if not opens:
            return []
        if any(self._idf[t] < 0 for t in distinct):
            # Only in tiny corpora where most terms are in most documents (the floor is then
            # negative): weights can be negative and bounds don't prune, so score everything.
            return self._top_dense(terms, k, 0.0, opens if selective else None)
        if self._stored is not None or (self.size <= DIRECT_SIZE and sum(df.values()) <= self.size):
            # A small corpus: scoring every document costs less than pruning would.
            return self._top_dense(terms, k, 0.0, opens if selective else None)
        repeats = {t: terms.count(t) for t in distinct}
        # Bound per distinct term: its largest weight times how often the query repeats it.
        bound = {t: float(self._upper[t]) * repeats[t] for t in distinct}
        dense_limit = max(int(self.size * DENSE_SHARE), 1)

        # Term at a time, rarest first, keeping partial scores (lower bounds) for a set of
        # candidates and raising the floor (a k-th best score is at least the k-th best partial).
        # Invariant: a document outside the set has none of the terms done so far, or cannot
        # reach the floor. A term's new documents join only if its weight there plus the bounds
        # of the terms left can reach the floor; candidates that no longer can are dropped.
        order = sorted(distinct, key=df.__getitem__)
        left = [*np.cumsum([bound[t] for t in order][::-1])[::-1].tolist(), 0.0]
        floor = 0.0
        if df[order[0]] > SEED_POSTINGS:
            # Only common terms: a first floor from the documents where each weighs most.
            seeded = _union([self._champions[t] for t in opens if t in self._champions])
            seed_scores = self._exact(seeded, terms)
            if seed_scores.size >= k:
                floor = float(np.partition(seed_scores, seed_scores.size - k)[seed_scores.size - k])
        docs = np.zeros(0, np.int32)
        partial = np.zeros(0)
        for i, term in enumerate(order):
            postings = self._postings(term)
            if docs.size:
                where, weights = self._lookup(term, docs)
                partial[where] += weights * repeats[term]
                floor = _raise(floor, partial, k)
            if term in opens and left[i] * (1 + BOUND_SLACK) >= floor:
                weights = self._all(term) * repeats[term]
                new = postings
                if floor > 0:
                    reach = (weights + left[i + 1]) * (1 + BOUND_SLACK) >= floor
                    new, weights = postings[reach], weights[reach]
                if docs.size:
                    at = np.searchsorted(docs, new)
                    fresh = docs[np.minimum(at, docs.size - 1)] != new
                    new, weights, at = new[fresh], weights[fresh], at[fresh]
                    if docs.size + new.size > dense_limit:
                        return self._top_dense(terms, k, floor, opens if selective else None)
                    docs, partial = np.insert(docs, at, new), np.insert(partial, at, weights)
                else:
                    if new.size > dense_limit:
                        return self._top_dense(terms, k, floor, opens if selective else None)
                    docs, partial = new, weights
                floor = _raise(floor, partial, k)
            if floor > 0:
                keep = (partial + left[i + 1]) * (1 + BOUND_SLACK) >= floor
                docs, partial = docs[keep], partial[keep]
        return _best(docs, self._exact(docs, terms), k, floor)

    def _all(self, term: int) -> FloatArray:
        span = slice(int(self._starts[term]), int(self._starts[term + 1]))
        return self._weights(term, span)

    def _top_dense(
        self, terms: list[int], k: int, floor: float, opens: set[int] | None
    ) -> list[ScoredDocument]:
        """Every document scored; with `opens`, only those containing one of those terms count."""
        scores = self.scores_of(terms)
        if opens is not None:
            eligible = np.zeros(self.size, bool)
            for term in opens:
                eligible[self._postings(term)] = True
            scores[~eligible] = 0.0
        matched = np.flatnonzero(scores >= floor) if floor > 0 else np.flatnonzero(scores > 0)
        return _best(matched.astype(np.int32), scores[matched], k, floor)

    def derive(self, documents: Sequence[int | Sequence[str]]) -> BM25Index:
        """The index of a new corpus in which each document is either the index of one of this
        index's documents, reused without counting it again, or a new list of tokens.

        Equal to `BM25Index` built from scratch over the resulting token lists. Each old document
        may be reused at most once.
        """
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
        old_term = np.repeat(np.arange(vocabulary, dtype=np.int64), np.diff(self._starts))
        new_doc = kept_at[self._doc]
        keep = new_doc >= 0
        term, doc = old_term[keep], new_doc[keep]
        tf, first = self._tf[keep].astype(np.int64), self._first[keep].astype(np.int64)
        del old_term, new_doc, keep

        term_ids = self._term_ids
        if not np.all(np.diff(kept_at[kept_old]) > 0):
            # Kept documents were reordered: sort the old postings by (term, document) again.
            order = np.argsort(term << 32 | doc)
            term, doc, tf, first = term[order], doc[order], tf[order], first[order]
        if fresh:
            # Count the new documents as one small corpus, then merge their postings in place.
            if any(t not in term_ids for t in chain.from_iterable(fresh)):
                term_ids = dict(term_ids)  # Copy on write: this index stays as it was.
            ids, fresh_lengths = encode_tokens(fresh, term_ids)
            pairs = _pairs(ids, fresh_lengths, 0)
            placed = np.array(fresh_at, np.int64)
            lengths[placed] = fresh_lengths
            f_doc = placed[pairs.doc]
            at = np.searchsorted(term << 32 | doc, pairs.term << 32 | f_doc)
            term = np.insert(term, at, pairs.term)
            doc = np.insert(doc, at, f_doc)
            tf = np.insert(tf, at, pairs.tf)
            first = np.insert(first, at, pairs.first)

        index = BM25Index.__new__(BM25Index)
        df = np.bincount(term, minlength=len(term_ids))
        starts = np.zeros(len(term_ids) + 1, np.int64)
        np.cumsum(df, out=starts[1:])
        index._set(
            term_ids,
            starts,
            doc.astype(np.int32),
            tf.astype(_smallest(int(tf.max(initial=0)))),
            first.astype(_smallest(int(first.max(initial=0)))),
            lengths,
        )
        # Order of first appearance: by the first document of each term, then its position there
        # (a term's first posting is its first document, postings being in document order).
        live = np.flatnonzero(df > 0)
        heads = starts[live]
        appearance = live[np.lexsort((first[heads], doc[heads]))]
        index._finish(appearance=appearance)
        return index

    def replace(self, index: int, tokens: Sequence[str]) -> BM25Index:
        """This corpus with document `index` replaced by `tokens`."""
        return self.derive([tokens if i == index else i for i in range(self.size)])

    def append(self, tokens: Sequence[str]) -> BM25Index:
        """This corpus with `tokens` added as the last document."""
        return self.derive([*range(self.size), tokens])

    def remove(self, index: int) -> BM25Index:
        """This corpus without document `index` (later documents move up by one)."""
        return self.derive([i for i in range(self.size) if i != index])

    def memory_bytes(self) -> int:
        """Bytes held by the index's arrays (the vocabulary dict not included)."""
        arrays: Iterable[npt.NDArray[np.generic]] = (
            self._starts, self._doc, self._tf, self._first, self._doc_len, self._norm,
            self._idf, self._upper, *self._champions.values(), *self._dense_tf.values(),
            *([] if self._stored is None else [self._stored]),
        )  # fmt: skip
        return sum(a.nbytes for a in arrays)


def _weight(idf: np.float64 | FloatArray, tf: UIntArray, norm: FloatArray) -> FloatArray:
    """`idf * (tf * (k1 + 1) / (tf + norm))`, BM25Okapi's expression, with fewer temporaries: the
    sums and products are the same IEEE operations (both commute exactly), so the same bits.
    `norm` is a fresh array (a gather) and is overwritten."""
    norm += tf
    weight = np.multiply(tf, K1 + 1, dtype=np.float64)
    weight /= norm
    weight *= idf
    return weight


def _raise(floor: float, partial: FloatArray, k: int) -> float:
    """The floor, or the k-th best partial score if higher (less a hair for rounding: partial
    sums are added in another order than the exact scores)."""
    if partial.size < k:
        return floor
    kth = float(np.partition(partial, partial.size - k)[partial.size - k])
    return max(floor, kth * (1 - BOUND_SLACK))


def _union(arrays: list[Int32Array]) -> Int32Array:
    """The sorted distinct document ids of several sorted arrays."""
    if not arrays:
        return np.zeros(0, np.int32)
    if len(arrays) == 1:
        return arrays[0]
    merged = np.concatenate(arrays)
    merged.sort()
    head = np.ones(merged.size, bool)
    np.not_equal(merged[1:], merged[:-1], out=head[1:])
    return merged[head]


def _best(candidates: Int32Array, scores: FloatArray, k: int, floor: float) -> list[ScoredDocument]:
    """The k best positive scores among candidates (ascending document order), ties by document."""
    keep = scores > 0 if floor <= 0 else scores >= floor
    candidates, scores = candidates[keep], scores[keep]
    if scores.size > k:
        # Keep every document that ties with the k-th best, then order them exactly.
        kth = np.partition(scores, scores.size - k)[scores.size - k]
        keep = scores >= kth
        candidates, scores = candidates[keep], scores[keep]
    order = np.lexsort((candidates, -scores))[:k]
    return [ScoredDocument(int(candidates[i]), float(scores[i])) for i in order]
