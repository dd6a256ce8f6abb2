"""Keeping secrets out of everything the client says: the API key, and credentials in the URL.

Valen's strings (error bodies, answer names, types, probabilities) can echo the key or the URL
back, in any spelling (percent-encoded, JSON-escaped, base64 even inside a longer string, hex,
upper-case, reversed...), so every one of them goes through a `Redactor` before it is kept or
shown, and every message that names the URL uses `display_url`, never the URL itself.
`scrub_key` is the same `Redactor`, for the key alone.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import (
    SplitResult,
    parse_qsl,
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
    """`text` with the API key replaced in every spelling `Redactor` knows. Unlike `Redactor`'s
    default, a key of any length: this is for URLs and start lines, never a server's prose."""
    if not key:
        return text
    return Redactor([key], min_chars=1)(text)


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
        # httpx sends these as Basic auth, which a server may echo as the header carried them.
        found += _base64_forms(f"{unquote(user)}:{unquote(password)}")
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


def _hex(byte: int) -> str:
    """A byte's two hex digits as a pattern that takes either case (`%2f` as well as `%2F`)."""
    return "".join(f"[{d.lower()}{d}]" if d.isalpha() else d for d in f"{byte:02X}")


# A run of whitespace in a secret, in any spelling of any whitespace, as many as there are: a
# message collapsed to one line, `quote_plus`'s "+", percent- and JSON-escaped tabs and breaks.
_WHITESPACE = "(?:" + "|".join(
    [r"\s", r"\+", *(f"%{_hex(byte)}" for byte in b" \t\n\r"), r"\\[tnr]",
     *(rf"\\u{_hex(0)}{_hex(byte)}" for byte in b" \t\n\r")]
) + ")+"  # fmt: skip


def _spellings(char: str, *, any_case: bool = False) -> str:
    """A pattern for every way a server may spell `char` in an echo: as itself, percent-encoded
    (any byte, either case: `quote`, `quote_plus`, JavaScript's `encodeURIComponent` all differ
    on which they encode), JSON-escaped (`\\"`, `\\u0073`, `\\/`) or HTML-escaped; with
    `any_case`, the same for its upper- and lower-case letter too (a key upper-cased)."""
    chars = {char}
    if any_case:
        chars |= {other for other in (char.lower(), char.upper()) if len(other) == 1}
    forms: set[str] = set()
    for one in chars:
        forms |= {re.escape(one), re.escape(json.dumps(one)[1:-1]), re.escape(html.escape(one))}
        encoded = one.encode("utf-8", "surrogatepass")
        forms.add("".join(f"%{_hex(byte)}" for byte in encoded))
        if ord(one) <= 0xFFFF:
            forms.add(rf"\\u{_hex(ord(one) >> 8)}{_hex(ord(one) & 0xFF)}")
        if one == "/":
            forms.add(r"\\/")
    return "(?:" + "|".join(sorted(forms, key=len, reverse=True)) + ")"


def _spelled(secret: str, *, any_case: bool = False) -> str:
    """`secret` in every spelling at once (see `_spellings`), each of its whitespace runs as any
    run of whitespace."""
    return "".join(
        _WHITESPACE if run.isspace() else _spellings(run, any_case=any_case)
        for run in re.findall(r"\s+|\S", secret)
    )


def _base64_forms(text: str) -> list[str]:
    """`text` as base64, standard and URL-safe, padded or not: Basic auth carries credentials
    so, and a server may echo the header it refused."""
    raw = text.encode("utf-8", "surrogatepass")
    forms = [base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()]
    return [*forms, *(form.rstrip("=") for form in forms)]


_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")
"""The characters of base64, standard and URL-safe."""
_BASE64_CLASS = "[A-Za-z0-9+/_-]"
_URL_SAFE = str.maketrans("+/", "-_")


