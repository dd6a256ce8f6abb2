"""Crash-safe file writes: a reader sees the old file or the new one, never half of one; reads of
regular files alone, never waiting on a FIFO; and what a path that is not a regular file is, for
the errors that refuse it.

Shared by the knowledge base (passage files, history, imports, exports) and the Valen replay cache.
New files get the permissions the person's umask gives (`umask 077` keeps them private); a file
that is replaced keeps the mode it had. A path that is a symbolic link is written through to its
target, as editors and git do: replacing the link made it a plain file, and the file it pointed
at (a dotfiles repository's, a cache shared by a team) was left as it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

TEMPORARY_SUFFIX = ".tmp"


def fsync_directory(directory: Path) -> None:
    """Flush a directory entry change (a rename or unlink) to disk, where the OS allows it."""
    # Windows cannot open a directory; the rename itself is already durable enough there.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def make_private_folders(folder: Path) -> None:
    """Create `folder` and any missing parents readable by this user alone (0700), whatever the
    umask: the folders that hold the database. Folders that exist are left as they are."""
    missing: list[Path] = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for each in reversed(missing):
        try:
            each.mkdir(mode=0o700)
            each.chmod(0o700)  # mkdir's mode is masked by the umask; chmod's is not.
        except FileExistsError:
            pass  # Another process made it meanwhile.


def write_new_file(path: Path, data: bytes) -> None:
    """Create `path` (it must not exist), write `data` and fsync it. The mode is 0666 less the
    umask, as for any file a program creates; the kernel applies the umask, so no thread's view of
    it is ever changed."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def _temporary_beside(path: Path) -> Path:
    # Dot-named so a leftover is never read as a passage; `.tmp` so `sweep_temporaries` finds it.
    return path.with_name(f".{path.name}.{secrets.token_hex(6)}{TEMPORARY_SUFFIX}")


def write_target(path: Path) -> Path:
    """The file a write to `path` replaces: `path`, or, when it is a symbolic link, the file it
    leads to (through every link on the way; one that does not exist yet is made there). A loop
    of links is an `OSError`, as opening it is."""
    if not path.is_symlink():
        return path
    target = Path(os.path.realpath(path))
    if target.is_symlink():  # Only a loop is left a link by `realpath`.
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path))
    return target


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write `data` to a temporary file beside `path`, fsync it, rename it over `path`; a link
    at `path` is written through (`write_target`), the temporary file beside its target."""
    path = write_target(path)
    try:
        mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    while True:
        tmp = _temporary_beside(path)
        try:
            write_new_file(tmp, data)
            break
        except FileExistsError:  # 48 random bits collided: draw again.
            continue
    try:
        if mode is not None:
            os.chmod(tmp, mode)  # A replaced file keeps the permissions someone gave it.
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)


def write_text_atomic(path: Path, text: str) -> None:
    """`write_bytes_atomic` for UTF-8 text, newlines written as `\\n` on every system."""
    write_bytes_atomic(path, text.encode("utf-8"))


def sweep_temporaries(directory: Path) -> list[Path]:
    """Delete the temporary files an interrupted write left in `directory`; returns them.

    Only for a caller that holds the directory's lock: every writer there holds it too, so any
    temporary file found is from a process that died mid-write."""
    removed: list[Path] = []
    try:
        candidates = list(directory.glob(f".*{TEMPORARY_SUFFIX}"))
    except OSError:
        return removed
    for path in candidates:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path)
    return removed


def remove_durably(path: Path) -> None:
    """Delete `path` and flush the directory, so an undone delete cannot reappear after a crash."""
    path.unlink()
    fsync_directory(path.parent)


def special_kind(mode: int) -> str:
    """What a path that is not a regular file is, from its `st_mode`, for a one-line error."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device or other special file"


class NotRegularFileError(OSError):
    """A path that is there but is not a regular file (a folder, a FIFO, a device, a socket):
    refused before it is read, or waited on. Its `strerror` says what it is."""

    def __init__(self, path: Path, mode: int) -> None:
        self.mode = mode
        self.kind = special_kind(mode)
        super().__init__(errno.EINVAL, f"is {self.kind}, not a regular file", str(path))


class FileTooLargeError(OSError):
    """A regular file larger than a reader's `cap`: refused by its size before it is read, or
    when it grew past the cap while being read."""

    def __init__(self, path: Path, cap: int) -> None:
        self.cap = cap
        super().__init__(errno.EFBIG, f"larger than {cap:,} bytes", str(path))


def special_file(path: Path) -> str | None:
    """What `path` is when it is there and not a regular file (`special_kind`), without opening
    it; None for a regular file, or when nothing can be learnt (missing, unreadable)."""
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):
        return None
    return None if stat.S_ISREG(mode) else special_kind(mode)


def read_regular_file(
    path: Path, *, limit: int = -1, follow: bool = True, cap: int | None = None
) -> bytes:
    """The bytes of `path` (at most `limit`) if it is a regular file; anything else is a
    `NotRegularFileError`, raised without reading it or waiting on it (a FIFO's open waits for a
    writer, and hung what read it). Without `follow`, a symbolic link is refused too. With a
    `cap` (in place of a `limit`), a file larger than it is a `FileTooLargeError`, refused by its
    size before it is read."""
    # Looked at before opening: opening a device can do something of its own (a terminal, a tape).
    mode = (path.stat() if follow else path.lstat()).st_mode
    if not stat.S_ISREG(mode):
        raise NotRegularFileError(path, mode)
    # Something else may be put there between the stat and the open: O_NONBLOCK keeps the open of
    # a FIFO from waiting for a writer, O_NOCTTY keeps a terminal from becoming ours, and the
    # fstat of what was opened decides.
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0)
    flags |= getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(path, flags), "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(path, info.st_mode)
        if cap is None:
            return handle.read(limit)
        if info.st_size > cap:
            raise FileTooLargeError(path, cap)
        data = handle.read(cap + 1)
        if len(data) > cap:  # It grew while being read.
            raise FileTooLargeError(path, cap)
        return data
