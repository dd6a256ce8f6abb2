"""Reading passages from disk, refusing bad data with one line that names file, passage and problem.

A knowledge base is a directory with one pretty-printed JSON file per passage, named after its id
(`card-charged-twice.json`), so a change to one passage is a one-file diff. Files and folders whose
names start with a dot (history, temporary files, an import in progress) are not passages.

Every way a file can be broken (not UTF-8, malformed, nested 100,000 deep, a number of a million
digits, a FIFO or a directory where a file should be, unreadable) becomes one `KnowledgeBaseError`
line naming it. Reading a knowledge base to use it skips such a file with that line as a warning
(or keeps the file's last good version, for a store reloading it): one hand-editing slip must not
stop the app, nor freeze every later change. An import refuses it instead (`strict`).
"""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from chatbot import files
from chatbot.files import special_kind

# Defined there (light enough for the settings and an app's first screen), named here too.
from chatbot.knowledge_base.errors import KnowledgeBaseError as KnowledgeBaseError
from chatbot.knowledge_base.errors import require_directory as require_directory
from chatbot.knowledge_base.errors import shipped_knowledge_base as shipped_knowledge_base
from chatbot.knowledge_base.models import Passage, validate_passage_id

log = logging.getLogger(__name__)

IMPORT_DIR = ".import"
"""A committed import whose files are still being moved into place: readers see its passages."""
MAX_PASSAGE_FILE_BYTES = 1 << 20
"""A passage holds at most 4,000 characters; a file of a mebibyte is not one, whatever it says."""


class MissingFileError(KnowledgeBaseError):
    """The file is not there (a caller may take that to mean "no such passage")."""


def first_problem(error: ValidationError) -> tuple[str, str]:
    """Pydantic's first problem: where (dotted, "" for the whole value) and what, on one line."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    if first["loc"][:1] == ("tags",) and first["type"] in ("tuple_type", "string_type"):
        # Pydantic says "a valid tuple", a word no JSON file or command line uses.
        return "tags", 'expected a list of strings, such as ["rides", "night"]'
    if first["type"] == "string_too_long" and isinstance(first.get("input"), str):
        # Said as the app says it, with both numbers: pydantic's "String should have at most
        # 4000 characters" left the writer to count how far over they were.
        limit = first.get("ctx", {}).get("max_length")
        return where, f"{len(first['input']):,} characters; the limit is {limit:,}"
    return where, str(first["msg"]).removeprefix("Value error, ")


def describe_validation_error(error: ValidationError) -> str:
    """Condense pydantic's multi-line report to the first problem, on one line."""
    where, message = first_problem(error)
    return f"{where}: {message}" if where else message


def parse_passage(raw: Any, *, where: str) -> Passage:
    """Validate one passage object, naming `where` (file and position) in any error."""
    if not isinstance(raw, dict):
        raise KnowledgeBaseError(f"{where}: a passage must be a JSON object")
    label = raw.get("id")
    if isinstance(label, str) and label:
        where = f"{where}: passage {label[:80]!r}"
    try:
        return Passage.model_validate(raw)
    except ValidationError as error:
        raise KnowledgeBaseError(f"{where}: {describe_validation_error(error)}") from None
    except RecursionError:  # pydantic-core guards itself; this is a belt over its braces.
        raise KnowledgeBaseError(f"{where}: nested too deeply") from None


def _kind(mode: int, expected: str = "a JSON file") -> str:
    if stat.S_ISDIR(mode):
        return f"is a directory, expected {expected}"
    return f"is {special_kind(mode)}, not a regular file"


