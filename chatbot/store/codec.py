"""Decisions stored compactly, for any backend: each distinct passage text once, by digest.

A decision copies the text of every candidate it judged; stored as is, those copies were most of
the database. The stored form is the decision's own JSON dump with each `text` of the answer and
the candidates replaced by `text_digest`, so fields added to `Decision` later are stored without a
change here, and the full decision, texts included, comes back on read. That body is stored
deflated (`pack`): its keys, passage ids and digests repeat from one decision to the next, and it
was still three quarters of the database (issue 13). Bodies stored as JSON text before are read
as they are.
"""

from __future__ import annotations

import hashlib
import json
import struct
import unicodedata
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chatbot.desk.models import StoredDecision
from chatbot.engine.models import Candidate, Decision


def digest(text: str) -> str:
    """The content address of a passage text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    answer = body.get("answer")
    return [*([answer] if isinstance(answer, dict) else []), *body.get("candidates", [])]


def compact(decision: Decision) -> tuple[dict[str, Any], dict[str, str]]:
    """The decision's stored body, and the texts it refers to by digest."""
    body = decision.model_dump(mode="json")
    texts: dict[str, str] = {}
    for part in _parts(body):
        text = part.pop("text")
        key = digest(text)
        texts[key] = text
        part["text_digest"] = key
    return body, texts


def digests(body: Mapping[str, Any]) -> set[str]:
    """The passage texts a stored body refers to."""
    return {part["text_digest"] for part in _parts(dict(body)) if "text_digest" in part}


def expand(body: dict[str, Any], texts: Mapping[str, str]) -> Decision:
    """The full decision from its stored body and the texts it refers to."""
    for part in _parts(body):
        if "text_digest" in part:
            part["text"] = texts[part.pop("text_digest")]
    return Decision.model_validate(body)


def pack(body: Mapping[str, Any]) -> bytes:
    """A compact body as stored: its JSON without spaces, deflated (about 2.5 times smaller)."""
    return zlib.compress(json.dumps(body, separators=(",", ":")).encode("utf-8"), 6)


def unpack(stored: str | bytes) -> dict[str, Any]:
    """A compact body from what is stored: deflated bytes, or JSON text as stored before."""
    if isinstance(stored, bytes):
        stored = zlib.decompress(stored).decode("utf-8")
    body: dict[str, Any] = json.loads(stored)
    return body


# -- the positional body (issue 13) ---------------------------------------------------------------
#
# Deflated JSON was still half of the database: key names, passage ids, titles and 64-character
# digests in every decision. The positional body keeps only what differs from one decision to the
# next: each candidate is a passage revision (a small integer naming its id, title and text,
# stored once in the database), its scores as 8-byte floats (so they read back exactly) and its
# error if any; the answer is the index of its candidate. What the reader has at hand is left out
# and passed back in: the text of the message the decision is for (its question, and the words of
# the retrieval trace, as places in it) and the latency (a column of its own). A decision the
# format cannot hold exactly (a field added to `Decision` later, an answer that is no candidate)
# is stored as deflated JSON instead: `encode` checks every body by decoding it.

POSITIONAL = 0x02
"""The first byte of a positional body; a deflated one starts with 0x78, a JSON one is text."""

REASONS = (
    "low-score", "no-passages", "not-judged", "valen-error", "customer-asked", "not-helpful",
    "bot-failed",
)  # fmt: skip
"""Reasons by their number in a positional body: append only, never reorder."""

ERRORS = ("replay-miss: no recorded answer for this question and passage",)
"""Whole error lines our own code writes again and again (`chatbot.valen.judge`), by number in a
positional body: append only, never reorder. Any other error is stored as text, without its
`error_kind` prefix."""

_HAS_QUESTION, _HAS_ANSWER, _HAS_REASON, _HAS_RETRIEVAL = 1, 2, 4, 8
_HAS_PROBABILITY, _HAS_ERROR, _HAS_ERROR_KIND, _KNOWN_ERROR, _KIND_PREFIX = 1, 2, 4, 8, 16
_DOUBLE = struct.Struct("<d")
_MILLI = 1000
"""A threshold that is a whole number of thousandths is stored as that number."""


@dataclass(frozen=True)
class Revision:
    """A passage as the bot judged it: its id, title and the digest of its text."""

    passage_id: str
    title: str
    digest: str


def revisions(decision: Decision) -> tuple[list[Revision], dict[str, str]]:
    """The passage revisions a decision's candidates refer to, and their texts by digest."""
    found: list[Revision] = []
    texts: dict[str, str] = {}
    for candidate in decision.candidates:
        key = digest(candidate.text)
        texts[key] = candidate.text
        revision = Revision(candidate.id, candidate.title, key)
        if revision not in found:
            found.append(revision)
    return found, texts


def _folded(question: str) -> str:
    """The question as the retriever reads its words (`chatbot.retrieval.tokenizer`)."""
    return unicodedata.normalize("NFKC", question).casefold()


