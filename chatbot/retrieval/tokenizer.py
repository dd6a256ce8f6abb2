"""Turn text into index terms for BM25, in English and in scripts written without spaces.

Text is NFKC-normalised (full-width letters become ASCII) and casefolded; words are runs of
Unicode letters and digits, with English stop words dropped, and reduced to their Snowball
(Porter 2) English stem so "bicycles" finds "bicycle" and "refunded" finds "refund". Chinese and
Japanese text has no spaces between words, so each run of those characters is indexed as single
characters plus overlapping character bigrams: a query for 退款 then matches the bigram and its
characters without a dictionary.

Index builds tokenize whole corpora, so the work per token is kept in C: ASCII text (most English
passages) is split with `str.translate` and `str.split` instead of a Unicode regex, and stop-word
removal, stemming and CJK grams are computed once per distinct token and cached.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from itertools import chain, count, islice

import numpy as np
import numpy.typing as npt
import Stemmer  # PyStemmer: the Snowball stemmers compiled to C, the ones bm25s uses.

# Common English function words that carry no topic: matching on them only adds noise.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves s t don
    """.split()
)

# Han ideographs (with extensions and compatibility forms), kana and CJK punctuation-free ranges.
_CJK_RANGES = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\U00020000-\U0002fa1f"  # Extensions B-F and supplements
)
_TOKEN = re.compile(rf"[{_CJK_RANGES}]+|[^\W_{_CJK_RANGES}]+")
_CJK = re.compile(rf"[{_CJK_RANGES}]")
# In ASCII, `[^\W_]` is exactly the letters and digits: everything else separates words.
_ASCII_SEPARATORS = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalnum()})

# Distinct raw tokens whose terms are remembered; past this the cache starts again, so a
# long-running app that sees endless new words cannot grow without bound.
CACHE_SIZE = 1 << 18

IdArray = npt.NDArray[np.int32]
LengthArray = npt.NDArray[np.int64]
Int64Array = npt.NDArray[np.int64]


def raw_tokens(text: str) -> list[str]:
    """The words and CJK runs of `text`, normalised and casefolded, before stop words and stems."""
    if text.isascii():
        # NFKC leaves ASCII unchanged and casefold is lower(): the fast path gives the same words.
        return text.lower().translate(_ASCII_SEPARATORS).split()
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())


class Analyzer:
    """Text to index terms, with or without English stemming; one per setting, shared."""

    def __init__(self, *, stem: bool = True) -> None:
        self.stem = stem
        self._stemmer = Stemmer.Stemmer("english") if stem else None
        self._cache: dict[str, tuple[str, ...]] = {}

    def terms_of(self, token: str) -> tuple[str, ...]:
        """The index terms one raw token becomes: nothing for a stop word, its stem, or a CJK
        run's characters and then its bigrams."""
        cached = self._cache.get(token)
        if cached is not None:
            return cached
        if _CJK.match(token):
            # Runs of CJK text are mostly distinct (a clause each): not worth remembering.
            return (*token, *(token[i : i + 2] for i in range(len(token) - 1)))
        terms: tuple[str, ...]
        if token in STOP_WORDS:
            terms = ()
        elif self._stemmer is not None:
            terms = (self._stemmer.stemWord(token),)
        else:
            terms = (token,)
        if len(self._cache) >= CACHE_SIZE:
            self._cache.clear()
        self._cache[token] = terms
        return terms

    def terms_of_many(self, tokens: list[str]) -> list[tuple[str, ...]]:
        """`[terms_of(t) for t in tokens]` for an index build's new tokens, stemmed in one call
        (PyStemmer's `stemWords`), without filling the query-time cache."""
        expansions: list[tuple[str, ...]] = []
        stem: list[int] = []  # where words to stem are in `expansions`
        for token in tokens:
            if _CJK.match(token):
                expansions.append((*token, *(token[i : i + 2] for i in range(len(token) - 1))))
            elif token in STOP_WORDS:
                expansions.append(())
            else:
                stem.append(len(expansions))
                expansions.append((token,))
        if self._stemmer is not None and stem:
            stems = self._stemmer.stemWords([expansions[i][0] for i in stem])
            for i, term in zip(stem, stems, strict=True):
                expansions[i] = (term,)
        return expansions

    def tokenize(self, text: str) -> list[str]:
        """Index terms of `text`, in order, repeated as often as they occur."""
        return list(chain.from_iterable(map(self.terms_of, raw_tokens(text))))

    def words(self, text: str) -> list[tuple[str, tuple[str, ...]]]:
        """Each distinct word of `text` that yields terms, with its terms, in order of appearance:
        what a person can be told about how their words were matched."""
        seen: dict[str, tuple[str, ...]] = {}
        for token in raw_tokens(text):
            if token not in seen and (terms := self.terms_of(token)):
                seen[token] = terms
        return list(seen.items())

    def encoder(self, term_ids: dict[str, int]) -> Encoder:
        """An encoder of texts into ids of `term_ids` (extended as new terms appear)."""
        return Encoder(self, term_ids)


