"""Saying so when the desk is slow: a callback run only if a block takes longer than a moment."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager

DESK_STALL_S = 0.5
"""A read still unanswered after this long waits on something (a table locked, a server gone
silent): once it answers, that is over, and a line that said the desk could not be reached can
say it is back. A read answering at once tells nothing: a database can read while it cannot
write (another process holding SQLite's write lock)."""


@contextmanager
def if_longer(seconds: float, callback: Callable[..., object], *args: object) -> Iterator[None]:
    """Run `callback(*args)` if the block is still running after `seconds`. On the event loop's
    own timer, not a widget's `set_timer`: that one's callback is a message to the widget, which
    the handler waiting in the block keeps from being read until the desk has answered."""
    timer = asyncio.get_running_loop().call_later(seconds, callback, *args)
    try:
        yield
    finally:
        timer.cancel()
