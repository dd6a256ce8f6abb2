"""A customer's unsent question, kept while `helpdesk serve` restarts: written as a browser
session's chat closes, taken (once) by the next session of the same conversation. A file per
conversation in the user's state directory, private to them: a draft is nobody else's (no
agent, no export sees it), and it lives seconds to minutes."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from chatbot.engine.question import MAX_QUESTION_CHARS
from chatbot.files import make_private_folders
from chatbot.text import is_blank, strip_control

MAX_DRAFT_CHARS = 2 * MAX_QUESTION_CHARS
"""The most of an unsent question kept: more than can be sent, so a customer told to shorten a
long paste still finds all of it; a file of more is not read as a draft."""


def drafts_for(database: str) -> Path:
    """The folder of one database's drafts (conversation ids are per database), named by a
    digest of its location: two servers' conversation 5 are two customers, and a URL may hold a
    password."""
    from chatbot.paths import drafts_dir

    return drafts_dir() / hashlib.sha256(database.encode()).hexdigest()[:16]


KEEP_S = 7 * 24 * 3600
"""How long an unsent question waits for its conversation to be opened again: a customer who
has not come back in a week will not miss it, and nothing piles up."""


def save_draft(folder: Path, conversation_id: int, text: str) -> None:
    """Keep `text` as the conversation's draft, private to this user (0600 in a 0700 folder),
    written whole or not at all. A blank one is no draft. Two tabs of one customer save as the
    server stops: the second keeps the first's words too (one file, joined), where it replaced
    them. Drafts older than `KEEP_S` go."""
    if is_blank(text):
        return  # Nothing to keep, and another tab's draft stays.
    path = folder / f"{conversation_id}.txt"
    make_private_folders(folder)
    with _locked(folder):
        earlier = _read(path)
        if earlier and earlier not in text:
            text = earlier if text in earlier else f"{earlier} {text}"
        temporary = folder / f".{conversation_id}.{secrets.token_hex(6)}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(text[:MAX_DRAFT_CHARS].encode("utf-8"))
            os.replace(temporary, path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        _prune(folder, keep=path)


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """The folder's drafts to this process alone (sessions end together when serve stops)."""
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _prune(folder: Path, *, keep: Path) -> None:
    cut = time.time() - KEEP_S
    for old in folder.glob("*.txt"):
        with contextlib.suppress(OSError):
            if old != keep and old.lstat().st_mtime < cut:
                old.unlink()


def _read(path: Path) -> str:
    """A draft file's text, as the question box may hold it; empty if there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:  # None kept (or not a file of ours: a link).
        return ""
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(4 * MAX_DRAFT_CHARS + 1)
    text = strip_control(data.decode("utf-8", "replace"), one_line=True)
    return "" if is_blank(text) else text[:MAX_DRAFT_CHARS]


def take_draft(folder: Path, conversation_id: int) -> str:
    """The conversation's draft, once: the file goes as it is read. Only ever text for the
    question box (control characters left out), never more than `MAX_DRAFT_CHARS`."""
    path = folder / f"{conversation_id}.txt"
    if not folder.is_dir():
        return ""
    with _locked(folder):
        text = _read(path)
        path.unlink(missing_ok=True)
    return text