def _base64_inside(text: str) -> list[str]:
    """The characters of base64 that `text` alone decides wherever it sits in the encoded
    string: base64 turns three bytes into four characters, so `text` after a prefix of 0, 1 or
    2 bytes (mod 3) is spelled three different ways, and only the characters wholly inside its
    bits are the same whatever comes before and after it (`base64("Bearer " + key)`, an echoed
    Authorization header, holds none of the key's own base64). Standard and URL-safe."""
    raw = text.encode("utf-8", "surrogatepass")
    forms: list[str] = []
    for shift in range(3):
        encoded = base64.b64encode(bytes(shift) + raw + bytes(2)).decode()
        # Character j is bits [6j, 6j + 6); the secret's are [8 * shift, 8 * (shift + len)).
        first, end = -(-8 * shift // 6), 8 * (shift + len(raw)) // 6
        inside = encoded[first:end]
        forms += [inside, inside.translate(_URL_SAFE)]
    return forms


@dataclass(frozen=True, slots=True)
class _Patterns:
    """A secret's spellings as a few regexes, each scanned on its own: one alternation of them
    all tried every branch at every character, five times slower on a 1 MB reply."""

    plain: tuple[re.Pattern[str], ...]
    inside: re.Pattern[str] | None
    """Its characters inside a longer base64 string (see `_base64_inside`), with the one
    character after them that it shares with what follows, and any padding; a match is widened
    by the one before them too, which it shares with what precedes (kept out of the regex: an
    optional first character defeats the search's skipping to where a match can start)."""

    def spans(self, text: str) -> list[tuple[int, int]]:
        found = [match.span() for pattern in self.plain for match in pattern.finditer(text)]
        if self.inside is not None:
            for match in self.inside.finditer(text):
                start, end = match.span()
                found.append((start - (start > 0 and text[start - 1] in _BASE64), end))
        return found


@lru_cache(maxsize=64)
def _patterns(secret: str) -> _Patterns:
    """`secret` in every spelling at once (see `_spelled`), plus, for a secret long enough that
    these are no everyday text: in any letter case, reversed, as base64 (alone, as Basic auth
    carries it, and inside a longer base64 string at any alignment) and as hex in either case."""
    if len(secret) < MIN_SCRUBBED_CHARS:
        return _Patterns((re.compile(_spelled(secret)),), None)
    plain = [_spelled(secret, any_case=True)]
    if secret[::-1] != secret:
        plain.append(_spelled(secret[::-1], any_case=True))
    # The key alone, and as a Basic auth user or password would carry it; and as hex.
    encoded = {f for text in (secret, f"{secret}:", f":{secret}") for f in _base64_forms(text)}
    plain.append(
        "|".join(
            [
                *(re.escape(form) for form in sorted(encoded, key=len, reverse=True)),
                "".join(_hex(byte) for byte in secret.encode("utf-8", "surrogatepass")),
            ]
        )
    )
    inside = sorted(set(_base64_inside(secret)), key=len, reverse=True)
    return _Patterns(
        tuple(re.compile(pattern) for pattern in plain),
        re.compile("(?:" + "|".join(map(re.escape, inside)) + f"){_BASE64_CLASS}?={{0,2}}"),
    )


class Redactor:
    """Replaces each secret with `[redacted]` wherever it appears in a string, in any spelling a
    server might echo it in: as written; percent-encoded (`quote`, `quote_plus`, upper- or
    lower-case hex); JSON- or HTML-escaped; with its whitespace collapsed to one line; and, for a
    secret of `MIN_SCRUBBED_CHARS` or more, in any letter case, reversed, as hex, and as base64
    alone (Basic auth) or inside a longer base64 string (an echoed `Bearer` header) at any byte
    alignment, standard or URL-safe, padded or not. The one scrubber: `scrub_key` (URLs, start
    lines, the CLI's own lines) is this too, so the two cannot disagree about which forms count."""

    def __init__(self, secrets: Iterable[str], *, min_chars: int = MIN_SCRUBBED_CHARS) -> None:
        wanted: set[str] = set()
        for secret in secrets:
            # The collapsed form too, for a secret with leading or trailing whitespace, which
            # collapsing drops at the edges of a message.
            # A secret of whitespace alone would hide every space of every message.
            for form in (secret, " ".join(secret.split())):
                if len(form) >= max(min_chars, 1) and not form.isspace():
                    wanted.add(form)
        self._patterns = [_patterns(secret) for secret in sorted(wanted, key=len, reverse=True)]

    def __call__(self, text: str) -> str:
        # Every match of every secret is found in the original text and the spans merged, so a
        # secret that overlaps another is hidden whole, not cut by the other's replacement.
        spans: list[tuple[int, int]] = []
        for patterns in self._patterns:
            spans += patterns.spans(text)
        if not spans:
            return text
        spans.sort()
        pieces: list[str] = []
        done = 0
        for start, end in spans:
            if start < done:  # Overlaps the span just hidden: hide on to its end.
                if end > done:
                    done = end
                continue
            pieces += [text[done:start], REDACTED]
            done = end
        pieces.append(text[done:])
        return "".join(pieces)

    def one_line(self, text: str, limit: int) -> str:
        """Scrubbed as written (a key with tabs or doubled spaces would no longer match once the
        whitespace is collapsed), collapsed to one line, scrubbed again, and only then cut, so no
        prefix of a secret survives the cut."""
        return self(" ".join(self(text).split()))[:limit]
