"""Standard output as a command writes it, with a write that fails told apart from every other
`OSError`: `helpdesk stats > /dev/full` ended in an ENOSPC traceback, and `helpdesk stats >&-`
(no stdout at all, which Python turns into `sys.stdout = None`, dropping every `print`) in an
AttributeError from the closing flush. `main` installs `guarded` around a command and turns an
`OutputError` into one line, as it turns a reader gone (BrokenPipeError, left as it is) into 141.
"""

from __future__ import annotations

import codecs
import errno
import io
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

from chatbot.text import cells, clip, fit


class OutputError(Exception):
    """Writing standard output failed (not a broken pipe): a full disk, a closed descriptor.

    Not an OSError, so that a command's own `except OSError` about the files it reads and writes
    does not take it for one of theirs and name the wrong file.
    """

    def __init__(self, error: OSError) -> None:
        super().__init__(error.strerror or str(error))
        self.error = error


class _Closed:
    """What stands for standard output when there is none (`>&-`): every write fails, as a write
    to a closed descriptor does, rather than vanishing."""

    def write(self, _text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        pass  # Nothing was ever buffered: only a write reports.


class GuardedOutput:
    """`stream` with its writing calls turning a failure into `OutputError`; everything else
    (`isatty`, `fileno`, `encoding`, `buffer`, ...) is the stream's own."""

    def __init__(self, stream: IO[str] | _Closed) -> None:
        self._stream = stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def write(self, text: str) -> int:
        with _translated():
            return self._stream.write(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        with _translated():
            self._stream.flush()


@contextmanager
def _translated() -> Iterator[None]:
    try:
        yield
    except BrokenPipeError:
        raise  # The reader went away: `main` exits 141, as a C tool stopped by SIGPIPE does.
    except OSError as error:
        raise OutputError(error) from None


@contextmanager
def guarded() -> Iterator[None]:
    """Standard output guarded while the block runs, then back to what it was (the tests call
    `main` in their own process, under pytest's capture)."""
    original = sys.stdout
    sys.stdout = GuardedOutput(_Closed() if original is None else original)
    try:
        yield
    finally:
        sys.stdout = original


ESCAPED = "helpdesk-json-escape"
"""The error handler standard output and error write a character their encoding lacks with."""


def _json_escape(error: UnicodeError) -> tuple[str, int]:
    """A character the output's encoding cannot write as JSON spells it, `\\u2026` (and a pair,
    `\\ud83d\\udeb2`, beyond U+FFFF): in `--json` output that is the character itself to every
    JSON reader, where Python's backslashreplace (`\\U0001f6b2`) is not JSON and "?" loses it;
    in text it still says which character it was."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    units = error.object[error.start : error.end].encode("utf-16-be", "surrogatepass")
    escaped = "".join(
        f"\\u{int.from_bytes(units[n : n + 2], 'big'):04x}" for n in range(0, len(units), 2)
    )
    return escaped, error.end


CHART_ESCAPED = "helpdesk-chart-escape"
"""The error handler a table with charts is written with (`charts_drawn_plainly`)."""
_CHART_PLAIN = {
    "█": "#", "▁": ".", "▂": ",", "▃": "-", "▄": "~", "▅": "=", "▆": "+", "▇": "*",
    "◀": "<", "–": "-",
}  # fmt: skip
"""What a chart's bars, sparks, mark and ranges are drawn with where the output's encoding
lacks them: one cell each, as they were, so the columns still line up."""


def _chart_escape(error: UnicodeError) -> tuple[str, int]:
    """`_json_escape`, but a chart's drawing characters in ASCII (`_CHART_PLAIN`)."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    drawn = []
    for char in error.object[error.start : error.end]:
        plain = _CHART_PLAIN.get(char)
        if plain is None:
            plain = _json_escape(UnicodeEncodeError(error.encoding, char, 0, 1, error.reason))[0]
        drawn.append(plain)
    return "".join(drawn), error.end


@contextmanager
def charts_drawn_plainly() -> Iterator[None]:
    """While a table with bar charts is written: on an output that escapes what its encoding
    lacks (`tolerate_encoding`), its bars drawn in ASCII (`#`), not as a six-character escape
    each (`\\u2588`), which made a Latin-1 terminal's charts unreadable."""
    stream: Any = sys.stdout  # A `GuardedOutput` passes `errors` and `reconfigure` through.
    if getattr(stream, "errors", None) != ESCAPED or not hasattr(stream, "reconfigure"):
        yield
        return
    codecs.register_error(CHART_ESCAPED, _chart_escape)
    stream.reconfigure(errors=CHART_ESCAPED)
    try:
        yield
    finally:
        stream.reconfigure(errors=ESCAPED)  # Flushes what was written with the charts' handler.


def tolerate_encoding() -> None:
    """Make standard output and error, when their encoding is not UTF-8 (`PYTHONIOENCODING=ascii`,
    a Latin-1 locale), write what it cannot show escaped (`_json_escape`) rather than fail:
    `helpdesk ask` printed half its answer and a UnicodeEncodeError traceback at the first "…".
    A stream that already tolerates (stderr's backslashreplace, a locale's surrogateescape) is
    left as it is, and so is UTF-8, which writes every character."""
    codecs.register_error(ESCAPED, _json_escape)  # Here, not at import: importing does nothing.
    for stream in (sys.stdout, sys.stderr):
        if not isinstance(stream, io.TextIOWrapper) or stream.errors != "strict":
            continue
        if codecs.lookup(stream.encoding).name != "utf-8":
            stream.reconfigure(errors=ESCAPED)


def discard_output() -> None:
    """Point the standard output descriptor at /dev/null, after a write failed: Python flushes
    stdout again at exit, which would fail again (a second message, and exit status 120)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
    finally:
        os.close(devnull)


def table(header: Sequence[str], rows: Sequence[Sequence[str]], width: int | None) -> list[str]:
    """`rows` (printable text already) as lines of columns as wide as what they hold, two spaces
    apart, wide characters counted as two cells. On a terminal (`width`) a header row comes
    first, as `conversations list` has, and the last column is cut (…) to what the line leaves
    it; a pipe's lines are the rows alone, one each, for `grep`, `wc -l` and `awk`."""
    if not rows:
        return []
    shown = [tuple(header), *rows] if width is not None else list(rows)
    widths = [max(cells(row[n]) for row in shown) for n in range(len(header) - 1)]
    lines = []
    for row in shown:
        start = "".join(fit(cell, w) + "  " for cell, w in zip(row, widths, strict=False))
        last = row[-1] if width is None else clip(row[-1], max(width - cells(start), 4))
        lines.append((start + last).rstrip())
    return lines
