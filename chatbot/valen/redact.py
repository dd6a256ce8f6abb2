"""Keeping secrets out of everything the client says: the API key, and credentials in the URL.

Valen's strings (error bodies, answer names, types, probabilities) can echo the key or the URL
back, so every one of them goes through a `Redactor` before it is kept or shown, and every message
that names the URL uses `display_url`, never the URL itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import (
    SplitResult,
    parse_qsl,
    quote,
    quote_plus,
    unquote,
    unquote_plus,
    urlsplit,
    urlunsplit,
)

REDACTED = "[redacted]"
# Secrets shorter than this are hidden in URLs but not searched for in free text: replacing every
# "v1" or "42" in a server's message would make it unreadable and protect almost nothing.
MIN_SCRUBBED_CHARS = 4


def key_problem(key: str) -> str | None:
    """Why `key` cannot go into an HTTP header, in words that do not reveal it; None when it can.

    Header values are printable ASCII with inner spaces or tabs; anything else makes the HTTP
    library raise (a non-ASCII letter) or would split the header (a line break).
    """
    for position, char in enumerate(key, start=1):
        if char in "\r\n":
            return f"it holds a line break (character {position})"
        if ord(char) > 0x7E:
            return f"it holds a non-ASCII character (character {position})"
        if (ord(char) < 0x20 and char != "\t") or ord(char) == 0x7F:
            return f"it holds a control character (character {position})"
    if key != key.strip(" \t"):
        return "it starts or ends with whitespace"
    return None


def _split(url: str) -> SplitResult | None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number)
    except ValueError:
        return None
    return parts


def display_url(url: str, *, key: str = "") -> str:
    """`url` safe to print: the user and password replaced, every query value too (a URL has no
    standard place for a key, so `?api_key=…`, `?token=…` and the rest all count), a query item
    with no `=` whole (`?sk-…` is a value as much as a name), and the API key `key` wherever else
    it appears (a path segment: `/v1/sk-…`). Every message that names the URL, from the client or
    a command, shows it through this one function."""
    parts = _split(url)
    if parts is None:
        return "(an unreadable URL)"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    query = "&".join(
        f"{name}={REDACTED}" if sep else REDACTED
        for name, sep, _value in (pair.partition("=") for pair in parts.query.split("&") if pair)
    )
    shown = urlunsplit(parts._replace(netloc=netloc, query=query, fragment=""))
    return scrub_key(shown, key)


def scrub_key(text: str, key: str) -> str:
    """`text` with the API key replaced, as written and as a URL would spell it. Unlike
    `Redactor`, a key of any length: this is for URLs and start lines, never a server's prose."""
    if not key:
        return text
    for form in sorted({key, quote(key, safe=""), quote(key), quote_plus(key)}, key=len)[::-1]:
        text = text.replace(form, REDACTED)
    return text


def url_secrets(url: str) -> list[str]:
    """The strings of `url` that `display_url` hides, as written and as decoded."""
    parts = _split(url)
    if parts is None:
        return [url]
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        user, _, password = userinfo.partition(":")
        found += [userinfo, user, password, unquote(user), unquote(password)]
    for pair in parts.query.split("&"):
        name, sep, value = pair.partition("=")
        if not sep:  # Shown as a whole: see `display_url`.
            value = name
        found += [value, unquote_plus(value)]
    found += [value for _name, value in parse_qsl(parts.query)]
    return found


def endpoint(base_url: str, route: str) -> str:
    """`route` appended to the base URL's path, keeping its query after it, not before."""
    parts = _split(base_url)
    if parts is None:
        return base_url.rstrip("/") + route
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + route))


class Redactor:
    """Replaces each secret with `[redacted]` wherever it appears in a string."""

    def __init__(self, secrets: Iterable[str]) -> None:
        wanted: set[str] = set()
        for secret in secrets:
            # The secret as written, as it reads once whitespace is collapsed to one line, and as
            # JSON writes it (a quote or backslash escaped) when a reply's structure is quoted.
            collapsed = " ".join(secret.split())
            escaped = [json.dumps(form, ensure_ascii=False)[1:-1] for form in (secret, collapsed)]
            for form in (secret, collapsed, *escaped):
                if len(form) >= MIN_SCRUBBED_CHARS:
                    wanted.add(form)
        # Longest first, so a secret that contains another is replaced whole.
        self._secrets = sorted(wanted, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def one_line(self, text: str, limit: int) -> str:
        """Scrubbed as written (a key with tabs or doubled spaces would no longer match once the
        whitespace is collapsed), collapsed to one line, scrubbed again, and only then cut, so no
        prefix of a secret survives the cut."""
        return self(" ".join(self(text).split()))[:limit]
