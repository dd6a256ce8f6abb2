"""A paste in a real terminal (a pty) holding colour codes reaches the question box as its
words, in order: Textual's parser ended the paste at the first escape and replayed the rest as
keys, so "abc \\e[1mdef\\e[0m ghi" became "^[1mdef^[0m ghiabc". The terminal driver cleans each
bracketed paste first, as `helpdesk serve` does a browser's."""

from __future__ import annotations

from pathlib import Path

from textual import events

from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.desk.models import Author
from chatbot.tui import create_app
from chatbot.tui.terminal_driver import PasteCleaningParser, TerminalDriver
from tests.tui.terminal_helpers import chat_in_a_terminal, until

COPIED = "abc \x1b[1mdef\x1b[0m ghi\x1b]0;PWNED\x07 end"
"""Words with a bold code and a window-title sequence, as copied from a terminal."""
PASTED = f"\x1b[200~{COPIED}\x1b[201~"


def test_the_parser_reads_a_paste_with_codes_as_one_paste_of_its_words() -> None:
    parser = PasteCleaningParser()
    # Cut inside the end marker: nothing to parse yet, and the input does not end.
    assert list(parser.feed(PASTED[:-3])) == []
    [paste] = list(parser.feed(PASTED[-3:]))
    assert isinstance(paste, events.Paste) and paste.text == "abc def ghi end"


def test_the_app_reads_a_terminal_through_the_cleaning_driver(tmp_path: Path) -> None:
    app = create_app(load_settings(store={"db": tmp_path / "db.sqlite3"}), mode="chat")
    assert app.driver_class is TerminalDriver


def test_a_paste_with_colour_codes_in_a_terminal_is_sent_as_its_words(tmp_path: Path) -> None:
    db = tmp_path / "helpdesk.sqlite3"
    with chat_in_a_terminal(tmp_path, "--db", str(db), "--no-bot") as chat:
        # The chat itself, not the first screen drawn while it loads: its suggestions' note (a
        # chat without a bot of its own says nothing of replay mode, which its bots may not be in).
        until(lambda: b"Questions to try" in chat.output, "the chat to be drawn")
        chat.type(PASTED.encode())
        chat.type(b"\r")
        desk = open_service(load_settings(store={"db": db}))
        try:
            until(lambda: bool(desk.conversations()), "the question to be stored")
            [conversation] = desk.conversations()
            [question] = [m for m in desk.messages(conversation.id) if m.author is Author.CUSTOMER]
        finally:
            desk.close()
        assert question.text == "abc def ghi end"
        chat.type(b"\x11")  # Ctrl+Q
        assert chat.process.wait(timeout=30) == 0