# The fast path for ASCII in bytes: lowercase letters and digits stay, everything else splits.
_ASCII_BYTES = bytes(c if chr(c).isalnum() else 32 for c in range(128)).lower() + bytes(
    range(128, 256)
)


# The batch path for ASCII reads a token's first 2 * WINDOW bytes as two 64-bit words, masked
# to the token's length; sorts tokens by a HASH_BITS-bit hash of them and their position among
# the chunk's tokens (INDEX_BITS, so up to 16.7 million tokens a chunk) packed in one word.
WINDOW = 8
HASH_BITS = 40
INDEX_BITS = 64 - HASH_BITS
# A token the ASCII path has seen: its hash (the table is sorted by it), its 16 bytes, its raw id.
_KNOWN = np.dtype([("hash", np.uint64), ("low", np.uint64), ("high", np.uint64), ("raw", np.int64)])
_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(WINDOW + 1)], np.uint64)


def _scatter(values: Int64Array, positions: Int64Array) -> Int64Array:
    """`out[positions] = values` into a new array."""
    out = np.empty(values.size, np.int64)
    out[positions] = values
    return out


def _raw_keys(text: str) -> list[bytes] | list[str]:
    """`raw_tokens`, as bytes for ASCII text (cheaper to split); only ever used as dict keys."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_BYTES).split()
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())


class Encoder:
    """Texts to term ids for one index build, remembering across calls what each distinct raw
    token becomes, so stop words, stems and CJK grams are worked out once per distinct token and
    each token costs a split and a dict lookup."""

    def __init__(self, analyzer: Analyzer, term_ids: dict[str, int]) -> None:
        self._analyzer = analyzer
        self._term_ids = term_ids
        self._raw_ids: dict[bytes | str, int] = {}
        self._sizes = np.zeros(0, np.int64)  # per raw id: how many terms it becomes
        self._starts = np.zeros(0, np.int64)  # per raw id: where its terms start in _terms
        self._terms = np.zeros(0, np.int32)  # term ids of every raw id, concatenated
        self._known = np.zeros(0, _KNOWN)  # raw ids of ASCII tokens by hash (see _ascii_raw)

    def encode(self, texts: Sequence[str]) -> tuple[IdArray, LengthArray]:
        """The term ids of every term of `texts`, concatenated, and each text's number of terms.

        Terms not yet known are added to the term ids, numbered in order of first appearance,
        exactly as encoding `[analyzer.tokenize(t) for t in texts]` would number them.
        """
        found = self._ascii_raw(texts)
        raw, raw_lengths = found if found is not None else self._unicode_raw(texts)
        total = raw.size
        sizes = self._sizes[raw]
        doc_of_token = np.repeat(np.arange(len(texts), dtype=np.int32), raw_lengths)
        if self._sizes.size == 0 or int(self._sizes.max()) <= 1:
            # One term or none per token (English): a gather and a filter.
            kept = sizes == 1
            ids = self._terms[self._starts[raw[kept]]]
            lengths = np.bincount(doc_of_token[kept], minlength=len(texts)).astype(np.int64)
            return ids, lengths
        # Some tokens are CJK runs of several terms: repeat each token's slice of the terms.
        offsets = np.zeros(total, np.int64)
        np.cumsum(sizes[:-1], out=offsets[1:])
        out = int(sizes.sum())
        positions = np.repeat(self._starts[raw] - offsets, sizes) + np.arange(out)
        lengths = np.bincount(doc_of_token, weights=sizes, minlength=len(texts))
        return self._terms[positions], lengths.astype(np.int64)

    def _unicode_raw(self, texts: Sequence[str]) -> tuple[Int64Array, LengthArray]:
        """Raw ids of every raw token of `texts` (any script), and each text's number of them."""
        joined = "\x00".join(texts)
        documents: list[list[bytes] | list[str]]
        if joined.count("\x00") == max(len(texts) - 1, 0):
            # One NFKC and casefold for the chunk: U+0000 is stable under both (it never
            # composes or changes), so the pieces are each text's own normal form.
            pieces = unicodedata.normalize("NFKC", joined).casefold().split("\x00")
            documents = list(map(_TOKEN.findall, pieces)) if texts else []
        else:
            documents = [_raw_keys(text) for text in texts]
        raw_lengths = np.fromiter(map(len, documents), np.int64, count=len(documents))
        total = int(raw_lengths.sum())
        tokens: Iterable[bytes | str] = chain.from_iterable(documents)
        return self._number(tokens, total), raw_lengths

    def _ascii_raw(self, texts: Sequence[str]) -> tuple[Int64Array, LengthArray] | None:
        """`_unicode_raw` for texts that are all ASCII (None otherwise, or when the chunk is too
        big for it), without a Python object per token: the texts are split as one byte array
        in numpy, tokens are grouped by a hash of their bytes, the grouping is checked byte for
        byte, and only the chunk's distinct tokens become `bytes` to look up. The same words as
        `raw_tokens`, numbered the same way."""
        joined = " ".join(texts)
        if not joined.isascii():
            return None
        # Lowercase letters and digits; every other byte a space. Padded with zeros, so the
        # 16 bytes read from any token's start stay in bounds.
        data = joined.encode("ascii").translate(_ASCII_BYTES)
        size = len(data)
        padded = data + bytes(2 * WINDOW)
        letters = np.frombuffer(padded, np.uint8)
        word = np.zeros(size + 2, np.bool_)
        np.not_equal(letters[:size], 32, out=word[1:-1])
        edges = np.flatnonzero(word[1:] != word[:-1])
        starts, ends = edges[0::2], edges[1::2]
        count_ = starts.size
        if count_ >= 1 << INDEX_BITS:
            return None
        lengths = ends - starts
        # Where each text starts in `joined` (one space after each): which text a token is in.
        text_starts = np.zeros(len(texts), np.int64)
        np.cumsum(np.fromiter(map(len, texts), np.int64, len(texts))[:-1] + 1, out=text_starts[1:])
        raw_lengths = np.diff(np.searchsorted(starts, text_starts), append=count_)
        # A token's first 16 bytes as two little-endian words (unaligned reads of the buffer);
        # bytes past its end masked off. Letters are never zero, so the words are the token.
        windows = np.ndarray((size + WINDOW,), np.dtype("<u8"), padded, 0, (1,))
        low = windows[starts] & _MASKS[np.minimum(lengths, WINDOW)]
        high = windows[starts + WINDOW] & _MASKS[np.clip(lengths - WINDOW, 0, WINDOW)]
        mixed = low * np.uint64(0x9E3779B97F4A7C15)
        mixed ^= mixed >> np.uint64(29)
        mixed += high * np.uint64(0xBF58476D1CE4E5B9)
        mixed ^= mixed >> np.uint64(32)
        mixed *= np.uint64(0x94D049BB133111EB)
        # Sort keys: a hash in the high bits (its top bit clear), the token's position below;
        # longer tokens (rare) are numbered by their bytes instead, with the top bit set.
        keys = mixed >> np.uint64(64 - HASH_BITS + 1) << np.uint64(INDEX_BITS)
        long = np.flatnonzero(lengths > 2 * WINDOW)
        if long.size:
            seen: dict[bytes, int] = {}
            numbers = [
                seen.setdefault(data[a:b], len(seen))
                for a, b in zip(starts[long].tolist(), ends[long].tolist(), strict=True)
            ]
            group = np.uint64(1 << (HASH_BITS - 1)) | np.array(numbers, np.uint64)
            keys[long] = group << np.uint64(INDEX_BITS)
        keys |= np.arange(count_, dtype=np.uint64)
        keys.sort()
        position = (keys & np.uint64((1 << INDEX_BITS) - 1)).astype(np.int64)
        keys >>= np.uint64(INDEX_BITS)
        head = np.ones(count_, np.bool_)
        np.not_equal(keys[1:], keys[:-1], out=head[1:])
        # Within a group positions ascend: its head is the token's first occurrence.
        groups = np.cumsum(head) - 1
        first = position[head]
        # Every token must equal its group's first (a hash collision would break this): if one
        # does not, the chunk takes the token-by-token path. Groups are contiguous in sorted
        # order, so each token is compared with the one before it unless it heads a group: two
        # gathers of the tokens' words instead of four.
        for words in (low, high):
            ordered = words[position]
            if not np.all((ordered[1:] == ordered[:-1]) | head[1:]):
                return None
        # Distinct tokens seen in earlier chunks are found by hash in a sorted table, checked by
        # their words; the others go through the dict, in order of first appearance.
        hashes = keys[head]
        numbered = np.full(hashes.size, -1, np.int64)
        known = self._known
        if known.size:
            at = np.minimum(np.searchsorted(known["hash"], hashes), known.size - 1)
            entry = known[at]
            hit = np.flatnonzero(
                (entry["hash"] == hashes)
                & (entry["low"] == low[first])
                & (entry["high"] == high[first])
                & (hashes < np.uint64(1 << (HASH_BITS - 1)))
            )
            numbered[hit] = entry["raw"][hit]
        unknown = np.flatnonzero(numbered < 0)
        unknown = unknown[np.argsort(first[unknown])]
        at = first[unknown]
        tokens = map(data.__getitem__, map(slice, starts[at].tolist(), ends[at].tolist()))
        numbered[unknown] = self._number(tokens, unknown.size)
        short = unknown[hashes[unknown] < np.uint64(1 << (HASH_BITS - 1))]
        if short.size:
            added = np.empty(short.size, _KNOWN)
            added["hash"] = hashes[short]
            added["low"] = low[first[short]]
            added["high"] = high[first[short]]
            added["raw"] = numbered[short]
            merged = np.concatenate([known, added])
            self._known = merged[np.argsort(merged["hash"], kind="stable")]
        return _scatter(numbered[groups], position), raw_lengths

    def _number(self, tokens: Iterable[bytes | str], total: int) -> Int64Array:
        """Raw ids of `total` raw tokens, giving ids to unseen ones (in order) and learning what
        terms they become."""
        raw_ids = self._raw_ids
        base = len(raw_ids)
        # A raw token seen for the first time gets a provisional id (base plus its position),
        # made consecutive below: raw ids stay in first-appearance order.
        raw = np.fromiter(map(raw_ids.setdefault, tokens, count(base)), np.int64, total)
        if len(raw_ids) > base:
            added = list(islice(raw_ids, base, None))
            provisional = np.fromiter(map(raw_ids.__getitem__, added), np.int64, len(added))
            lookup = np.empty(base + total, np.int64)
            lookup[:base] = np.arange(base)
            lookup[provisional] = np.arange(base, base + len(added))
            raw = lookup[raw]
            del lookup
            raw_ids.update(zip(added, range(base, base + len(added)), strict=True))
            self._learn(added)
        return raw

    def _learn(self, added: list[bytes | str]) -> None:
        """Work out the terms of newly seen raw tokens, in order (which keeps term ids in order
        of first appearance)."""
        tokens = [token.decode("ascii") if isinstance(token, bytes) else token for token in added]
        is_cjk = np.fromiter(map(bool, map(_CJK.match, tokens)), np.bool_, len(tokens))
        sizes = np.zeros(len(tokens), np.int64)
        cjk = np.flatnonzero(is_cjk)
        runs = [tokens[i] for i in cjk.tolist()]
        run_lengths = np.fromiter(map(len, runs), np.int64, len(runs))
        sizes[cjk] = 2 * run_lengths - 1  # its characters, then its bigrams
        words = np.flatnonzero(~is_cjk)
        expansions = self._analyzer.terms_of_many([tokens[i] for i in words.tolist()])
        sizes[words] = np.fromiter(map(len, expansions), np.int64, len(expansions))
        starts = np.zeros(len(tokens), np.int64)
        np.cumsum(sizes[:-1], out=starts[1:])
        # Every term of every token in order, as an integer key: a CJK character is its code
        # point, a bigram (first << 21) | second (always >= 2**21), a word -1 - its place in
        # `others`. Only the distinct keys become strings to look up.
        keys = np.empty(int(sizes.sum()), np.int64)
        others: dict[str, int] = {}
        single = words[sizes[words] == 1]
        keys[starts[single]] = [
            -1 - others.setdefault(e[0], len(others)) for e in expansions if len(e) == 1
        ]
        if runs:
            points = np.frombuffer("".join(runs).encode("utf-32-le"), np.uint32).astype(np.int64)
            run_of = np.repeat(np.arange(len(runs)), run_lengths)
            offsets = np.zeros(len(runs), np.int64)
            np.cumsum(run_lengths[:-1], out=offsets[1:])
            within = np.arange(points.size) - offsets[run_of]
            at = starts[cjk][run_of] + within
            keys[at] = points
            pair = np.flatnonzero(within < run_lengths[run_of] - 1)
            keys[at[pair] + run_lengths[run_of[pair]]] = (points[pair] << 21) | points[pair + 1]
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        order = np.argsort(first)
        ordered = keys[first[order]]
        distinct = np.empty(ordered.size, object)
        word = ordered < 0
        distinct[word] = np.array(list(others), object)[-1 - ordered[word]]
        grams = ordered[~word]
        if grams.size:
            # CJK terms as UTF-32 pairs (a lone character padded with a zero, which numpy's
            # fixed-width strings drop): one conversion instead of a chr() per character.
            pairs = np.zeros((grams.size, 2), "<u4")
            bigram = grams >= 1 << 21
            pairs[:, 0] = np.where(bigram, grams >> 21, grams)
            pairs[:, 1] = np.where(bigram, grams & 0x1FFFFF, 0)
            distinct[~word] = np.frombuffer(pairs.tobytes(), "<U2").astype(object)
        numbered = np.empty(order.size, np.int32)
        numbered[order] = _ids(distinct.tolist(), ordered.size, self._term_ids)
        self._sizes = np.concatenate([self._sizes, sizes])
        self._starts = np.concatenate([self._starts, starts + self._terms.size])
        self._terms = np.concatenate([self._terms, numbered[inverse.reshape(-1)]])


