"""Making a folder read-only for a test, the way a read-only mount is, even for root."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def read_only(directory: Path) -> Iterator[None]:
    """`directory` refuses every write until the block ends.

    Root ignores permission bits, so as root the folder is bind-mounted read-only over itself: a
    real read-only mount (EROFS), as on a CD, a snapshot or a `ro` network share. Anyone else gets
    the permission bits removed (EACCES), which fails the same writes."""
    if os.geteuid() == 0:
        subprocess.run(["mount", "--bind", str(directory), str(directory)], check=True)
        try:
            subprocess.run(
                ["mount", "-o", "remount,ro,bind", str(directory), str(directory)], check=True
            )
            yield
        finally:
            subprocess.run(["umount", str(directory)], check=True)
        return
    modes = {path: path.stat().st_mode for path in [directory, *directory.rglob("*")]}
    for path in modes:
        if path.is_dir():
            path.chmod(0o555)
    try:
        yield
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