class _Writer:
    def __init__(self) -> None:
        self.out = bytearray()

    def uint(self, value: int) -> None:
        while value >= 0x80:
            self.out.append(value & 0x7F | 0x80)
            value >>= 7
        self.out.append(value)

    def double(self, value: float) -> None:
        self.out += _DOUBLE.pack(value)

    def text(self, value: str) -> None:
        data = value.encode("utf-8")
        self.uint(len(data))
        self.out += data


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def byte(self) -> int:
        value = self.data[self.at]
        self.at += 1
        return value

    def uint(self) -> int:
        value = shift = 0
        while True:
            part = self.byte()
            value |= (part & 0x7F) << shift
            if part < 0x80:
                return value
            shift += 7

    def double(self) -> float:
        (value,) = _DOUBLE.unpack_from(self.data, self.at)
        self.at += 8
        return float(value)

    def text(self) -> str:
        size = self.uint()
        value = self.data[self.at : self.at + size].decode("utf-8")
        self.at += size
        return value


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _candidate(out: _Writer, candidate: Candidate, number: int) -> None:
    error, kind = candidate.error, candidate.error_kind
    flags = (
        (_HAS_PROBABILITY if candidate.probability is not None else 0)
        | (_HAS_ERROR if error is not None else 0)
        | (_HAS_ERROR_KIND if kind is not None else 0)
    )
    if error is not None and error in ERRORS:
        flags |= _KNOWN_ERROR
    elif error is not None and kind and error.startswith(kind):
        flags |= _KIND_PREFIX  # `ValenError.describe()` lines start with their kind.
    out.uint(number)
    out.double(candidate.bm25)
    out.uint(flags)
    if candidate.probability is not None:
        out.double(candidate.probability)
    if flags & _KNOWN_ERROR:
        out.uint(ERRORS.index(error or ""))
    elif error is not None:
        out.text(error[len(kind) :] if flags & _KIND_PREFIX and kind else error)
    if kind is not None:
        out.text(kind)


def encode(decision: Decision, question: str, revision_ids: Mapping[Revision, int]) -> bytes | None:
    """The positional body of `decision`, asked as `question`, its candidates' passages numbered
    by `revision_ids`; None when the format cannot hold it exactly (store it as `pack` does)."""
    if decision.reason is not None and decision.reason.value not in REASONS:
        return None
    keys = [Revision(c.id, c.title, digest(c.text)) for c in decision.candidates]
    answer_at = None
    if decision.answer is not None:
        answer_at = next(
            (i for i, c in enumerate(decision.candidates) if c.id == decision.answer.id), None
        )
        if answer_at is None:
            return None
    out = _Writer()
    retrieval = decision.retrieval
    flags = (
        (_HAS_QUESTION if decision.question != question else 0)
        | (_HAS_ANSWER if answer_at is not None else 0)
        | (_HAS_REASON if decision.reason is not None else 0)
        | (_HAS_RETRIEVAL if retrieval is not None else 0)
    )
    out.out += bytes((POSITIONAL, flags))
    if flags & _HAS_QUESTION:
        out.text(decision.question)
    if decision.reason is not None:
        out.uint(REASONS.index(decision.reason.value))
    milli = round(decision.threshold * _MILLI)
    if 0 <= milli < 2**20 and milli / _MILLI == decision.threshold:
        out.uint(milli + 1)
    else:
        out.uint(0)
        out.double(decision.threshold)
    out.uint(len(keys))
    for candidate, key in zip(decision.candidates, keys, strict=True):
        if key not in revision_ids:
            return None
        _candidate(out, candidate, revision_ids[key])
    if answer_at is not None:
        out.uint(answer_at)
    if retrieval is not None:
        folded = _folded(decision.question)
        out.uint(retrieval.passages)
        out.uint(len(retrieval.terms))
        for term in retrieval.terms:
            # A word is mostly a place in the question, its term mostly the word's stem.
            at = folded.find(term.word) if term.word else -1
            if at >= 0:
                out.uint(at + 1)
                out.uint(len(term.word))
            else:
                out.uint(0)
                out.text(term.word)
            shared = _common_prefix(term.word, term.term)
            out.uint(shared)
            out.text(term.term[shared:])
            out.uint(term.passages * 2 + term.synonym)
    body = bytes(out.out)
    try:
        texts = {key.digest: c.text for c, key in zip(decision.candidates, keys, strict=True)}
        numbered = {number: key for key, number in revision_ids.items()}
        back = decode(
            body,
            question=question,
            latency_ms=decision.latency_ms,
            revisions=numbered,
            texts=texts,
        )
    except (KeyError, IndexError, ValueError, struct.error):
        return None
    return body if back == decision else None


def is_positional(stored: str | bytes) -> bool:
    return isinstance(stored, bytes) and stored[:1] == bytes((POSITIONAL,))


def revision_refs(stored: bytes) -> set[int]:
    """The passage revisions a positional body refers to."""
    return {c[0] for c in _read(stored, "")["candidates"]}