def read_regular_file(
    path: Path, *, limit: int | None = None, expected: str = "a JSON file"
) -> bytes:
    """The bytes of a regular file (`chatbot.files.read_regular_file`). Anything else is a
    `KnowledgeBaseError` naming `path`: a FIFO is refused without blocking on it, a directory or
    device without reading it (a directory as not the `expected` kind of file), a file larger
    than `limit` bytes as not a passage."""
    try:
        return files.read_regular_file(path, cap=limit)
    except FileNotFoundError:
        raise MissingFileError(f"{path}: no such file") from None
    except files.NotRegularFileError as error:
        raise KnowledgeBaseError(f"{path}: {_kind(error.mode, expected)}") from None
    except files.FileTooLargeError as error:
        raise KnowledgeBaseError(
            f"{path}: larger than {error.cap:,} bytes, not a passage"
        ) from None
    except OSError as error:
        raise KnowledgeBaseError(f"{path}: cannot read: {error.strerror or error}") from None


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members, refusing a key given twice: `json` keeps the last silently, so a
    file with "text" twice loaded with whichever the writer did not look at."""
    members: dict[str, Any] = {}
    for key, value in pairs:
        if key in members:
            raise _DuplicateKey(key)
        members[key] = value
    return members


# `json` says where an error is in the message's last words ("Invalid control character at"),
# then the position, which is said here as line and column: the sentence is ended without them.
_JSON_MESSAGES = {
    "Invalid control character at": (
        "a control character (a line break or tab, say) inside a string; write it as \\n or \\t"
    ),
    "Unterminated string starting at": "a string is not closed (a '\"' is missing)",
}


def _json_message(error: json.JSONDecodeError) -> str:
    before = error.doc[: error.pos].rstrip()
    if before.endswith(",") and error.doc[error.pos : error.pos + 1] in ("}", "]"):
        # Python's own words ("Expecting property name enclosed in double quotes") name
        # what it hoped for, not the comma most hand edits leave there.
        return "a ',' before a closing bracket (JSON allows no comma after the last item)"
    return _JSON_MESSAGES.get(error.msg, error.msg.removesuffix(" at"))


def decode_json(content: bytes, *, where: str) -> Any:
    """Parse JSON bytes (UTF-8, with or without a byte-order mark); every failure is one line."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise KnowledgeBaseError(f"{where}: not UTF-8 text (byte {error.start})") from None
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise KnowledgeBaseError(
            f"{where}: malformed JSON at line {error.lineno} column {error.colno}: "
            f"{_json_message(error)}"
        ) from None
    except _DuplicateKey as error:
        raise KnowledgeBaseError(
            f"{where}: malformed JSON: the key {error.key!r} is given twice in one object"
        ) from None
    except RecursionError:
        raise KnowledgeBaseError(f"{where}: JSON nested too deeply") from None
    except ValueError:  # Python refuses to convert an integer of thousands of digits.
        raise KnowledgeBaseError(f"{where}: a number in the JSON is too long") from None


def read_json(path: Path) -> Any:
    """Load a JSON file, turning every way it can fail into one `KnowledgeBaseError` line."""
    return decode_json(read_regular_file(path), where=str(path))


def check_unique(passages: Iterable[Passage], *, where: str) -> None:
    """Refuse two passages with one id."""
    seen: set[str] = set()
    for passage in passages:
        if passage.id in seen:
            raise KnowledgeBaseError(f"{where}: passage {passage.id!r}: duplicate id")
        seen.add(passage.id)


@dataclass(frozen=True, slots=True)
class Listing:
    """The passage files of a knowledge-base directory, and the entries that are not files."""

    files: dict[str, Path] = field(default_factory=dict)
    """Passage file by the id its name gives, in id order."""
    skipped: list[str] = field(default_factory=list)
    """One line per `*.json` entry that is not a regular file (a FIFO, a folder): never read."""


def _scan_json_entries(directory: Path, listing: Listing) -> None:
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return
    except OSError as error:
        raise KnowledgeBaseError(f"{directory}: cannot list: {error.strerror or error}") from None
    for entry in entries:
        if entry.name.startswith(".") or not entry.name.endswith(".json"):
            continue
        path = Path(entry.path)
        try:
            regular = entry.is_file()  # Follows a symlink; from the directory entry otherwise.
        except OSError:
            regular = False
        if regular:
            listing.files[path.stem] = path
        else:
            try:
                reason = _kind(path.stat().st_mode)
            except OSError as error:
                reason = f"cannot read: {error.strerror or error}"
            listing.skipped.append(f"{path}: skipped: {reason}")


def list_passage_files(directory: Path) -> Listing:
    """The passage files of a knowledge-base directory, and one line for each entry skipped.

    A committed import still being moved into place (`.import/`) counts as done: its files stand
    in for the ones they replace, so no reader ever sees half an import."""
    listing = Listing()
    # The import is listed first: a file moved out of it after this listing is found in the
    # directory, which is listed second.
    _scan_json_entries(directory / IMPORT_DIR, listing)
    staged = dict(listing.files)
    _scan_json_entries(directory, listing)
    listing.files.update(staged)
    ordered = dict(sorted(listing.files.items()))
    listing.files.clear()
    listing.files.update(ordered)
    return listing


