"""Database URLs as people write them (`--db`, `HELPDESK_DB`): which kind, and how to show one.

A PostgreSQL URL may carry a password (`postgresql://ana:secret@db:5432/helpdesk`). It is passed
to the driver as it is and never shown: `display` drops it, and `redact` scrubs it (and the whole
URL) out of any text about to be printed or logged, such as a driver's error message.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
POSTGRES_SCHEMES = ("postgresql", "postgres")


def scheme(url: str) -> str | None:
    """The URL's scheme in lower case, or None for a plain file path."""
    match = _SCHEME.match(url)
    return None if match is None else match.group(1).lower()


def is_postgres(url: str) -> bool:
    return scheme(url) in POSTGRES_SCHEMES


POSTGRES_URL_FORM = "postgresql://user@host:5432/dbname"


def postgres_url_problem(url: str) -> str | None:
    """Why a `postgresql://` URL names no database, or None: the database is the path after the
    host (or `?dbname=`, or a `?service=` entry of pg_service.conf). With none, libpq connects to
    the database named as the user (or `PGDATABASE`), `postgres` for `postgres@`, and the help
    desk made its tables there. The URL itself is never part of the answer (it may hold a
    password)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None  # Malformed otherwise: the driver's refusal says how.
    if unquote(parts.path.removeprefix("/")).strip():
        return None
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name.lower() in ("dbname", "service") and value.strip():
            return None
    return (
        "the URL names no database (PostgreSQL would use the one named as the user): write it"
        f" as {POSTGRES_URL_FORM}"
    )


SQLITE_URL_FORM = "sqlite:///path/to/file.sqlite3"


def sqlite_url_problem(db: str) -> str | None:
    """Why `db` (`--db`, `HELPDESK_DB`) names no database this helpdesk can open, or None: a
    plain path, a `postgresql://` URL, or `sqlite://` followed by an absolute path.

    `sqlite://` then a relative path (`sqlite://helpdesk.db`) is refused rather than guessed at:
    a URL's part after `//` is a host, and SQLAlchemy's `sqlite:///x` is relative where ours is
    absolute, so either reading would surprise someone. A relative path is given as it is."""
    kind = scheme(db)
    if kind is None or kind in POSTGRES_SCHEMES:
        return None
    if kind != "sqlite":
        return (
            f"unknown database scheme {kind!r}; use a SQLite file path, {SQLITE_URL_FORM} or a "
            "postgresql:// URL"
        )
    rest = db[_SCHEME.match(db).end() :]  # type: ignore[union-attr]
    if "?" in rest:
        return f"a SQLite URL takes no options (?…): write it as {SQLITE_URL_FORM}"
    if not rest.startswith("/"):
        return (
            f"sqlite:// is followed by an absolute path, as in {SQLITE_URL_FORM}; give a "
            "relative path without sqlite://"
        )
    return None


def sqlite_url_path(db: str) -> str:
    """The path a `sqlite://` URL that `sqlite_url_problem` accepts names, as a plain path (so
    it is shown as one): `sqlite:////tmp/x.db` (SQLAlchemy's absolute form) is `/tmp/x.db`,
    not `//tmp/x.db`. Anything else is returned as it is."""
    if scheme(db) != "sqlite" or sqlite_url_problem(db) is not None:
        return db
    return "/" + db[_SCHEME.match(db).end() :].lstrip("/")  # type: ignore[union-attr]


def display(url: str) -> str:
    """The URL without its password (user, host, port and database stay: they say where)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:  # A malformed port or host: show nothing that might be the password.
        return f"{scheme(url) or 'database'}://…"
    if password is None and "@" not in parts.netloc and "password" not in parts.query.lower():
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{user}@{host}" if user else host
    return urlunsplit((parts.scheme, netloc, parts.path, _redact_query(parts.query), ""))


def _redact_query(query: str) -> str:
    """`?password=…` is a libpq parameter too."""
    return re.sub(r"(?i)(^|&)(password)=[^&]*", r"\1\2=***", query)


def redact(text: str, url: str) -> str:
    """`text` with the URL (shown without its password) and the password itself scrubbed out."""
    text = text.replace(url, display(url))
    secrets: list[str] = []
    try:
        parts = urlsplit(url)
        secrets += [parts.password or "", unquote(parts.password or "")]
        secrets += [unquote(m) for m in re.findall(r"(?i)(?:^|&)password=([^&]*)", parts.query)]
    except ValueError:
        pass
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    return text
