"""Reading what a program wrote to a pseudo-terminal (the `pty` module), for tests that run the
command line as a person at a terminal would."""

from __future__ import annotations

import errno
import os
import select
import time
from collections.abc import Callable


def read_until(controller: int, done: Callable[[bytes], bool], timeout: float = 60) -> bytes:
    """What the terminal's other side wrote, read until `done` says so of it, or the side is
    closed."""
    output = b""
    deadline = time.monotonic() + timeout
    while not done(output):
        left = deadline - time.monotonic()
        assert left > 0, f"timed out; the terminal shows {output!r}"
        ready, _, _ = select.select([controller], [], [], left)
        if not ready:
            continue
        try:
            chunk = os.read(controller, 65536)
        except OSError as error:  # EIO: the process closed its end of the terminal.
            if error.errno != errno.EIO:
                raise
            break
        if not chunk:
            break
        output += chunk
    return output
