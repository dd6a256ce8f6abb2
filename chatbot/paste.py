"""Pastes from a browser or a terminal, made safe for Textual's input parser.

xterm.js sends a paste between bracketed-paste markers with every character as copied, escape
characters included. Textual's parser ends the paste at the first escape it cannot read as its
end marker and replays the rest as key presses: a paste of colour codes copied from a terminal
reached the chat as "^[31m" debris, its words out of order. Inside the markers, escape sequences
and control characters are removed here (line breaks kept, as newlines), so the app gets one
paste event holding the words.
"""

from __future__ import annotations

from chatbot.text import strip_control

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
MAX_HELD = 256
"""The longest unfinished escape sequence a paste's message may end with that waits for its
rest (a window title's is the longest kind usually copied)."""


class PasteFilter:
    """One browser session's keystrokes, with the inside of each bracketed paste cleaned. A
    paste may arrive over several messages: the state between them is kept here."""

    def __init__(self) -> None:
        self._in_paste = False
        self._held = ""
        """The end of the last message, kept for the next: the start of a paste's marker, or an
        escape sequence inside a paste, cut in two."""

    def feed(self, data: str) -> str:
        """What to pass on to the app for `data`, the next keystrokes from the browser."""
        data, self._held = self._held + data, ""
        out: list[str] = []
        while data:
            if not self._in_paste:
                start = data.find(PASTE_START)
                if start < 0:
                    # Keys as typed. A message may end inside the start marker; a lone escape is
                    # the Escape key, never held back.
                    kept = _partial(data, PASTE_START)
                    cut = len(data) - (kept if kept > 1 else 0)
                    out.append(data[:cut])
                    self._held = data[cut:]
                    break
                out.append(data[: start + len(PASTE_START)])
                data = data[start + len(PASTE_START) :]
                self._in_paste = True
                continue
            end = data.find(PASTE_END)
            if end < 0:
                # The message may end inside an escape sequence or the end marker: from its last
                # escape on, it waits for the rest (cleaned in two halves, a colour code would
                # leave "[31m" behind).
                last = data.rfind("\x1b")
                cut = last if last >= 0 and len(data) - last <= MAX_HELD else len(data)
                out.append(_clean(data[:cut]))
                self._held = data[cut:]
                break
            out.append(_clean(data[:end]) + PASTE_END)
            data = data[end + len(PASTE_END) :]
            self._in_paste = False
        return "".join(out)


def _partial(data: str, marker: str) -> int:
    """How many characters at the end of `data` could begin `marker`."""
    for size in range(min(len(marker) - 1, len(data)), 0, -1):
        if marker.startswith(data[-size:]):
            return size
    return 0


def _clean(text: str) -> str:
    # xterm.js sends a pasted line break as a carriage return.
    return strip_control(text.replace("\r\n", "\n").replace("\r", "\n"))
