"""The replay cache: recorded Valen answers that let the desk run with no network and no key.

An entry is keyed by what determines Valen's answer (model, predicate, input text) and nothing
else, so the same question and passage replay whatever base URL, key or dialect recorded them.
The file is pretty-printed JSON with sorted keys so recordings diff cleanly. Writers merge under
a file lock and replace the file atomically, so two processes recording at once lose nothing and a
crash never leaves half a file; a cache that is a symbolic link is written through to its target,
locked there too. Each entry a recording writes carries that recording's number
(`recording`: 1, 2, ...), since the file's order (by key, a hash) says nothing of which are new.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from chatbot.files import NotRegularFileError, read_regular_file, write_target, write_text_atomic
from chatbot.text import printable
from chatbot.valen.protocol import JSONError, loads, question_of

log = logging.getLogger(__name__)

FORMAT = "helpdesk-valen-replay/1"
# How long a recorder waits for another process to finish its write before giving up.
LOCK_S = 30.0
USABLE_AGAIN = "replay cache %s is usable again: recording resumed"
"""Warned, as the corruption was, once a recording finds the file usable again: the app shows
it as news, not as a problem."""


RECORDING = "recording"
"""An entry's field: the number of the recording into the file that wrote it (the first is 1), so
the newest recordings are known."""
SEED_QUESTIONS = (
    "I was charged twice for the same ride, can I get my money back?",
    "The bike's brakes were already worn when I took it. Will I have to pay for that?",
    "There were no free docks at the station so I kept riding. Will I pay a late fee?",
)
"""The cookbook's questions, in its order: the shipped cache holds their recorded answers, and
`read_entries` lists theirs first."""


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One recorded answer: a probability, or a refusal (probability None)."""

    input: str
    instructions: str
    model: str | None
    probability: float | None

    @property
    def key(self) -> str:
        return cache_key(input=self.input, instructions=self.instructions, model=self.model)

    def to_json(self) -> dict[str, Any]:
        recorded: dict[str, Any] = {
            "model": self.model,
            "instructions": self.instructions,
            "input": self.input,
        }
        if self.probability is None:
            recorded["refused"] = True
        else:
            recorded["probability"] = self.probability
        return recorded


def cache_key(*, input: str, instructions: str, model: str | None) -> str:
    """A stable digest of what determines the answer; JSON framing keeps the fields apart."""
    framed = json.dumps([model or "", instructions, input], ensure_ascii=False)
    return hashlib.sha256(framed.encode("utf-8")).hexdigest()


class CorruptCacheError(Exception):
    """The cache file exists but cannot be read as a replay cache."""


def read_entries(path: Path) -> dict[str, dict[str, Any]] | None:
    """The file's entries; None when there is no file. Anything unreadable, including a path that
    is not a regular file, JSON nested past the recursion limit or a number too long to convert,
    is a `CorruptCacheError`. The one reader of cache files: the replay cache and the app's
    suggestions both use it.

    Listed in the order the app offers their questions (`in_offer_order`), not the file's: by key,
    that was a hash's, and a few throwaway recordings pushed the cookbook's questions out."""
    read = _read_cache(path)
    return None if read is None else read[0]


