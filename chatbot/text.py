"""Showing text that people typed or passages contain, exactly as written."""

from __future__ import annotations

import re

# C0 and C1 control characters other than newline and tab, plus DEL. An ESC reaching a terminal
# starts an escape sequence (colours, cursor moves, even clipboard writes), so it is shown instead.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group(0)):02x}"


def printable(text: str) -> str:
    """`text` with every control character spelled out (`\\x1b`), so printing it is harmless."""
    return _CONTROL.sub(_visible, text)