def _ids(terms: Iterable[str], size: int, term_ids: dict[str, int]) -> IdArray:
    """Ids of `size` terms (an iterable of str), adding unseen ones to `term_ids` numbered in
    order of first appearance."""
    base = len(term_ids)
    # A term seen for the first time gets a provisional id (base plus its position), made
    # consecutive below; everything stays in C-level loops.
    ids = np.fromiter(map(term_ids.setdefault, terms, count(base)), np.int64, size)
    if len(term_ids) > base:
        added = list(islice(term_ids, base, None))
        provisional = np.fromiter(map(term_ids.__getitem__, added), np.int64, len(added))
        lookup = np.empty(base + size, np.int64)
        lookup[:base] = np.arange(base)
        lookup[provisional] = np.arange(base, base + len(added))
        ids = lookup[ids]
        term_ids.update(zip(added, range(base, base + len(added)), strict=True))
    return ids.astype(np.int32)


def encode_tokens(
    documents: Sequence[Sequence[str]], term_ids: dict[str, int]
) -> tuple[IdArray, LengthArray]:
    """`Analyzer.encode` for documents that are already lists of terms."""
    lengths = np.fromiter(map(len, documents), np.int64, count=len(documents))
    return _ids(chain.from_iterable(documents), int(lengths.sum()), term_ids), lengths


STEMMED = Analyzer(stem=True)
EXACT_WORDS = Analyzer(stem=False)


def analyzer(*, stem: bool) -> Analyzer:
    """The shared analyzer for a setting (each keeps its own cache of token terms)."""
    return STEMMED if stem else EXACT_WORDS


def tokenize(text: str, *, stem: bool = True) -> list[str]:
    """Index terms of `text`, in order, repeated as often as they occur."""
    return analyzer(stem=stem).tokenize(text)
