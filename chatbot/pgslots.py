"""A PostgreSQL server with no connection to spare, said as such.

Every help-desk process holds a few connections for as long as it runs (README: Many machines),
so a busy desk can use up what the server allows: its `max_connections`, or a `CONNECTION LIMIT`
on the database or the role. The server then refuses the next connection, and libpq's message
("connection failed: ... FATAL: too many connections for database ...") read as any other
outage. This names the cause and what to do, and gives the error a type of its own, so that
`helpdesk serve` can tell a browser the help desk is full (try again soon) rather than that it
failed. Nothing here imports psycopg: libpq reports a refused connection without an SQLSTATE,
so it is known by its words.
"""

from __future__ import annotations

from chatbot.errors import HelpdeskError

REFUSALS = (
    "too many clients already",  # The server's max_connections.
    "too many connections for",  # A database's or a role's CONNECTION LIMIT.
    "remaining connection slots are reserved",  # Only the superusers' reserved slots are left.
    "no more connections allowed",  # PgBouncer's max_client_conn.
)
"""What PostgreSQL (and PgBouncer) say when they refuse a connection for want of a free one:
SQLSTATE 53300, which libpq does not pass on for a connection that never opened."""

WHAT_TO_DO = (
    "every help-desk process holds a few (README: Many machines): run fewer, or raise the"
    " server's max_connections or the database's CONNECTION LIMIT"
)


class NoConnectionToSpare(HelpdeskError):
    """The database server refused a connection because every one it allows is in use. Not a
    setting's fault: it passes once other processes close theirs."""


def no_connection_to_spare(reason: str) -> bool:
    """Whether `reason`, a failure to connect, is the server refusing for want of a free
    connection."""
    lowered = reason.lower()
    return any(refusal in lowered for refusal in REFUSALS)


def full_reason(reason: str) -> str:
    """`reason` (libpq's words) with what they mean and what to do."""
    return f"no connection to spare ({reason}); {WHAT_TO_DO}"
