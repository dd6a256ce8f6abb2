"""A customer's unsent question, kept while `helpdesk serve` restarts: written as a browser
session's chat closes, taken (once) by the next session of the same conversation. A file per
conversation in the user's state directory, private to them: a draft is nobody else's (no
agent, no export sees it), and it lives seconds to minutes.

An agent's unsent reply and note are kept the same way when their console ends (a browser
session, or `helpdesk agent` quit): a file per conversation, agent and kind beside the
customers', taken by that agent alone."""

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
    _save(folder, str(conversation_id), text, MAX_DRAFT_CHARS)


def take_draft(folder: Path, conversation_id: int) -> str:
    """The conversation's draft, once: the file goes as it is read. Only ever text for the
    question box (control characters left out), never more than `MAX_DRAFT_CHARS`."""
    return _take(folder, str(conversation_id), MAX_DRAFT_CHARS)


MAX_AGENT_DRAFT_CHARS = 8000
"""The most of an agent's unsent reply or note kept: twice the longest one sent (4,000
characters, `chatbot.desk.models`; not imported, this module loads before the desk's models), as
for a question."""


def save_agent_draft(
    folder: Path, conversation_id: int, *, agent: str, note: bool, text: str
) -> None:
    """Keep an agent's unsent reply (or, with `note`, internal note) to the conversation, as
    `save_draft` keeps a customer's: private, blank saves nothing, two tabs' words joined."""
    _save(folder, _agent_name(conversation_id, agent, note), text, MAX_AGENT_DRAFT_CHARS)


def take_agent_draft(folder: Path, conversation_id: int, *, agent: str, note: bool) -> str:
    """The agent's unsent reply (or note) to the conversation, once; another agent's stay."""
    return _take(folder, _agent_name(conversation_id, agent, note), MAX_AGENT_DRAFT_CHARS)


def _agent_name(conversation_id: int, agent: str, note: bool) -> str:
    """The file name (less `.txt`) of one agent's draft: by a digest of their display name, which
    may hold any character (and is what their claims go by)."""
    digest = hashlib.sha256(agent.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{conversation_id}.{digest}.{'note' if note else 'reply'}"


def join_drafts(earlier: str, later: str) -> str:
    """Two drafts of the same box as one: the later keeps the earlier's words, where it replaced
    them (one holding the other is the other)."""
    if not earlier or earlier in later:
        return later
    return earlier if later in earlier else f"{earlier} {later}"


def _save(folder: Path, name: str, text: str, limit: int) -> None:
    if is_blank(text):
        return  # Nothing to keep, and another tab's draft stays.
    path = folder / f"{name}.txt"
    make_private_folders(folder)
    with _locked(folder):
        text = join_drafts(_read(path, limit), text)
        temporary = folder / f".{name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(text[:limit].encode("utf-8"))
            os.replace(temporary, path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        _prune(folder, keep=path)


def _take(folder: Path, name: str, limit: int) -> str:
    path = folder / f"{name}.txt"
    if not folder.is_dir():
        return ""
    with _locked(folder):
        text = _read(path, limit)
        path.unlink(missing_ok=True)
    return text


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


def _read(path: Path, limit: int) -> str:
    """A draft file's text, as its box may hold it; empty if there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:  # None kept (or not a file of ours: a link).
        return ""
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(4 * limit + 1)
    text = strip_control(data.decode("utf-8", "replace"), one_line=True)
    return "" if is_blank(text) else text[:limit]
