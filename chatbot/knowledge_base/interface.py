"""The knowledge-base store's interface: what the editor, `helpdesk kb`, the engine and the bots
need from wherever the passages live (a directory of files, or a PostgreSQL database).

Backend-neutral on purpose: passages travel as `Passage` models with the revision a later save must
be based on; a revision is a digest of the passage as its file holds it (`passage_file_text`), so
both backends give one passage the same revision, and an export re-imported is "unchanged".
Every write is checked and done as one step (a file lock, or one transaction), keeps what it
replaces in history, and is refused with `ConflictError` when the passage changed since the
revision the writer started from.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType
from typing import Literal, Protocol, Self

from chatbot.knowledge_base.models import Passage, validate_passage_id
from chatbot.knowledge_base.storage import (
    KnowledgeBaseError,
    LoadedKnowledgeBase,
    decode_json,
    parse_passage,
)
from chatbot.knowledge_base.synonyms import SynonymGroup

REVISION_CHARS = 12

Reason = Literal["edit", "delete", "restore", "import"]
"""What replaced an archived version: a save, a delete, a restore of another version, an import."""
UNREADABLE: Literal["unreadable"] = "unreadable"
"""The reason a version whose history file cannot be read is listed with (see `Version.problem`)."""


class PassageNotFoundError(KnowledgeBaseError):
    """No passage (and, where it matters, no history) with that id."""


class DuplicatePassageError(KnowledgeBaseError):
    """A new passage whose id is already taken."""


class ConflictError(KnowledgeBaseError):
    """The passage changed on disk after the editor opened it; saving would lose that change."""


class UnreadableConflictError(ConflictError):
    """The passage's file changed after the editor opened it, into something that is no passage
    (a hand edit broke it): said as such, with why, rather than as someone else's version, which
    could not be shown. `revision` is the broken file's: a save based on it replaces the file."""

    def __init__(self, message: str, *, revision: str) -> None:
        super().__init__(message)
        self.revision = revision


def passage_file_text(passage: Passage) -> str:
    """A passage as its file holds it: pretty-printed, keys in reading order, UTF-8 as written."""
    data = {"id": passage.id, "title": passage.title, "tags": list(passage.tags),
            "text": passage.text}  # fmt: skip
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def revision_of(content: bytes) -> str:
    """A short digest of a file's bytes: any change to the file, by any tool, changes it."""
    return hashlib.sha256(content).hexdigest()[:REVISION_CHARS]


def checked_id(passage_id: str) -> str:
    """`passage_id` if it is a safe slug, else a one-line `KnowledgeBaseError`; run before any id
    becomes part of a path, so nothing can be read or written outside the knowledge base."""
    try:
        return validate_passage_id(passage_id)
    except ValueError as error:
        raise KnowledgeBaseError(str(error)) from None


@dataclass(frozen=True, slots=True)
class StoredPassage:
    """A passage as read from disk, with the revision a later save must be based on."""

    passage: Passage
    revision: str


