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
import zlib
from collections.abc import Mapping
from typing import Any

from chatbot.engine.models import Decision


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
