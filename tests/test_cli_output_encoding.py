"""Output in an encoding that lacks some characters (`PYTHONIOENCODING=ascii`, a Latin-1 locale):
written all the same, what the encoding cannot show escaped as JSON escapes it, never a
UnicodeEncodeError traceback. Processes of their own: the encoding is Python's at start-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.assembly import open_service
from chatbot.config import load_settings
from tests.conftest import ROOT

QUESTION = "Café — is the bike 🚲 near?"


@pytest.fixture
def db(tmp_path: Path) -> str:
    """One conversation, its question beyond ASCII and beyond Latin-1 (and beyond U+FFFF)."""
    path = tmp_path / "helpdesk.sqlite3"
    desk = open_service(load_settings(store={"db": path}))
    try:
        desk.talk_to_person(desk.ask(None, QUESTION).conversation.id)
    finally:
        desk.close()
    return str(path)


def helpdesk(encoding: str, *argv: str) -> tuple[int, bytes, str]:
    result = subprocess.run(
        [sys.executable, "-m", "chatbot", *argv], cwd=ROOT, capture_output=True, timeout=120,
        env={**os.environ, "PYTHONIOENCODING": encoding},
    )  # fmt: skip
    return result.returncode, result.stdout, result.stderr.decode(encoding, "replace")


def test_ask_in_ascii_writes_the_whole_decision() -> None:
    # The sentence for no passage quotes the word, “x”: a traceback at the quote.
    code, out, err = helpdesk("ascii", "ask", "x")
    assert (code, err) == (0, "")
    assert "none. No passage retrieved: \\u201cx\\u201d is in no passage." in out.decode("ascii")


def test_a_transcript_in_ascii_escapes_what_ascii_lacks(db: str) -> None:
    code, out, err = helpdesk("ascii", "conversations", "show", "1", "--db", db)
    assert (code, err) == (0, "")
    assert "Caf\\u00e9 \\u2014 is the bike \\ud83d\\udeb2 near?" in out.decode("ascii")


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_json_in_another_encoding_reads_back_as_written(db: str, encoding: str) -> None:
    """The escapes are JSON's own, a pair of them beyond U+FFFF: the text reads back whole."""
    code, out, err = helpdesk(encoding, "conversations", "show", "1", "--db", db, "--json")
    assert (code, err) == (0, "")
    assert json.loads(out.decode(encoding))["messages"][0]["text"] == QUESTION


def test_stats_in_latin1_keeps_what_latin1_has(db: str) -> None:
    code, out, err = helpdesk("latin-1", "stats", "--db", db)
    assert (code, err) == (0, "")
    text = out.decode("latin-1")
    # The gap's question: é as Latin-1 writes it, the rest escaped. The charts are drawn in
    # ASCII, one cell a character as before: the day's bar (█) a "#", not "\\u2588".
    assert "Caf\xe9 \\u2014 is the bike \\ud83d\\udeb2 near?" in text
    assert "Conversations per day     #  " in text
    assert "\\u2588" not in text and "\\u2581" not in text
    assert "  customer-asked                 1   ########################" in text