@dataclass(frozen=True, slots=True)
class Version:
    """An earlier version of a passage, kept when something replaced or deleted it."""

    id: str
    number: int
    reason: Reason | Literal["unreadable"]
    archived_at: datetime
    content: str
    """The exact text the passage file held."""
    problem: str | None = None
    """Why this version's history file cannot be read (one line naming it), or None. Such a
    version is still listed, as `UNREADABLE`, with the file's modification time and no content,
    and cannot be shown or restored: one broken file costs its own version, not the others."""

    @property
    def revision(self) -> str:
        return revision_of(self.content.encode("utf-8"))

    def passage(self) -> Passage:
        """The version as a passage; a hand-broken file that was archived cannot be restored."""
        if self.problem is not None:
            raise KnowledgeBaseError(f"{self.problem}; cannot be restored")
        where = f"history of {self.id!r}, version {self.number}"
        try:
            raw = decode_json(self.content.encode("utf-8"), where=where)
        except KnowledgeBaseError as error:
            raise KnowledgeBaseError(f"{error}; cannot be restored") from None
        return parse_passage(raw, where=where)


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import did, by passage id."""

    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Scan:
    """Every passage that could be read, one line per file that could not, and one per entry that
    was skipped because it is not a regular file."""

    passages: list[StoredPassage]
    problems: list[str]
    skipped: list[str]


@dataclass(frozen=True, slots=True)
class CheckReport:
    """Problems that stop the knowledge base from loading, and notes that do not."""

    passages: int
    problems: list[str]
    notes: list[str]


class ChangeWatch(Protocol):
    """Wakes a follower when the knowledge base may have changed. Used from one event loop."""

    async def wait(self, timeout: float) -> bool:
        """Return when another writer announced a change (True), or after `timeout` seconds
        (False): the caller then compares `stamp()`s, which also catches a missed announcement."""
        ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...


class KnowledgeBaseStore(Protocol):
    """A writable knowledge base: read, add, save, delete, history, restore, import, check."""

    @property
    def location(self) -> str:
        """Where it is, fit to print: a directory, or a database URL without its password."""
        ...

    # Reading

    def passages(self) -> list[Passage]:
        """Every passage, validated: what an engine is built from."""
        ...

    def load(self) -> LoadedKnowledgeBase:
        """Every passage, and one line per entry skipped; the first broken passage is an error."""
        ...

    def read_all(self) -> list[StoredPassage]:
        """Every passage with its revision, in id order; the first unreadable one is an error."""
        ...

    def scan(self) -> Scan:
        """Every passage that can be read, and one line for each that cannot."""
        ...

    def get(self, passage_id: str) -> StoredPassage:
        """The passage and its revision; `PassageNotFoundError` if there is none."""
        ...

    def exists(self, passage_id: str) -> bool: ...

    def history(self, passage_id: str) -> list[Version]:
        """The passage's earlier versions, oldest first; the current one is not among them."""
        ...

    def deleted(self) -> list[str]:
        """Ids with history but no current passage: deleted passages that can be restored."""
        ...

    def synonyms(self) -> tuple[SynonymGroup, ...]:
        """The synonym groups retrieval expands questions with."""
        ...

    def synonyms_revision(self) -> str | None:
        """A digest of the synonym groups as they are now (None: none were ever saved), which a
        save names as the revision it started from."""
        ...

    def save_synonyms(self, groups: Sequence[SynonymGroup], *, based_on: str | None) -> str:
        """Replace every synonym group; `ConflictError` if they changed since revision
        `based_on`. Returns the new revision."""
        ...

    def set_synonyms(self, groups: Sequence[SynonymGroup]) -> None:
        """Replace every synonym group (importing a directory brings its `synonyms.toml`)."""
        ...

    # Noticing changes

    def stamp(self) -> int | None:
        """A cheap token that changes whenever the passages may have; None if it cannot be read."""
        ...

    def watch(self) -> ChangeWatch:
        """Announcements of other writers' changes, for a follower (`LiveEngine.follow`)."""
        ...

    # Writing

    def add(self, passage: Passage) -> StoredPassage:
        """Write a new passage; an id that is taken is refused, never overwritten."""
        ...

    def save(self, passage: Passage, *, based_on: str) -> StoredPassage:
        """Replace a passage, provided it is still at revision `based_on`."""
        ...

    def delete(self, passage_id: str, *, based_on: str | None = None) -> Version:
        """Remove a passage, keeping it in history; with `based_on`, refuse if it changed."""
        ...

    def restore(
        self, passage_id: str, *, version: int | None = None, based_on: str | None = None
    ) -> StoredPassage:
        """Make an earlier version current again (by default the newest one); one that is the
        current version already changes nothing and adds no history."""
        ...

    def import_passages(
        self, passages: Sequence[Passage], *, replace: bool = False
    ) -> ImportReport:
        """Add `passages` all or nothing; an existing id is refused unless `replace`."""
        ...

    def check(self) -> CheckReport:
        """Every problem and note, not just the first."""
        ...

    def close(self) -> None:
        """Let go of connections (nothing for files)."""
        ...


def choose_version(passage_id: str, versions: list[Version], version: int | None) -> Version:
    """The version a restore brings back: the newest, or number `version`, named if missing."""
    if not versions:
        raise PassageNotFoundError(f"passage {passage_id!r} has no earlier versions")
    if version is None:
        return versions[-1]
    for candidate in versions:
        if candidate.number == version:
            return candidate
    numbers = ", ".join(str(v.number) for v in versions)
    raise KnowledgeBaseError(
        f"passage {passage_id!r} has no version {version} (versions: {numbers})"
    )


def restorable(passage_id: str, version: Version) -> Passage:
    """The passage a version holds, refused if it holds another id (a hand-edited history)."""
    passage = version.passage()
    if passage.id != passage_id:
        raise KnowledgeBaseError(
            f"history of {passage_id!r}, version {version.number}: holds passage "
            f"{passage.id!r}, cannot be restored"
        )
    return passage
