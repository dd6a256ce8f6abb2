"""Deadlines for PostgreSQL calls: a call the server leaves unanswered has its connection cut.

libpq waits for an answer for ever. `connect_timeout` covers connecting only, and TCP keepalives
never fire while the server's kernel still acknowledges packets (a stopped or wedged server).
Without a deadline, one such call froze every later call of the store behind it, and a console
or bot waited with no word. A call that outlives its deadline has its socket shut down by one
watchdog thread: libpq then sees the connection close, psycopg raises `OperationalError`, and
the stores' handling of a lost connection (one error line now, a new connection next call)
takes over. Nothing here imports psycopg: it needs only the connection's file descriptor.

Cutting ends the call on our side only. A server that is alive but slow (a statement waiting on
a lock) went on running it, its backend connected and waiting until the lock was released; each
call cut and tried again on a new connection left one more, until a lock held a few minutes
would use up the server's connections. So the stores also tell the server, per connection
(`server_settings`), to end a statement a little before the deadline and to end a backend whose
client has gone. (A cancel request from the watchdog would not do: psycopg's C implementation
of libpq's blocking `PQcancel` holds the GIL while it waits, so a cancel sent to a server that
does not answer froze the whole process.)
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

DEFAULT_TIMEOUT_S = 15.0
"""How long one call may wait for the server's answer unless the settings say otherwise."""
SERVER_SHARE = 0.9
"""The part of the deadline one statement may run on the server: ended there first, it fails
with an error on a connection that stays usable, with time left for the error to arrive."""
CLIENT_CHECK_MS = 1000
"""How often a backend running a statement checks that its client is still connected (from
PostgreSQL 14, on Linux servers): a call cut here ends there within this."""


def server_settings(seconds: float, *, server_version: int) -> dict[str, int]:
    """What a connection whose calls have a deadline of `seconds` sets on a server of
    `server_version` (libpq's number: 150004 for 15.4): `statement_timeout` under the deadline,
    which covers waiting for a lock, and the check for a client gone, where the server has it."""
    settings = {"statement_timeout": max(int(seconds * SERVER_SHARE * 1000), 1)}
    if server_version >= 140000:
        settings["client_connection_check_interval"] = CLIENT_CHECK_MS
    return settings


@dataclass(eq=False)
class Deadline:
    """One armed call. `expired` turns true when the watchdog cut its connection."""

    at: float
    fd: int
    """A duplicate of the connection's socket, held while armed: shutting it down reaches the
    same socket even if libpq closed its own descriptor and the number was reused."""
    expired: bool = field(default=False)


class Watchdog:
    """Cuts the connections of calls past their deadline, from one daemon thread per process."""

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        # A forked child has the lock's state but not the thread: start afresh there.
        self._cond = threading.Condition()
        self._armed: set[Deadline] = set()
        self._thread: threading.Thread | None = None
        self._wakes_at: float | None = None
        """When the thread next looks, or None while it waits to be told: arming wakes it only
        to look sooner, so a stream of quick calls costs no thread switch each."""

    @contextmanager
    def guard(self, fileno: int, seconds: float) -> Iterator[Deadline]:
        """Arm a deadline `seconds` from now for the socket `fileno` while the block runs."""
        deadline = Deadline(at=time.monotonic() + seconds, fd=os.dup(fileno))
        with self._cond:
            self._armed.add(deadline)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="pg-deadline", daemon=True)
                self._thread.start()
            if self._wakes_at is None or deadline.at < self._wakes_at:
                self._cond.notify()
        try:
            yield deadline
        finally:
            with self._cond:
                self._armed.discard(deadline)
            os.close(deadline.fd)

    def _run(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                for deadline in [d for d in self._armed if d.at <= now]:
                    self._armed.discard(deadline)
                    deadline.expired = True
                    _cut(deadline.fd)
                self._wakes_at = min((d.at for d in self._armed), default=None)
                self._cond.wait(None if self._wakes_at is None else self._wakes_at - now)


def _cut(fd: int) -> None:
    """Shut the socket down both ways: the blocked read returns at once, as if the server left."""
    try:
        sock = socket.socket(fileno=os.dup(fd))
    except OSError:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # Already closed by the other side: the call is failing anyway.
    finally:
        sock.close()


watchdog = Watchdog()
"""The process's one watchdog; its thread starts with the first armed call."""