def _read_cache(path: Path) -> tuple[dict[str, dict[str, Any]], object] | None:
    """`read_entries`, and the file's `format` (None when it names none)."""
    try:
        # Anything but a regular file (a FIFO, a device, a socket, a folder) is refused without
        # reading it or waiting on it.
        data = loads(read_regular_file(path))
    except FileNotFoundError:
        return None
    except NotRegularFileError as error:
        raise CorruptCacheError(f"{path}: {error.strerror}") from None
    except OSError as error:
        raise CorruptCacheError(f"{path}: cannot read: {error.strerror or error}") from None
    except JSONError as error:
        raise CorruptCacheError(f"{path}: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
        raise CorruptCacheError(f"{path}: not a replay cache (no 'entries' object)")
    entries: dict[str, dict[str, Any]] = data["entries"]
    return in_offer_order(entries), data.get("format")


def usable(entry: object) -> TypeGuard[dict[str, Any]]:
    """Whether a recorded `entry` can be replayed: an object that is refused or holds a
    probability from 0 to 1. Any other (a list, a probability of "high", 7.5 or NaN) replays as
    a miss."""
    if not isinstance(entry, dict):
        return False
    if entry.get("refused") is True:
        return True
    probability = entry.get("probability")
    if isinstance(probability, bool) or not isinstance(probability, int | float):
        return False
    return not math.isnan(probability) and 0.0 <= probability <= 1.0


def cache_problems(entries: dict[str, Any], format: object) -> list[str]:
    """What makes part of a cache that reads unusable, each said once as it loads: every entry
    that cannot be replayed was a silent `replay-miss`, pointing away from the file."""
    problems = []
    if format is not None and format != FORMAT:
        named = printable(repr(format)[:80])
        problems.append(
            f"its format is {named}, which this helpdesk does not know (it reads {FORMAT})"
        )
    unusable = sum(not usable(entry) for entry in entries.values())
    if unusable:
        problems.append(
            f"{unusable} of {len(entries)} entries cannot be replayed (each needs a probability"
            ' from 0 to 1, or "refused": true) and replay as misses'
        )
    return problems


def in_offer_order(entries: dict[str, Any]) -> dict[str, Any]:
    """`entries` reordered: the cookbook's questions first, in its order (`SEED_QUESTIONS`), then
    the most recently recorded (a higher `recording` first), then the rest (recorded before
    entries were numbered, or odd) as they came."""
    seeds = {question: rank for rank, question in enumerate(SEED_QUESTIONS)}

    def rank(item: tuple[str, Any]) -> tuple[int, int]:
        entry = item[1]
        if not isinstance(entry, dict):
            return (2, 0)
        seed = seeds.get(question_of(entry.get("input")) or "")
        if seed is not None:
            return (0, seed)
        number = _recording(entry)
        return (1, -number) if number is not None else (2, 0)

    return dict(sorted(entries.items(), key=rank))  # Stable: ties keep the file's order.


def _recording(entry: dict[str, Any]) -> int | None:
    number = entry.get(RECORDING)
    return number if isinstance(number, int) and not isinstance(number, bool) else None


def _last_recording(entries: dict[str, Any]) -> int:
    """The highest recording number among `entries`; 0 for none."""
    numbers = (_recording(e) for e in entries.values() if isinstance(e, dict))
    return max((n for n in numbers if n is not None), default=0)


FileState = tuple[int, int, int, int, int, int] | None
"""What tells one version of a file from another (device, inode, mode, size, modified and changed
times in ns); None when there is no file."""


def file_state(path: Path) -> FileState | str:
    """`path`'s `FileState`, or why it cannot be had (a folder on the way is unreadable, say)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    except OSError as error:
        return error.strerror or str(error)
    return (info.st_dev, info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns,
            info.st_ctime_ns)  # fmt: skip


class ReplayCache:
    """Recorded answers on disk, loaded once and merged back on every recording."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: dict[str, dict[str, Any]] | None = None
        self.corrupt: str | None = None
        self._corrupt_state: FileState | str = None
        """The file as it was when found corrupt: once it is not (repaired, moved aside), a
        recording reads it again, as the warning promised."""
        self.missing = False
        self._warned_missing = False

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            state = file_state(self.path)  # Before reading: a change after it is seen later.
            entries: dict[str, dict[str, Any]] | None = {}
            try:
                read = _read_cache(self.path)
            except CorruptCacheError as error:
                # Replay without the file rather than crash, and say so once; `record` leaves the
                # file alone so whatever is in it can still be repaired.
                self._mark_corrupt(error, state)
            else:
                entries = None if read is None else read[0]
                for problem in [] if read is None else cache_problems(*read):
                    log.warning("replay cache %s: %s", printable(str(self.path)), problem)
            self.missing = entries is None
            self._entries = entries or {}
        return self._entries

    def _mark_corrupt(self, error: CorruptCacheError, state: FileState | str) -> None:
        """Remember the file is unusable, as it was (`state`), and warn about it, once until it
        is usable again."""
        if self.corrupt is None:
            log.warning(
                "replay cache ignored, and not written until repaired or moved aside: %s",
                printable(str(error)),
            )
        self.corrupt = str(error)
        self._corrupt_state = state

    def _still_corrupt(self) -> bool:
        """Whether the file found corrupt is still the same file: one stat per recording, and
        the file is read again only once it changed or went."""
        return self.corrupt is not None and file_state(self.path) == self._corrupt_state

    def check(self, *, replaying: bool) -> None:
        """Read the file now rather than at the first judgment, so that a corrupt one (or, when
        `replaying`, a missing one) is warned about as an app starts, not at its first question."""
        self._load()
        if replaying:
            self._warn_if_missing()

    def _warn_if_missing(self) -> None:
        if self.missing and not self._warned_missing:
            # Replaying from a file that is not there makes every judgment a miss: most likely a
            # mistyped --cache or VALEN_CACHE, so say it once rather than quietly judge nothing.
            self._warned_missing = True
            log.warning(
                "replay cache %s does not exist: every passage is a replay miss (not judged)",
                printable(str(self.path)),
            )

    def lookup(self, *, input: str, instructions: str, model: str | None) -> CacheEntry | None:
        """The recorded answer for this exact input, predicate and model, if any."""
        entries = self._load()
        self._warn_if_missing()
        raw = entries.get(cache_key(input=input, instructions=instructions, model=model))
        if not usable(raw):  # None recorded, or unusable (warned of as the file loaded).
            return None
        probability = None if raw.get("refused") is True else float(raw["probability"])
        return CacheEntry(input, instructions, model, probability)

    def holds_unusable(self, *, input: str, instructions: str, model: str | None) -> bool:
        """Whether an answer is recorded for this exact input, predicate and model that cannot be
        replayed (`usable`: a probability of "high", 7.5 or NaN): its miss is the file's, not a
        gap in the recordings."""
        entries = self._load()
        key = cache_key(input=input, instructions=instructions, model=model)
        return key in entries and not usable(entries[key])

    def __len__(self) -> int:
        return len(self._load())

    def record(self, entries: Iterable[CacheEntry]) -> int:
        """Merge `entries` into the file under a lock and replace it atomically; return how many."""
        new = {entry.key: entry.to_json() for entry in entries}
        if not new:
            return 0
        self._load()
        if self._still_corrupt():
            return 0  # Already warned when it was found corrupt.
        # Imported when recording only: replaying takes no lock.
        from filelock import FileLock, Timeout

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Beside the file written (a link's target): two links to one shared cache lock it
            # as one.
            target = write_target(self.path)
            lock = FileLock(str(target.with_name(f".{target.name}.lock")), timeout=LOCK_S)
            with lock:
                # Re-read inside the lock: another process may have recorded since we loaded.
                state = file_state(self.path)
                try:
                    merged = read_entries(self.path) or {}
                except CorruptCacheError as error:
                    self._mark_corrupt(error, state)
                    return 0
                # This recording's number, after every other's: what the file lists first among
                # its questions, after the cookbook's, is what was recorded last.
                number = _last_recording(merged) + 1
                merged.update({key: {**entry, RECORDING: number} for key, entry in new.items()})
                write_json_atomic(self.path, {"format": FORMAT, "entries": merged})
                self._entries = merged
                self.missing = False
                if self.corrupt is not None:
                    # Said, as the corruption was: the operator who repaired the file sees it work.
                    log.warning(USABLE_AGAIN, printable(str(self.path)))
                    self.corrupt = None
        except (OSError, Timeout) as error:
            # A recording that cannot be saved must not cost the customer their answer. Why, in
            # the system's words ("Read-only file system", "No space left on device"): the
            # exception's name said nothing, and its text repeats the path.
            if isinstance(error, Timeout):
                reason = f"another process held its lock for over {LOCK_S:g} s"
            else:
                reason = error.strerror or type(error).__name__
            log.warning("could not record into %s: %s", printable(str(self.path)), reason)
            return 0
        return len(new)


def write_json_atomic(path: Path, data: Any) -> None:
    """Write `data` as sorted, indented JSON, atomically (see `chatbot.files`)."""
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
