"""Showing text that people typed or passages contain, exactly as written.

Every string from outside the program (a passage, a customer's message, a file or key name in an
error) reaches a screen through `printable`: the one place that decides what is safe to send to a
terminal. Fields a person edits cannot spell characters out, so they drop them with `strip_control`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

# C0 and C1 control characters other than newline and tab, plus DEL. An ESC reaching a terminal
# starts an escape sequence (colours, cursor moves, even clipboard writes), so it is shown instead.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# What `printable` spells out: those, and the bidi embeddings, overrides and isolates (U+202A-202E,
# U+2066-2069), which reorder everything after them on screen until their end, so a message holding
# one is no longer shown as written. The marks U+200E, U+200F and U+061C stay: they only steer the
# neutral characters beside them, and right-to-left text uses them; so does the zero-width joiner.
# Lone surrogates too, which no output can encode (printing one raised UnicodeEncodeError).
_SHOWN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# Lone surrogates: Python's reading of bytes that are not UTF-8 (a command line's, a pipe's), one
# per byte, U+DC80-DCFF for bytes 0x80-0xff ("surrogateescape"). Nothing encodes them as UTF-8.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# The same, newline and tab included: what a one-line field may not hold.
_CONTROL_OR_BREAK = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_BREAK = re.compile(r"\r\n|[\t\n\v\f\r]")
# Whole escape sequences (CSI like ESC[2J, OSC like ESC]0;title BEL, and two-character ones), so
# that stripping leaves no "[2J" debris behind.
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, clearing
    r"|(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS...
    r"|\x1b[ -~]"  # Two-character escapes
)


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if 0xDC80 <= code <= 0xDCFF:  # A byte that was not UTF-8: shown as that byte.
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every control character spelled out (`\\x1b`, `\\u202e` for a bidi override),
    so printing it is harmless and shows it as written; a byte that was not UTF-8 (a lone
    surrogate) as the byte (`\\xff`)."""
    return _SHOWN.sub(_visible, text)


def undrawn(text: str) -> str:
    """`text` without what `printable` spells out, for a widget that cannot spell it out (a text
    area, whose wrapping and cursor count each character as its own cells): drawn as nothing
    rather than sent to the terminal, and kept in what the widget holds."""
    return _SHOWN.sub("", text)


def not_utf8(text: str) -> str | None:
    """Where `text` holds what UTF-8 cannot encode, for a person: `byte 0xff at character 3` (a
    byte that was not UTF-8 when read, as Python keeps it); None if it holds nothing such."""
    match = _SURROGATE.search(text)
    if match is None:
        return None
    code = ord(match.group(0))
    what = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"
    return f"{what} at character {match.start() + 1}"


BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Characters Unicode counts as letters or symbols that show as a blank: the Hangul fillers
(U+115F, U+1160, U+3164, halfwidth U+FFA0) and the blank braille pattern (U+2800)."""
_NOTHING = re.compile(r"[\u034f\u17b4\u17b5\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef]")
"""Marks that show nothing of their own: variation selectors (U+FE00-FE0F, U+E0100-E01EF, and
Mongolian's), the combining grapheme joiner and the Khmer inherent vowels."""


def shows_nothing(char: str) -> bool:
    """Whether `char` takes no room and shows nothing of its own: a format character (category
    Cf: zero-width spaces and joiners, bidi marks, the byte-order mark) or a variation selector."""
    return unicodedata.category(char) == "Cf" or _NOTHING.match(char) is not None


def is_blank(text: str) -> bool:
    """Whether `text` holds nothing to read: only whitespace, characters that show nothing
    (`shows_nothing`: "\\u200b", "\\u200d", "\\ufe0f") and letters that show as a blank
    (`BLANK_LETTERS`: "\\u3164", "\\u2800"). `str.strip` leaves all but the first, so "\\u200b"
    passed for a question."""
    return all(char.isspace() or char in BLANK_LETTERS or shows_nothing(char) for char in text)


def strip_control(text: str, *, one_line: bool = False) -> str:
    """`text` without escape sequences and control characters (keeping newline and tab unless
    `one_line`): for text entering an editable field, which shows what it holds and so must hold
    nothing harmful."""
    text = _SEQUENCE.sub("", text)
    if one_line:  # A line break or tab in a one-line field was meant as a space.
        return _CONTROL_OR_BREAK.sub("", _BREAK.sub(" ", text))
    return _CONTROL.sub("", text)


def first_control(text: str, *, one_line: bool = False) -> str | None:
    """The first control character in `text`, spelled out (`\\x1b`), or None if there is none."""
    match = (_CONTROL_OR_BREAK if one_line else _CONTROL).search(text)
    return None if match is None else _visible(match)


def seconds(value: float) -> str:
    """Seconds for a message: one decimal, none when whole ("50", "44.4")."""
    return f"{value:.1f}".removesuffix(".0")


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """`1 passage`, `10 passages`, `1,283 questions`: a count with its noun agreeing (English;
    the app's screens use the catalogs' plural forms instead)."""
    noun = singular if count == 1 else (plural or singular + "s")
    return f"{count:,} {noun}"


def cells(text: str) -> int:
    """Terminal cells `text` takes, as the app's screens count them: two for each wide character
    (Chinese), none for a combining accent or a zero-width space, one for the others."""
    from rich.cells import cell_len  # Not at the top: `helpdesk --help` need not load it.

    return cell_len(text)


def clip(text: str, width: int) -> str:
    """`text` in at most `width` cells: cut with … when longer (wide characters count two), the
    … right after the last character kept: a cut just after a space read `还车的时候 …`."""
    if cells(text) <= width:
        return text
    kept, used = [], 1
    for char in text:
        size = cells(char)
        if used + size > width:
            break
        kept.append(char)
        used += size
    return "".join(kept).rstrip() + "…"


def fit(text: str, width: int) -> str:
    """`text` in exactly `width` cells: cut with … (`clip`) or padded with spaces, so columns of
    wide characters (Chinese) line up."""
    text = clip(text, width)
    return text + " " * (width - cells(text))


_SPACES = re.compile(r"(\s+)")


def pieces(text: str) -> Iterator[str]:
    """`text` cut where a line may break: runs of spaces, and words, a wide character (Chinese,
    which has no spaces) being a word of its own. Wide by its cells, not by a range of code
    points: "don’t" and "café—bar" are one word each."""
    for part in _SPACES.split(text):
        if part.isspace():
            yield part
            continue
        yield from _words(part)


def _words(part: str) -> Iterator[str]:
    """`part` (no spaces in it) cut into runs of narrow characters and single wide ones."""
    run = ""
    for char in part:
        if cells(char) < 2:
            run += char
            continue
        if run:
            yield run
        run = ""
        yield char
    if run:
        yield run


NO_LINE_START = frozenset("，。！？；：、）」』】〕〗〙〛〉》”’…‥～·・,.!?;:)]}")
"""Closing punctuation, which a wrapped line may not start with: it stays with the character
before it (`helpdesk conversations show` at 60 columns started a Chinese line with `。`)."""
NO_LINE_END = frozenset("（「『【〔〖〘〚〈《“‘([{")
"""Opening punctuation, which a wrapped line may not end with: it goes on with what follows."""
_BREAKS = re.compile(r"([^\S\u00a0\u2007\u202f]+)")
"""Spaces a line may break at: every space but the no-break ones (U+00A0, the figure space and
the narrow no-break space), which join a number to its unit (`2\\u00a0ms`)."""


def _line_pieces(text: str) -> Iterator[str]:
    """`text` cut where `wrap` may break a line: `pieces`, but a no-break space joins the words
    either side of it, closing punctuation (`NO_LINE_START`) stays with the piece before it and
    opening punctuation (`NO_LINE_END`) with the piece after it."""
    for part in _BREAKS.split(text):
        if _BREAKS.fullmatch(part):
            yield part
            continue
        held = ""
        for word in _words(part):
            if held and (word[0] in NO_LINE_START or held[-1] in NO_LINE_END):
                held += word
                continue
            if held:
                yield held
            held = word
        if held:
            yield held


def wrap(text: str, width: int | None, indent: str = "", first: str | None = None) -> list[str]:
    """`text` as lines of at most `width` cells, each starting with `indent` (the first with
    `first`, when given: a hanging indent): for prose printed on a terminal, which would
    otherwise break it mid-word (and mid-table). A no-break space does not break, nor does a
    line start with closing punctuation or end with opening punctuation (`_line_pieces`). With
    no `width` (a pipe), one line as it is."""
    prefix = indent if first is None else first
    if width is None:
        return [prefix + text]
    lines: list[str] = []
    room = max(width - cells(prefix), 10)
    line, used, space = "", 0, False

    def flush(text: str) -> None:
        nonlocal prefix, room
        lines.append(prefix + text)
        prefix, room = indent, max(width - cells(indent), 10)

    for piece in _line_pieces(text):
        if _BREAKS.fullmatch(piece):
            space = bool(line)
            continue
        size = cells(piece)
        gap = 1 if space else 0
        if line and used + gap + size > room:
            flush(line)
            line, used, gap = "", 0, 0
        while size > room - used - gap:  # A piece wider than a line (a URL, a path) is cut.
            head = ""
            for char in piece:
                if cells(head + char) > room - used - gap:
                    break
                head += char
            flush(line + " " * gap + head)
            line, used, gap = "", 0, 0
            piece = piece[len(head) :]
            size = cells(piece)
        line += " " * gap + piece
        used += gap + size
        space = False
    if line or not lines:
        flush(line)
    return lines


def wrap_lines(
    text: str, width: int | None, indent: str = "", first: str | None = None
) -> list[str]:
    """Each line of `text` wrapped on its own, as `wrap` does, keeping the spaces it starts with
    (a list's indent, a quoted block) for it and the lines it wraps to."""
    lines: list[str] = []
    for number, line in enumerate(text.split("\n")):
        body = line.lstrip(" ")
        lead = " " * (len(line) - len(body))
        start = first if number == 0 and first is not None else indent
        lines += wrap(body, width, indent + lead, first=start + lead)
    return lines


def searched_number(query: str) -> str | None:
    """The number a search for `#12` (or `12`) asks for, as digits; None for words."""
    number = query.strip().removeprefix("#")
    return number if number.isdecimal() else None


def number_pattern(digits: str) -> re.Pattern[str]:
    """Where the number `digits` stands alone in a text, as a search for `#12` finds it: with no
    digit just before or after, nor a decimal point or comma between it and one, so not in
    "2012", "120 km", "1.12" or "12,50" (letters may touch it: "ZQ12"; a full stop ends it:
    "ticket 12.")."""
    return re.compile(rf"(?<!\d)(?<!\d[.,]){re.escape(digits)}(?!\d)(?![.,]\d)")


def has_number(text: str | None, digits: str) -> bool:
    """Whether the number `digits` stands alone somewhere in `text` (`number_pattern`)."""
    return text is not None and number_pattern(digits).search(text) is not None
