"""Crash-safe file writes: a reader sees the old file or the new one, never half of one.

Shared by the knowledge base (passage files, history) and the Valen replay cache.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def fsync_directory(directory: Path) -> None:
    """Flush a directory entry change (a rename or unlink) to disk, where the OS allows it."""
    # Windows cannot open a directory; the rename itself is already durable enough there.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` (UTF-8) to a dot-named temporary file beside `path`, fsync it, rename it over
    `path`. The temporary name starts with a dot so a leftover one is never read as a passage."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp creates the file private (0600); keep the mode the file had, or a normal one.
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o644
        os.chmod(tmp, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)


def remove_durably(path: Path) -> None:
    """Delete `path` and flush the directory, so an undone delete cannot reappear after a crash."""
    path.unlink()
    fsync_directory(path.parent)