def _read(stored: bytes, question: str) -> dict[str, Any]:
    reader = _Reader(stored)
    reader.byte()
    flags = reader.byte()
    if flags & _HAS_QUESTION:
        question = reader.text()
    reason = REASONS[reader.uint()] if flags & _HAS_REASON else None
    milli = reader.uint()
    threshold = (milli - 1) / _MILLI if milli else reader.double()
    candidates = []
    for _ in range(reader.uint()):
        revision, bm25, cflags = reader.uint(), reader.double(), reader.uint()
        probability = reader.double() if cflags & _HAS_PROBABILITY else None
        error = None
        if cflags & _KNOWN_ERROR:
            error = ERRORS[reader.uint()]
        elif cflags & _HAS_ERROR:
            error = reader.text()
        error_kind = reader.text() if cflags & _HAS_ERROR_KIND else None
        if cflags & _KIND_PREFIX:
            error = f"{error_kind}{error}"
        candidates.append((revision, bm25, probability, error, error_kind))
    answer = reader.uint() if flags & _HAS_ANSWER else None
    retrieval = None
    if flags & _HAS_RETRIEVAL:
        folded = _folded(question)
        passages = reader.uint()
        terms = []
        for _ in range(reader.uint()):
            at = reader.uint()
            word = folded[at - 1 : at - 1 + reader.uint()] if at else reader.text()
            shared = reader.uint()
            term = word[:shared] + reader.text()
            count = reader.uint()
            terms.append(
                {"word": word, "term": term, "passages": count >> 1, "synonym": bool(count & 1)}
            )
        retrieval = {"passages": passages, "terms": terms}
    if reader.at != len(stored):
        raise ValueError("trailing bytes after a positional decision body")
    return {
        "question": question,
        "reason": reason,
        "threshold": threshold,
        "candidates": candidates,
        "answer": answer,
        "retrieval": retrieval,
    }


def decode(
    stored: bytes,
    *,
    question: str,
    latency_ms: float,
    revisions: Mapping[int, Revision],
    texts: Mapping[str, str],
) -> Decision:
    """The full decision from a positional body, the text of the message it was for, its
    latency, and the passage revisions and texts it refers to."""
    body = _read(stored, question)
    candidates = []
    for number, bm25, probability, error, error_kind in body["candidates"]:
        revision = revisions[number]
        candidates.append(
            {
                "id": revision.passage_id,
                "title": revision.title,
                "text": texts[revision.digest],
                "bm25": bm25,
                "probability": probability,
                "error": error,
                "error_kind": error_kind,
            }
        )
    answer = None
    if body["answer"] is not None:
        chosen = candidates[body["answer"]]
        answer = {k: chosen[k] for k in ("id", "title", "text", "probability")}
    return Decision.model_validate(
        {
            "question": body["question"],
            "answer": answer,
            "reason": body["reason"],
            "candidates": candidates,
            "threshold": body["threshold"],
            "latency_ms": latency_ms,
            "retrieval": body["retrieval"],
        }
    )


def unjudged(stored: str | bytes) -> dict[str, int]:
    """Passages a stored body (of any format) left unjudged, by error kind."""
    counts: dict[str, int] = {}
    if is_positional(stored):
        assert isinstance(stored, bytes)
        kinds = [c[4] for c in _read(stored, "")["candidates"] if c[2] is None]
    else:
        candidates = unpack(stored).get("candidates")
        kinds = [
            c.get("error_kind")
            for c in (candidates if isinstance(candidates, list) else [])
            if isinstance(c, dict) and c.get("probability") is None
        ]
    for kind in kinds:
        counts[str(kind or "unknown")] = counts.get(str(kind or "unknown"), 0) + 1
    return counts


# -- reading stored decisions back, on any backend ------------------------------------------------

DecisionRow = tuple[int, int, int, str | None, datetime, "bytes | dict[str, Any]", str, float]
"""id, conversation, message, worker, made at, the body (positional bytes, or a compact body
already unpacked), the text of the message it was for, latency."""


def stored_decisions(
    rows: Sequence[DecisionRow],
    *,
    revisions_of: Callable[[list[int]], Iterable[tuple[int, str, str, str]]],
    texts_of: Callable[[list[str]], Iterable[tuple[str, str]]],
) -> list[StoredDecision]:
    """The decisions of `rows` in full. The passage revisions (id, passage id, title, digest)
    and texts (digest, text) they refer to are fetched once for all of them, by the backend's
    `revisions_of` and `texts_of`; neither is called with nothing to fetch."""
    bodies = [row[5] for row in rows]
    numbers = sorted(set().union(*(revision_refs(b) for b in bodies if isinstance(b, bytes))))
    revisions = {
        int(id_): Revision(passage_id, title, key)
        for id_, passage_id, title, key in (revisions_of(numbers) if numbers else ())
    }
    wanted = sorted(
        set().union(*(digests(body) for body in bodies if isinstance(body, dict)))
        | {revision.digest for revision in revisions.values()}
    )
    texts = dict(texts_of(wanted)) if wanted else {}
    return [
        StoredDecision(
            id=id_,
            conversation_id=conversation_id,
            message_id=message_id,
            worker=worker,
            created_at=at,
            decision=expand(body, texts)
            if isinstance(body, dict)
            else decode(
                body, question=question, latency_ms=latency, revisions=revisions, texts=texts
            ),
        )
        for id_, conversation_id, message_id, worker, at, body, question, latency in rows
    ]
