"""Editing a knowledge-base directory safely while the desk is running.

- Every write is atomic (temporary file, fsync, rename), so a crash leaves the old passage or the
  new one, never a torn file.
- Every save states the revision it was based on (a digest of the file's bytes); if the file has
  changed since, the save is refused instead of overwriting someone else's work. Check and write
  happen under one lock file per knowledge base, so two processes cannot interleave them.
- Every save, delete and restore first copies the file it replaces into
  `<kb>/.history/<id>/<n>.json`, so any earlier version, and any deleted passage, can be restored.

Readers take no lock: thanks to the atomic rename they always see a whole file.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import secrets
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Self

from chatbot.files import (
    fsync_directory,
    remove_durably,
    sweep_temporaries,
    write_new_file,
    write_text_atomic,
)
from chatbot.knowledge_base.interface import (
    UNREADABLE,
    CheckReport,
    ConflictError,
    DuplicatePassageError,
    ImportReport,
    PassageNotFoundError,
    Reason,
    Scan,
    StoredPassage,
    UnreadableConflictError,
    Version,
    checked_id,
    choose_version,
    passage_file_text,
    restorable,
    revision_of,
)
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.storage import (
    IMPORT_DIR,
    MAX_PASSAGE_FILE_BYTES,
    KnowledgeBaseError,
    LoadedKnowledgeBase,
    MissingFileError,
    is_passage_id,
    list_passage_files,
    parse_passage_file,
    read_json,
    read_knowledge_base,
    read_passage_file,
    read_regular_file,
    require_directory,
)
from chatbot.knowledge_base.synonyms import (
    SYNONYMS_FILE,
    SynonymGroup,
    load_synonyms,
    synonyms_toml,
)

HISTORY_DIR = ".history"
LOCK_FILE = ".lock"
STAGING_PREFIX = ".import-"
"""An import being written: invisible to readers, discarded by the next write if left behind."""
_VERSION_FILE = re.compile(r"(\d+)\.json")

log = logging.getLogger(__name__)

__all__ = [
    "CheckReport",
    "ConflictError",
    "DuplicatePassageError",
    "ImportReport",
    "PassageNotFoundError",
    "PassageStore",
    "PollingWatch",
    "Scan",
    "StoredPassage",
    "UnreadableConflictError",
    "Version",
    "passage_file_text",
    "revision_of",
]


class PollingWatch:
    """A change watch that hears nothing: every wait lasts its whole timeout (files are polled)."""

    async def wait(self, timeout: float) -> bool:
        await asyncio.sleep(timeout)
        return False

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        pass


class PassageStore:
    """A writable knowledge-base directory: add, save, delete, history, restore, import."""

    def __init__(self, directory: Path, *, lock_timeout: float = 10.0) -> None:
        self.directory = directory
        self.lock_timeout = lock_timeout
        self._last_good: dict[str, Passage] = {}
        """Each passage as the last `load` used it: a file broken since keeps that version."""

    # Reading ------------------------------------------------------------------------------------

    def passage_path(self, passage_id: str) -> Path:
        return self.directory / f"{checked_id(passage_id)}.json"

    def history_dir(self, passage_id: str) -> Path:
        return self.directory / HISTORY_DIR / checked_id(passage_id)

    def passages(self) -> list[Passage]:
        """Every passage, validated: what an engine is built from. Each file that cannot be used
        is a warning, as `load` says."""
        loaded = self.load()
        for line in loaded.skipped:
            log.warning("%s", line)
        return loaded.passages

    @property
    def location(self) -> str:
        return str(self.directory)

    def load(self) -> LoadedKnowledgeBase:
        """Every passage that can be used, and one line for each file that cannot. Such a file is
        skipped, unless this store read a good version of it before: a running app keeps
        answering from that one rather than lose the passage to a slip of a hand edit."""
        loaded = read_knowledge_base(self.directory, last_good=self._last_good)
        self._last_good = {passage.id: passage for passage in loaded.passages}
        return loaded

    def set_synonyms(self, groups: Sequence[SynonymGroup]) -> None:
        """Replace every synonym group whatever the file holds (importing a directory)."""
        path = self.directory / SYNONYMS_FILE
        with self._locked(create=True):
            try:
                write_text_atomic(path, synonyms_toml(groups))
            except OSError as error:
                raise KnowledgeBaseError(
                    f"{path}: cannot write: {error.strerror or error}"
                ) from None

    def watch(self) -> PollingWatch:
        """Files announce nothing: a follower compares `stamp()`s every so often."""
        return PollingWatch()

    def close(self) -> None:
        pass

    def read_all(self) -> list[StoredPassage]:
        """Every passage with its revision, in id order; the first unreadable file is an error."""
        scan = self.scan()
        if scan.problems:
            raise KnowledgeBaseError(scan.problems[0])
        return scan.passages

    def scan(self) -> Scan:
        """Every passage that can be read, and one line for each file that cannot: an editor can
        still work on the rest of a knowledge base with one hand-broken file."""
        require_directory(self.directory)
        listing = list_passage_files(self.directory)
        good: list[StoredPassage] = []
        problems: list[str] = []
        for path in listing.files.values():
            try:
                content = read_passage_file(path)
                good.append(StoredPassage(parse_passage_file(path, content), revision_of(content)))
            except KnowledgeBaseError as error:
                problems.append(str(error))
        return Scan(good, problems, listing.skipped)

    def get(self, passage_id: str) -> StoredPassage:
        path = self._current_path(passage_id)
        try:
            content = read_passage_file(path)
        except MissingFileError:
            raise PassageNotFoundError(
                f"passage {passage_id!r} not found in {self.directory}"
            ) from None
        return StoredPassage(parse_passage_file(path, content), revision_of(content))

    def stamp(self) -> int | None:
        """A hash of the directory's entries (name and inode) and modification time: every write
        here renames a new file in, under a new name or over an old one, or removes one, so every
        write changes the entries. The time alone is not enough: on many kernels it ticks once a
        jiffy, and a write in the same tick as a follower's read of it would go unseen."""
        try:
            with os.scandir(self.directory) as entries:
                # The inode comes with the name from readdir on POSIX: no stat per file. A set, as
                # the order entries are listed in is the filesystem's.
                listing = frozenset((entry.name, entry.inode()) for entry in entries)
            return hash((self.directory.stat().st_mtime_ns, listing))
        except OSError:
            return None

    def exists(self, passage_id: str) -> bool:
        return self._current_path(passage_id).is_file()

    def history(self, passage_id: str) -> list[Version]:
        """The passage's earlier versions, oldest first; the current file is not among them. A
        history file that cannot be read is listed as its own unreadable version (`problem`),
        never an error for the whole history: the others can still be shown and restored."""
        directory = self.history_dir(passage_id)
        versions = []
        if directory.is_dir():
            for path in directory.iterdir():
                match = _VERSION_FILE.fullmatch(path.name)
                if match:
                    versions.append(self._read_version(passage_id, path, int(match.group(1))))
        if not versions and not self.exists(passage_id):
            raise PassageNotFoundError(f"passage {passage_id!r} not found and has no history")
        return sorted(versions, key=lambda v: v.number)

    def deleted(self) -> list[str]:
        """Ids that have history but no current file: deleted passages that can be restored."""
        root = self.directory / HISTORY_DIR
        try:
            entries = list(root.iterdir())
        except OSError:  # No history yet (or none readable): nothing to restore.
            return []
        # A folder there whose name is no passage id was not made by this store: not listed.
        return sorted(
            p.name for p in entries
            if is_passage_id(p.name) and p.is_dir() and not self.exists(p.name)
        )  # fmt: skip

    # Writing ------------------------------------------------------------------------------------

    def add(self, passage: Passage) -> StoredPassage:
        """Write a new passage; an id that is taken is refused, never overwritten. A knowledge
        base that is not there is refused too (`_locked`)."""
        path = self.passage_path(passage.id)
        with self._locked():
            if self._read(path) is not None:
                raise DuplicatePassageError(f"passage {passage.id!r} already exists")
            return self._write(path, passage)

    def save(self, passage: Passage, *, based_on: str) -> StoredPassage:
        """Replace a passage, provided its file is still at revision `based_on`."""
        path = self.passage_path(passage.id)
        with self._locked():
            current = self._read(path)
            self._check_revision(passage.id, current, based_on)
            assert current is not None
            if current == passage_file_text(passage).encode("utf-8"):
                return StoredPassage(passage, revision_of(current))
            return self._replace(path, passage, current, reason="edit")

    def delete(self, passage_id: str, *, based_on: str | None = None) -> Version:
        """Remove a passage, keeping it in history so the delete can be undone with `restore`.
        With `based_on`, refuse if the passage changed since that revision."""
        path = self.passage_path(passage_id)
        with self._locked():
            current = self._read(path)
            if current is None:
                raise PassageNotFoundError(f"passage {passage_id!r} not found in {self.directory}")
            if based_on is not None:
                self._check_revision(passage_id, current, based_on)
            version = self._archive(passage_id, current, reason="delete")
            try:
                remove_durably(path)
            except OSError as error:
                self._unarchive(version)
                raise KnowledgeBaseError(
                    f"{path}: cannot delete: {error.strerror or error}"
                ) from None
            return version

    def restore(
        self, passage_id: str, *, version: int | None = None, based_on: str | None = None
    ) -> StoredPassage:
        """Make an earlier version current again (by default the newest one: this undoes the last
        save or delete). The version it replaces goes to history, so a restore can be undone too."""
        path = self.passage_path(passage_id)
        with self._locked():
            chosen = choose_version(passage_id, self.history(passage_id), version)
            passage = restorable(passage_id, chosen)
            current = self._read(path)
            if based_on is not None:
                self._check_revision(passage_id, current, based_on)
            if current is None:
                return self._write(path, passage)
            if current == passage_file_text(passage).encode("utf-8"):
                # Already the current version: a second history entry would restore nothing.
                return StoredPassage(passage, revision_of(current))
            return self._replace(path, passage, current, reason="restore")

    def import_passages(
        self, passages: Sequence[Passage], *, replace: bool = False
    ) -> ImportReport:
        """Add `passages` (already validated, ids unique). A passage whose id exists is refused
        unless `replace`; then nothing at all is written. Replaced versions go to history.

        All or nothing, even if the process is killed: every file is first written to a hidden
        staging folder, which one rename then commits. Readers count a committed import as done
        while its files are moved into place, and the next write finishes moving them (or, for an
        import killed before its commit, throws the staging folder away)."""
        report = ImportReport()
        with self._locked(create=True):
            plan: list[Passage] = []
            for passage in passages:
                current = self._read(self.passage_path(passage.id))
                if current == passage_file_text(passage).encode("utf-8"):
                    report.unchanged.append(passage.id)
                    continue
                if current is not None and not replace:
                    raise DuplicatePassageError(
                        f"passage {passage.id!r} already exists (use --replace to overwrite; "
                        "nothing was imported)"
                    )
                (report.added if current is None else report.replaced).append(passage.id)
                plan.append(passage)
            if plan:
                self._commit_import(plan)
        return report

    def _commit_import(self, plan: Sequence[Passage]) -> None:
        staging = self.directory / f"{STAGING_PREFIX}{secrets.token_hex(6)}"
        try:
            staging.mkdir()
            for passage in plan:
                write_new_file(staging / f"{passage.id}.json",
                               passage_file_text(passage).encode("utf-8"))  # fmt: skip
            fsync_directory(staging)
            os.rename(staging, self.directory / IMPORT_DIR)  # The commit.
        except OSError as error:
            shutil.rmtree(staging, ignore_errors=True)
            raise KnowledgeBaseError(
                f"{self.directory}: cannot import: {error.strerror or error} (nothing was imported)"
            ) from None
        fsync_directory(self.directory)
        self._finish_import()

    # Synonyms -----------------------------------------------------------------------------------
    # The one way in for editors and `helpdesk kb synonyms`: a store kept elsewhere (PostgreSQL)
    # offers the same three methods.

    def synonyms(self) -> tuple[SynonymGroup, ...]:
        """The synonym groups (none without a `synonyms.toml`); a bad file is one line."""
        return load_synonyms(self.directory)

    def synonyms_revision(self) -> str | None:
        """A digest of `synonyms.toml` as it is now (None: no file), to save against."""
        content = self._read(self.directory / SYNONYMS_FILE)
        return None if content is None else revision_of(content)

    def save_synonyms(self, groups: Sequence[SynonymGroup], *, based_on: str | None) -> str:
        """Replace every synonym group, atomically; refused if the file changed since revision
        `based_on` (None: there was no file). Returns the new revision."""
        path = self.directory / SYNONYMS_FILE
        text = synonyms_toml(groups)
        with self._locked():
            current = self._read(path)
            if (None if current is None else revision_of(current)) != based_on:
                raise ConflictError(
                    "the synonyms were changed by someone else since you opened them"
                )
            try:
                write_text_atomic(path, text)
            except OSError as error:
                raise KnowledgeBaseError(
                    f"{path}: cannot write: {error.strerror or error}"
                ) from None
        return revision_of(text.encode("utf-8"))

    # Checking -----------------------------------------------------------------------------------

    def check(self) -> CheckReport:
        """Validate every passage file and report every problem, not just the first."""
        scan = self.scan()
        notes = list(scan.skipped)
        for path in sorted(self.directory.glob(".*.tmp")):
            notes.append(f"{path}: left over from an interrupted save; the next write removes it")
        for path in sorted(self.directory.glob(f"{STAGING_PREFIX}*")):
            notes.append(f"{path}: an import that was interrupted before it finished writing; "
                         "nothing of it is used, and the next write removes it")  # fmt: skip
        if (self.directory / IMPORT_DIR).is_dir():
            notes.append(f"{self.directory / IMPORT_DIR}: an interrupted import, already in use; "
                         "the next write moves its files into place")  # fmt: skip
        for passage_id in self.deleted():
            notes.append(f"passage {passage_id!r} is deleted; `restore` brings it back")
        return CheckReport(passages=len(scan.passages), problems=scan.problems, notes=notes)

    # Internals ----------------------------------------------------------------------------------

    @contextmanager
    def _locked(self, *, create: bool = False) -> Iterator[None]:
        """Hold the knowledge base's lock file, so a check and the write after it are one step;
        first finish or discard whatever an interrupted write left behind.

        Only an import (`create`) makes a missing folder. Any other write there is refused: a
        mistyped `--kb`, or a folder moved away under a running editor, became a new knowledge
        base of one passage, which every running app then switched to."""
        if create and not self.directory.exists():
            try:
                self.directory.mkdir(parents=True)
            except OSError as error:
                raise KnowledgeBaseError(
                    f"{self.directory}: cannot create: {error.strerror or error}"
                ) from None
        require_directory(self.directory)
        seen = _identity(self.directory)
        # Imported by writers only: reading (an engine, `helpdesk ask`) takes no lock.
        from filelock import FileLock, Timeout

        lock = FileLock(str(self.directory / LOCK_FILE), timeout=self.lock_timeout)
        try:
            lock.acquire()
        except Timeout:
            raise KnowledgeBaseError(
                f"{self.directory}: knowledge base is busy (another save is running); try again"
            ) from None
        except OSError as error:  # A read-only mount or folder: the lock file cannot be made.
            raise KnowledgeBaseError(
                f"{self.directory}: cannot write: {error.strerror or error}"
            ) from None
        if _identity(self.directory) != seen:
            # Moved away after the check: filelock makes a missing folder for its lock file, and
            # that empty one would pass for the knowledge base. Refused, and the folder removed.
            lock.release()
            _remove_lock_only_folder(self.directory)
            raise KnowledgeBaseError(f"{self.directory}: knowledge base not found")
        try:
            self._recover()
            yield
        finally:
            lock.release()

    def _recover(self) -> None:
        """Under the lock, every writer is this one: any temporary file or unfinished staging
        folder is from a process that died mid-write."""
        sweep_temporaries(self.directory)
        for staging in self.directory.glob(f"{STAGING_PREFIX}*"):
            shutil.rmtree(staging, ignore_errors=True)
        if (self.directory / IMPORT_DIR).is_dir():
            self._finish_import()

    def _finish_import(self) -> None:
        """Move a committed import's files into place, archiving what each one replaces."""
        staging = self.directory / IMPORT_DIR
        try:
            for path in sorted(staging.glob("*.json")):
                if not is_passage_id(path.stem):
                    continue
                target = self.directory / path.name
                current = self._read(target)
                if current is not None and current != read_regular_file(path):
                    self._archive(path.stem, current, reason="import")
                os.replace(path, target)
            fsync_directory(self.directory)
            shutil.rmtree(staging)
        except OSError as error:
            raise KnowledgeBaseError(
                f"{staging}: cannot finish an import: {error.strerror or error}"
            ) from None

    def _current_path(self, passage_id: str) -> Path:
        """Where the passage's current file is: in a committed import still moving in, if there."""
        staged = self.directory / IMPORT_DIR / f"{checked_id(passage_id)}.json"
        return staged if staged.is_file() else self.passage_path(passage_id)

    def _read(self, path: Path) -> bytes | None:
        try:
            return read_regular_file(path, limit=MAX_PASSAGE_FILE_BYTES)
        except MissingFileError:
            return None

    def _check_revision(self, passage_id: str, current: bytes | None, based_on: str) -> None:
        if current is None:
            raise ConflictError(
                f"passage {passage_id!r} was deleted by someone else since you opened it"
            )
        if revision_of(current) != based_on:
            try:
                parse_passage_file(self.passage_path(passage_id), current)
            except KnowledgeBaseError as error:
                # Not "changed by someone else": no one's version is there to be shown.
                raise UnreadableConflictError(
                    f"passage {passage_id!r} was changed since you opened it, and its file is "
                    f"unreadable now: {error}",
                    revision=revision_of(current),
                ) from None
            raise ConflictError(
                f"passage {passage_id!r} was changed by someone else since you opened it"
            )

    def _write(self, path: Path, passage: Passage) -> StoredPassage:
        text = passage_file_text(passage)
        try:
            write_text_atomic(path, text)
        except OSError as error:
            raise KnowledgeBaseError(f"{path}: cannot write: {error.strerror or error}") from None
        return StoredPassage(passage, revision_of(text.encode("utf-8")))

    def _replace(
        self, path: Path, passage: Passage, current: bytes, *, reason: Reason
    ) -> StoredPassage:
        # History first: a crash between the two steps leaves an extra copy, never a lost version.
        version = self._archive(passage.id, current, reason=reason)
        try:
            return self._write(path, passage)
        except KnowledgeBaseError:
            self._unarchive(version)
            raise

    def _archive(self, passage_id: str, content: bytes, *, reason: Reason) -> Version:
        directory = self.history_dir(passage_id)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            sweep_temporaries(directory)
            numbers = [
                int(m.group(1)) for p in directory.iterdir()
                if (m := _VERSION_FILE.fullmatch(p.name))
            ]  # fmt: skip
            version = Version(
                id=passage_id,
                number=max(numbers, default=0) + 1,
                reason=reason,
                archived_at=datetime.now(UTC),
                content=content.decode("utf-8", errors="replace"),
            )
            record = {
                "version": version.number,
                "reason": reason,
                "archived_at": version.archived_at.isoformat(),
                "content": version.content,
            }
            write_text_atomic(
                directory / f"{version.number:06d}.json",
                json.dumps(record, indent=2, ensure_ascii=False) + "\n",
            )  # fmt: skip
        except OSError as error:
            raise KnowledgeBaseError(
                f"{directory}: cannot keep history: {error.strerror or error}"
            ) from None
        return version

    def _unarchive(self, version: Version) -> None:
        """Drop a history entry whose save failed, so history only holds versions that were
        really replaced."""
        path = self.history_dir(version.id) / f"{version.number:06d}.json"
        path.unlink(missing_ok=True)

    def _read_version(self, passage_id: str, path: Path, number: int) -> Version:
        """Version `number` (its file's name) as its file `path` holds it, or, when the file
        cannot be read as a history entry, an unreadable version saying why."""
        try:
            data = read_json(path)
            return Version(
                id=passage_id,
                number=int(data["version"]),
                reason=data["reason"],
                archived_at=datetime.fromisoformat(data["archived_at"]),
                content=str(data["content"]),
            )
        except KnowledgeBaseError as error:
            problem = str(error)
        except (KeyError, TypeError, ValueError):
            problem = f"{path}: not a history entry"
        try:
            archived_at = datetime.fromtimestamp(path.lstat().st_mtime, UTC)
        except OSError:
            archived_at = datetime.fromtimestamp(0, UTC)
        return Version(id=passage_id, number=number, reason=UNREADABLE, archived_at=archived_at,
                       content="", problem=problem)  # fmt: skip


def _identity(directory: Path) -> tuple[int, int] | None:
    """Which folder `directory` is now (device and inode), None if none is there."""
    try:
        info = directory.stat()
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _remove_lock_only_folder(directory: Path) -> None:
    """Remove `directory` if it holds nothing but a lock file (one filelock just made)."""
    try:
        if os.listdir(directory) == [LOCK_FILE]:
            (directory / LOCK_FILE).unlink()
            directory.rmdir()
    except OSError:  # Someone else's by now, or already gone: theirs to keep.
        pass
