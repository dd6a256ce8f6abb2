"""A browser's paste reaches the app as one paste of its words, whatever it holds: checked through
Textual's own input parser, which reads what the session's process is sent."""

from __future__ import annotations

import pytest
from textual import events
from textual._xterm_parser import XTermParser

from chatbot.paste import PasteFilter

COPIED = "aa \x1b[31mred\x1b[0m bb\rline two\x1b]0;PWNED\x07 end"
"""Colour codes and a window-title sequence copied from a terminal, and a line break as xterm.js
sends it (a carriage return)."""


def parsed(data: str) -> list[object]:
    return list(XTermParser().feed(data))


def test_escape_sequences_in_a_paste_no_longer_become_keys() -> None:
    browser_sent = f"\x1b[200~{COPIED}\x1b[201~"
    # Textual ended the paste at the first escape and replayed the rest as key presses, "^[31m"
    # and all, ahead of the paste itself.
    assert any(isinstance(event, events.Key) for event in parsed(browser_sent))
    [paste] = parsed(PasteFilter().feed(browser_sent))
    assert isinstance(paste, events.Paste) and paste.text == "aa red bb\nline two end"


@pytest.mark.parametrize("at", range(3, len(COPIED) + 20))
def test_a_paste_split_over_messages_is_cleaned_the_same(at: int) -> None:
    # Anywhere but right after the opening escape, which alone is the Escape key.
    browser_sent = f"x\x1b[200~{COPIED}\x1b[201~y"
    paste = PasteFilter()
    forwarded = paste.feed(browser_sent[:at]) + paste.feed(browser_sent[at:])
    assert forwarded == "x\x1b[200~aa red bb\nline two end\x1b[201~y"


def test_keys_outside_a_paste_pass_as_they_are() -> None:
    paste = PasteFilter()
    for keys in ("\x1b", "\x1b[A", "hello\r", "\x1bOP", "\x03", "\x1b[1;5C"):
        assert paste.feed(keys) == keys  # Escape, arrows, Enter, F1, Ctrl+C: none held back.
