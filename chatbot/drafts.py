"""A customer's unsent question, kept while `helpdesk serve` restarts: stored as they type (a
second at most behind) and as a browser session's chat closes, read back by the next session of
the same conversation, and gone only once sent or cleared (`store_draft`). A file per
conversation in the user's state directory, private to them: a draft is nobody else's (no
agent, no export sees it), and it lives seconds to minutes.

An agent's unsent reply and note are kept the same way, a file per conversation, agent and kind
beside the customers', for that agent alone: stored as they type (a second at most behind) and
as their console ends, read back when they open the conversation again, and gone only once sent
or cleared (`store_agent_draft`), so a console killed outright loses at most that second.

A knowledge-base editor's unsaved passage form is kept as their app ends, a JSON file per
editor, knowledge base and passage (or new passage), taken when that editor next opens it."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from chatbot.files import make_private_folders, read_regular_file
from chatbot.text import is_blank, strip_control

MAX_DRAFT_CHARS = 50_000
"""The most of an unsent question kept: far more than can be sent (`MAX_QUESTION_CHARS`), so a
customer told to shorten a long paste still finds all of it; only a runaway paste is cut, and a
file of more is not read as a draft."""


def drafts_for(database: str) -> Path:
    """The folder of one database's drafts (conversation ids are per database), named by a
    digest of its location: two servers' conversation 5 are two customers, and a URL may hold a
    password. A file is named by its absolute path: `--db desk.sqlite3` run in two folders is two
    databases (an agent's note on one's conversation 3 came back on the other's), and one file
    named two ways is one."""
    from chatbot.dburl import scheme
    from chatbot.paths import drafts_dir

    kind = scheme(database)
    if kind is None or kind == "sqlite":
        path = database if kind is None else database.split("://", 1)[1]
        with contextlib.suppress(OSError, RuntimeError):
            database = str(Path(path).expanduser().resolve())
    return drafts_dir() / hashlib.sha256(database.encode()).hexdigest()[:16]


ACCOUNT_PREFIX = "account-"


def account_drafts(folder: Path, account: str) -> Path:
    """The part of a drafts `folder` for one account's drafts (an agent's replies and notes,
    an editor's forms), named by a digest of `account` (its name and when it was made): a
    display name can pass to another account, whose boxes then offered the first one's words."""
    return folder / f"{ACCOUNT_PREFIX}{hashlib.sha256(account.encode()).hexdigest()[:16]}"


def draft_owner(folder: Path, name: str) -> str:
    """Whose drafts in `folder` are whose: in an account's own folder, the account's whatever
    its display name (`name`) is now (renamed, its drafts were left behind, unfound); elsewhere
    (a terminal's, where `--agent` is all there is) the name's."""
    return "" if folder.name.startswith(ACCOUNT_PREFIX) else name


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


def read_draft(folder: Path, conversation_id: int) -> str:
    """The conversation's draft, left in place: it stays kept until it is sent or cleared
    (`store_draft`), as an agent's does (`read_agent_draft`). Taken as it was put back in the
    box, it was gone for good if the session then died (`serve` killed, a crash)."""
    return _read_kept(folder, str(conversation_id), MAX_DRAFT_CHARS)


def store_draft(folder: Path, conversation_id: int, *, text: str, base: str) -> str:
    """Keep `text` as the conversation's draft as it is now in the question box, as the
    customer types: in place of `base`, what that box last read or stored; blank (sent, or
    cleared), its file goes. Words stored meanwhile by another tab of theirs, which `base` does
    not know, are joined, never dropped. Returns what is kept now, the next call's `base` (the
    customer's side of `store_agent_draft`)."""
    return _store(folder, str(conversation_id), text, base, MAX_DRAFT_CHARS)


MAX_AGENT_DRAFT_CHARS = MAX_DRAFT_CHARS
"""The most of an agent's unsent reply or note kept: as for a question, far more than can be
sent (4,000 characters), so a reply the agent is told to shorten comes back whole."""


def save_agent_draft(
    folder: Path, conversation_id: int, *, agent: str, note: bool, text: str
) -> None:
    """Keep an agent's unsent reply (or, with `note`, internal note) to the conversation, as
    `save_draft` keeps a customer's: private, blank saves nothing, two tabs' words joined."""
    _save(folder, _agent_name(conversation_id, agent, note), text, MAX_AGENT_DRAFT_CHARS)


def take_agent_draft(folder: Path, conversation_id: int, *, agent: str, note: bool) -> str:
    """The agent's unsent reply (or note) to the conversation, once; another agent's stay."""
    return _take(folder, _agent_name(conversation_id, agent, note), MAX_AGENT_DRAFT_CHARS)


def read_agent_draft(folder: Path, conversation_id: int, *, agent: str, note: bool) -> str:
    """The agent's unsent reply (or note) to the conversation, left in place: it stays kept
    until it is sent or cleared (`store_agent_draft`). Taken as it was put back in the box, it
    was gone for good if the console was then killed (`kill -9`, a crash, power lost)."""
    return _read_kept(folder, _agent_name(conversation_id, agent, note), MAX_AGENT_DRAFT_CHARS)


def store_agent_draft(
    folder: Path, conversation_id: int, *, agent: str, note: bool, text: str, base: str
) -> str:
    """Keep `text` as the agent's reply (or note) to the conversation as it is now in its box,
    as the agent types: in place of `base`, what that box last read or stored; a blank one (sent,
    or cleared) is no draft, and its file goes. Words stored meanwhile by another of the agent's
    consoles (a second tab), which `base` does not know, are joined, never dropped. Returns what
    is kept now, the next call's `base`."""
    name = _agent_name(conversation_id, agent, note)
    return _store(folder, name, text, base, MAX_AGENT_DRAFT_CHARS)


def _read_kept(folder: Path, name: str, cap: int) -> str:
    """The draft `name` in `folder`, left in place ("" when there is none)."""
    if not folder.is_dir():
        return ""
    with _locked(folder):
        return _read(folder / f"{name}.txt", cap)


def _store(folder: Path, name: str, text: str, base: str, cap: int) -> str:
    """Keep `text` as draft `name` in place of `base` (see `store_draft`); returns what is kept."""
    path = folder / f"{name}.txt"
    if is_blank(text) and is_blank(base) and not folder.is_dir():
        return ""  # Nothing kept, nothing to keep: no folder made for it.
    make_private_folders(folder)
    with _locked(folder):
        stored = _read(path, cap)
        kept = text if stored == base else _replace_own(stored, base, text)
        # As `_read` will read it back, so the next call's `base` compares equal.
        kept = strip_control(kept, one_line=True)
        kept = "" if is_blank(kept) else kept[:cap]
        if kept == stored:
            return kept
        if kept:
            _write(path, kept.encode("utf-8"))
            _prune(folder, keep=path)
        else:
            path.unlink(missing_ok=True)
    return kept


def _agent_name(conversation_id: int, agent: str, note: bool) -> str:
    """The file name (less `.txt`) of one agent's draft: by a digest of their display name, which
    may hold any character (and is what their claims go by)."""
    digest = hashlib.sha256(agent.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{conversation_id}.{digest}.{'note' if note else 'reply'}"


MAX_PASSAGE_FIELD_CHARS = MAX_DRAFT_CHARS
"""The most of each field of an unsaved passage form kept: far more than a passage may hold
(4,000 characters), so an editor told their text is too long still finds all of it."""
MAX_PASSAGE_DRAFT_BYTES = 4 * 12 * MAX_PASSAGE_FIELD_CHARS + 4096
"""A kept form's file at most: four fields, each character at most 12 bytes as JSON escapes it
(a pair of `\\uXXXX`), and the rest; a bigger file is not read as one."""
EDITOR_PREFIX = "editor."

agent_drafts: Path | None = None
"""Where this process keeps an agent's unsent replies and notes as its app ends (`keep_for`);
None (the tests' apps): not kept."""
editor_drafts: Path | None = None
"""Where this process keeps an editor's unsaved passage form as its app ends (`keep_for`).
Here, not on the screens: the editor's module loads when the editor is first opened, well after
the settings that name the folders. None (the tests' apps): not kept."""


def keep_for(database: str, knowledge_base: str, *, account: str | None = None) -> None:
    """Keep this process's agents' and editors' drafts from now on: of this database's
    conversations and this knowledge base's passages, and with `account` (a browser session's)
    in that account's folders. Set by `chatbot.web.child` and by the terminal commands once
    their settings are loaded."""
    global agent_drafts, editor_drafts
    agents, editors = drafts_for(database), drafts_for(knowledge_base)
    if account is not None:
        agents, editors = account_drafts(agents, account), account_drafts(editors, account)
    agent_drafts, editor_drafts = agents, editors


@dataclass(frozen=True)
class UnsavedPassage:
    """A knowledge-base editor's passage form as they left it unsaved: each field as typed (not
    checked: a form may hold what Save refuses), and what it was opened as."""

    passage_id: str
    title: str
    tags: str
    """As typed: comma-separated."""
    text: str
    revision: str | None
    """The revision of the stored passage the form was opened at (Save is checked against it,
    so a passage changed since is not overwritten); None: a new passage."""
    gap_id: int | None = None
    """The content gap a new passage was being written for."""


def save_unsaved_passage(folder: Path, *, editor: str, form: UnsavedPassage) -> None:
    """Keep an editor's unsaved passage form (for `editor`, of the knowledge base whose folder
    `folder` is, under the passage's id or as their new passage), private as the other drafts
    are. A new passage's form with nothing in it is nothing to keep. A form kept already for the
    same passage is replaced: fields cannot be joined as words are, and the later is the newer."""
    fields = (form.passage_id, form.title, form.tags, form.text)
    if form.revision is None and all(is_blank(field) for field in fields):
        return
    data = {
        "id": form.passage_id[:MAX_PASSAGE_FIELD_CHARS],
        "title": form.title[:MAX_PASSAGE_FIELD_CHARS],
        "tags": form.tags[:MAX_PASSAGE_FIELD_CHARS],
        "text": form.text[:MAX_PASSAGE_FIELD_CHARS],
        "revision": form.revision,
        "gap": form.gap_id,
    }
    key = None if form.revision is None else form.passage_id
    path = folder / f"{_editor_name(editor, key)}.json"
    make_private_folders(folder)
    with _locked(folder):
        # ASCII: a lone surrogate a field may hold is escaped, not an encoding error.
        _write(path, json.dumps(data, ensure_ascii=True).encode("ascii"))
        _prune(folder, keep=path)


def take_unsaved_passage(
    folder: Path, *, editor: str, passage_id: str | None
) -> UnsavedPassage | None:
    """The editor's unsaved form of the passage `passage_id` (None: their new passage), once:
    the file goes as it is read. Another editor's stay."""
    path = folder / f"{_editor_name(editor, passage_id)}.json"
    if not folder.is_dir():
        return None
    with _locked(folder):
        form = _read_form(path)
        path.unlink(missing_ok=True)
    if form is None or (form.revision is None) != (passage_id is None):
        return None
    if passage_id is not None and form.passage_id != passage_id:
        return None  # Not this passage's: a file renamed by hand.
    return form


def unsaved_passages(folder: Path, *, editor: str) -> list[UnsavedPassage]:
    """The editor's kept forms, the latest kept first, left in place (`take_unsaved_passage`
    takes each as its passage opens)."""
    if not folder.is_dir():
        return []
    found: list[tuple[float, UnsavedPassage]] = []
    with _locked(folder):
        for path in folder.glob(f"{_editor_name(editor, None).removesuffix('new')}*.json"):
            with contextlib.suppress(OSError):
                mtime = path.lstat().st_mtime
                if (form := _read_form(path)) is not None:
                    found.append((mtime, form))
    return [form for _mtime, form in sorted(found, key=lambda each: -each[0])]


def _editor_name(editor: str, passage_id: str | None) -> str:
    """The file name (less `.json`) of an editor's form: by digests of their display name and of
    the passage's id (`new` for a new passage)."""
    who = hashlib.sha256(editor.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    if passage_id is None:
        return f"{EDITOR_PREFIX}{who}.new"
    what = hashlib.sha256(passage_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{EDITOR_PREFIX}{who}.{what}"


def _read_form(path: Path) -> UnsavedPassage | None:
    """A kept form, each field as its box may hold it (the text keeps its line breaks and tabs,
    the one-line fields nothing but what a line shows); None if there is none, or not ours."""
    try:
        data = read_regular_file(path, limit=MAX_PASSAGE_DRAFT_BYTES + 1, follow=False)
    except OSError:  # None kept (or not a file of ours: a link, a FIFO, a folder).
        return None
    if len(data) > MAX_PASSAGE_DRAFT_BYTES:
        return None
    try:
        kept = json.loads(data)
    except ValueError:
        return None
    if not isinstance(kept, dict):
        return None
    fields = [kept.get(name) for name in ("id", "title", "tags", "text")]
    revision, gap = kept.get("revision"), kept.get("gap")
    if not all(isinstance(field, str) for field in fields):
        return None
    if not (revision is None or isinstance(revision, str)):
        return None
    if not (gap is None or type(gap) is int):
        return None
    passage_id, title, tags, text = (
        strip_control(str(field), one_line=index < 3)[:MAX_PASSAGE_FIELD_CHARS]
        for index, field in enumerate(fields)
    )
    return UnsavedPassage(passage_id, title, tags, text, revision=revision, gap_id=gap)


def _replace_own(stored: str, base: str, text: str) -> str:
    """`stored`, which another console joined words to since this box stored `base`, with `base`
    replaced by `text` where it is: the other console's words stay, and a box sent or cleared
    takes only its own words away. Two consoles of one agent typing in one conversation left both
    replies joined in the file after each had sent its own, and the joined text came back as an
    unsent reply that one Enter sent again. (`base` no longer there: the two are joined.)"""
    if is_blank(base) or base not in stored:
        return join_drafts(stored, text)
    before, _, after = stored.partition(base)
    return " ".join(part for part in (before.strip(), text, after.strip()) if not is_blank(part))


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
        _write(path, text[:limit].encode("utf-8"))
        _prune(folder, keep=path)


def _write(path: Path, data: bytes) -> None:
    """`data` as the file at `path`, private (0600), whole or not at all; under the lock."""
    temporary = path.parent / f".{path.stem}.{secrets.token_hex(6)}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


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
    for old in [*folder.glob("*.txt"), *folder.glob(f"{EDITOR_PREFIX}*.json")]:
        with contextlib.suppress(OSError):
            if old != keep and old.lstat().st_mtime < cut:
                old.unlink()


def _read(path: Path, limit: int) -> str:
    """A draft file's text, as its box may hold it; empty if there is none. Only a regular file
    is read: a FIFO's open waited for a writer, and hung the chat that read it."""
    try:
        data = read_regular_file(path, limit=4 * limit + 1, follow=False)
    except OSError:  # None kept (or not a file of ours: a link, a FIFO, a folder).
        return ""
    text = strip_control(data.decode("utf-8", "replace"), one_line=True)
    return "" if is_blank(text) else text[:limit]
