"""Loading `synonyms.toml` from a knowledge-base directory: groups, and one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.knowledge_base.storage import KnowledgeBaseError
from chatbot.knowledge_base.synonyms import SYNONYMS_FILE, load_synonyms, load_synonyms_file
from tests.conftest import ROOT


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / SYNONYMS_FILE
    path.write_text(text, encoding="utf-8")
    return path


def test_strings_and_lists_become_groups(tmp_path: Path) -> None:
    write(tmp_path, 'senior = "pensioner, retiree , elderly"\nbike = ["bicycle", "cycle"]\n'
                    '"return station" = "dock"\n')  # fmt: skip
    assert load_synonyms(tmp_path) == (
        ("senior", "pensioner", "retiree", "elderly"),
        ("bike", "bicycle", "cycle"),
        ("return station", "dock"),
    )


def test_no_file_means_no_synonyms(tmp_path: Path) -> None:
    assert load_synonyms(tmp_path) == ()
    assert load_synonyms(tmp_path / "missing") == ()


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("senior = pensioner, retiree", ["malformed TOML", "line 1"]),
        ("senior = 3", ["'senior'", "comma-separated string or a list"]),
        ('senior = ["a", 2]', ["'senior'", "list of strings"]),
        ("[senior]\nx = 'y'", ["'senior'", "expected synonyms"]),
        ('senior = "pensioner,,retiree"', ["'senior'", "empty word"]),
        ('senior = ""', ["'senior'", "empty word"]),
        ("senior = []", ["'senior'", "no synonyms"]),
        (f'senior = "{"x" * 101}"', ["'senior'", "longer than 100"]),
    ],
)
def test_a_bad_file_is_one_line_naming_it(tmp_path: Path, text: str, needles: list[str]) -> None:
    path = write(tmp_path, text)
    with pytest.raises(KnowledgeBaseError) as raised:
        load_synonyms_file(path)
    message = str(raised.value)
    assert "\n" not in message and message.startswith(str(path))
    for needle in needles:
        assert needle in message


def test_unreadable_bytes_are_one_line(tmp_path: Path) -> None:
    (tmp_path / SYNONYMS_FILE).write_bytes(b"senior = '\xff'")
    with pytest.raises(KnowledgeBaseError, match=r"synonyms.toml: not UTF-8 text \(byte 10\)$"):
        load_synonyms(tmp_path)


def test_ask_uses_the_knowledge_bases_synonyms_and_reports_a_bad_file(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "seniors.json").write_text('{"id": "seniors", "text": "Seniors ride at half price."}')
    (kb / "helmet.json").write_text('{"id": "helmet", "text": "Helmets cost 2 euros."}')
    (kb / "lost.json").write_text('{"id": "lost", "text": "Lost items are kept a month."}')
    (kb / SYNONYMS_FILE).write_text('senior = "pensioner, retiree"\n')

    def ask(question: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "chatbot", "ask", question, "--kb", str(kb), "--json"],
            capture_output=True, text=True, cwd=ROOT, timeout=60,
        )  # fmt: skip

    result = ask("Do pensioners pay less?")
    assert result.returncode == 0, result.stderr
    assert '"id": "seniors"' in result.stdout
    (kb / SYNONYMS_FILE).write_text("senior = pensioner\n")
    result = ask("Do pensioners pay less?")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0 and "malformed TOML" in result.stderr