def passage_files(directory: Path) -> list[Path]:
    """The passage files of a knowledge-base directory, in a stable order."""
    return list(list_passage_files(directory).files.values())


def read_passage_file(path: Path) -> bytes:
    """A passage file's bytes. One inside a committed import that was moved into place meanwhile
    is read from its place."""
    try:
        return read_regular_file(path, limit=MAX_PASSAGE_FILE_BYTES)
    except MissingFileError:
        if path.parent.name != IMPORT_DIR:
            raise
    return read_regular_file(path.parent.parent / path.name, limit=MAX_PASSAGE_FILE_BYTES)


def parse_passage_file(path: Path, content: bytes) -> Passage:
    """The passage in a passage file's bytes, checked against the file's name."""
    passage = parse_passage(decode_json(content, where=str(path)), where=str(path))
    if passage.id != path.stem:
        raise KnowledgeBaseError(
            f"{path}: passage {passage.id!r}: id does not match the file name {path.stem!r}"
        )
    return passage


@dataclass(frozen=True, slots=True)
class LoadedKnowledgeBase:
    """Every passage of a directory, and the entries skipped because they are not files."""

    passages: list[Passage]
    skipped: list[str]


SKIPPED = "skipped"
KEPT = "its last good version is still used"


def unusable(problem: str, *, kept: bool) -> str:
    """The warning for a passage that could not be read: its problem (naming the file), and
    whether it was skipped or its last good version kept."""
    return f"{problem} ({KEPT if kept else SKIPPED})"


def read_knowledge_base(
    directory: Path, *, strict: bool = False, last_good: Mapping[str, Passage] | None = None
) -> LoadedKnowledgeBase:
    """Load and validate every passage. A file that cannot be used is skipped, one line in
    `skipped` naming it and what is wrong; if `last_good` (by id) holds a version of it read
    earlier, that one is used instead, so a passage a hand edit broke stays answerable while
    everything else still loads. `strict` (an import): the first bad file is an error."""
    require_directory(directory)
    listing = list_passage_files(directory)
    passages: list[Passage] = []
    skipped = list(listing.skipped)
    for stem, path in listing.files.items():
        try:
            passages.append(parse_passage_file(path, read_passage_file(path)))
        except KnowledgeBaseError as error:
            if strict:
                raise
            kept = None if last_good is None else last_good.get(stem)
            if kept is not None:
                passages.append(kept)
            skipped.append(unusable(str(error), kept=kept is not None))
    return LoadedKnowledgeBase(passages, skipped)


def load_knowledge_base(directory: Path, *, strict: bool = False) -> list[Passage]:
    """Load and validate every passage of a knowledge-base directory; entries that are not files,
    and (unless `strict`) files that are not passages, are skipped with a warning naming each."""
    loaded = read_knowledge_base(directory, strict=strict)
    for line in loaded.skipped:
        log.warning("%s", line)
    return loaded.passages


def load_passages_file(path: Path) -> list[Passage]:
    """Load `{"passages": [...]}` (the cookbook's data file or this project's export), or a bare
    `[...]` list of passages, each checked alike."""
    data = read_json(path)
    if isinstance(data, list):
        items, prefix = data, ""
    elif isinstance(data, dict) and isinstance(data.get("passages"), list):
        items, prefix = data["passages"], "passages"
    else:
        raise KnowledgeBaseError(
            f"{path}: expected a list of passages or an object with a 'passages' list"
        )
    passages = [
        parse_passage(raw, where=f"{path}: {prefix}[{index}]") for index, raw in enumerate(items)
    ]
    check_unique(passages, where=str(path))
    return passages


def is_passage_id(name: str) -> bool:
    """True if `name` is a valid passage id (a history folder named otherwise is not a passage)."""
    try:
        validate_passage_id(name)
    except ValueError:
        return False
    return True


def export_passages(passages: Sequence[Passage]) -> dict[str, Any]:
    """The project's export shape: the cookbook's `passages` list plus titles and tags."""
    return {"passages": [p.model_dump(mode="json") for p in passages]}
