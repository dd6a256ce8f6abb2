"""A customer's unsent question, kept while `helpdesk serve` restarts: written as a browser
session's chat closes, taken (once) by the next session of the same conversation. A file per
conversation in the user's state directory, private to them: a draft is nobody else's (no
agent, no export sees it), and it lives seconds to minutes."""

from __future__ import annotations

import hashlib
import os
import secrets
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


def save_draft(folder: Path, conversation_id: int, text: str) -> None:
    """Keep `text` as the conversation's draft, private to this user (0600 in a 0700 folder),
    written whole or not at all; a blank one is no draft (any earlier one goes)."""
    path = folder / f"{conversation_id}.txt"
    if is_blank(text):
        path.unlink(missing_ok=True)
        return
    make_private_folders(folder)
    temporary = folder / f".{conversation_id}.{secrets.token_hex(6)}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text[:MAX_DRAFT_CHARS].encode("utf-8"))
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def take_draft(folder: Path, conversation_id: int) -> str:
    """The conversation's draft, once: the file goes as it is read. Only ever text for the
    question box (control characters left out), never more than `MAX_DRAFT_CHARS`."""
    path = folder / f"{conversation_id}.txt"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:  # None kept (or not a file of ours: a link).
        return ""
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(4 * MAX_DRAFT_CHARS + 1)
    finally:
        path.unlink(missing_ok=True)
    text = strip_control(data.decode("utf-8", "replace"), one_line=True)
    return "" if is_blank(text) else text[:MAX_DRAFT_CHARS]
