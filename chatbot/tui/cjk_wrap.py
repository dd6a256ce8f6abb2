"""Line breaks for Chinese (and Japanese, Korean) text in every widget.

Rich and Textual wrap text only at spaces: a Chinese sentence is one "word" to them, so a space
inside one (before a number, a name, "Ctrl+P") pushed the whole run after it to the next line,
leaving short lines, and a run longer than the width was folded anywhere, a line starting with
"，" or "。". Text written in these scripts may break between any two characters, except before
closing punctuation and after opening punctuation (the basic rule of CJK line breaking), so
each character is a word of its own here, its closing punctuation attached.

Both libraries find words with one module-level pattern, read at each call (Rich's
`rich._wrap.re_word`, which Textual's `Content` and Rich's `Text` wrap with, and Textual's
`textual._wrap.re_chunk`, which the `TextArea` wraps with). `install` replaces the two with
patterns that split as above and leave every other word as before. These are internals of the
pinned Rich and Textual: `tests/tui/test_cjk_wrap.py` fails if either stops reading them."""

from __future__ import annotations

import re

# Han (with its extensions and compatibility ideographs), kana, hangul, bopomofo, and the
# fullwidth forms of letters and digits, each of which may stand at either end of a line.
_CJK = (
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c\u3040-\u30ff"
    "\u3100-\u312f\u3131-\u318f\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff10-\uff19\uff21-\uff3a\uff41-\uff5a"
    "\uff66-\uffdc\U00020000-\U0003134f"
)
# Punctuation a line may not start with (closing brackets, stops, commas, the ellipsis, the
# prolonged sound mark), and punctuation a line may not end with (opening brackets and quotes).
_CLOSE = (
    "\u3001\u3002\uff0c\uff0e\uff1a\uff1b\uff1f\uff01\uff09\uff3d\uff5d\u300d\u300f\u3011"
    "\u3015\u3009\u300b\u3017\u3019\u301b\u2019\u201d\u2026\u2025\u30fc\u30fb\u00b7"
    ",.:;?!)\\]}%"
)
_OPEN = "\uff08\uff3b\uff5b\u300c\u300e\u3010\u3014\u3008\u300a\u3016\u3018\u301a\u2018\u201c"

# One word: a CJK character with any opening punctuation before it and closing after it; a run
# of anything else but spaces (up to a CJK character, and not ending on opening punctuation, so
# "“" stays with the character it opens); or, so that the whole text is always covered, any one
# character that is not a space.
_WORD = (
    rf"(?:[{_OPEN}]*[{_CJK}][{_CLOSE}]*"
    rf"|[^\s{_CJK}]*[^\s{_CJK}{_OPEN}]"
    r"|\S)"
)

RICH_WORD = re.compile(rf"\s*{_WORD}\s*")
"""For `rich._wrap.re_word` (`\\s*\\S+\\s*` as shipped)."""
TEXTUAL_CHUNK = re.compile(rf"{_WORD}\s*|\s+")
"""For `textual._wrap.re_chunk` (`\\S+\\s*|\\s+` as shipped)."""


def install() -> None:
    """Make Rich and Textual break lines as above, for the whole process (idempotent)."""
    import rich._wrap
    import textual._wrap

    rich._wrap.re_word = RICH_WORD
    textual._wrap.re_chunk = TEXTUAL_CHUNK
