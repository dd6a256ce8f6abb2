"""Windows line endings: a text file saved on Windows (`\\r\\n`), an import holding them, or a
lone `\\r` is taken as the same text with `\\n`, on every way a passage comes in; every other
control character is still refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.knowledge_base import Passage, load_knowledge_base
from chatbot.knowledge_base.store import PassageStore
from tests.kb.helpers import run_cli, snapshot


def passage(kb: Path, passage_id: str) -> Passage:
    return PassageStore(kb).get(passage_id).passage


def test_kb_add_and_edit_read_a_windows_text_file(
    kb_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text_file = tmp_path / "crlf.txt"
    text_file.write_bytes(b"line1\r\nline2\r\n")
    code, out, err = run_cli(capsys, "kb", "add", "--id", "t-crlf", "--text-file", str(text_file),
                             "--kb", str(kb_copy))  # fmt: skip
    assert code == 0, err
    assert passage(kb_copy, "t-crlf").text == "line1\nline2"
    assert '"text": "line1\\nline2"' in (kb_copy / "t-crlf.json").read_text(encoding="utf-8")

    text_file.write_bytes(b"old Mac\rline endings\r\r\nand Windows\r\n")
    code, out, err = run_cli(capsys, "kb", "edit", "t-crlf", "--text-file", str(text_file),
                             "--kb", str(kb_copy))  # fmt: skip
    assert code == 0, err
    assert passage(kb_copy, "t-crlf").text == "old Mac\nline endings\n\nand Windows"


def test_kb_import_takes_windows_line_endings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = {"passages": [{"id": "t-crlf", "title": "Windows\r\n", "text": "a\r\nb\rc"}]}
    source = tmp_path / "import.json"
    source.write_text(json.dumps(data), encoding="utf-8")
    kb = tmp_path / "kb"
    code, out, err = run_cli(capsys, "kb", "import", str(source), "--kb", str(kb))
    assert code == 0, err
    [imported] = load_knowledge_base(kb)
    assert (imported.title, imported.text) == ("Windows", "a\nb\nc")
    # Imported again, it is the same passage.
    code, out, err = run_cli(capsys, "kb", "import", str(source), "--kb", str(kb))
    assert code == 0 and "1 unchanged" in out, err


def test_a_passage_file_holding_windows_line_endings_loads(kb_copy: Path) -> None:
    raw = {"id": "t-crlf", "title": "", "tags": [], "text": "a\r\nb"}
    (kb_copy / "t-crlf.json").write_text(json.dumps(raw), encoding="utf-8")
    assert {p.id: p.text for p in load_knowledge_base(kb_copy)}["t-crlf"] == "a\nb"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        # A title is one line, however its lines end.
        (["--title", "two\r\nlines", "--text", "ok"], "title: title contains a line break or tab"),
        (["--title", "two\rlines", "--text", "ok"], "title: title contains a line break or tab"),
        # Other control characters are still refused.
        (["--text", "a\x0bb"], r"text: text contains a control character (\x0b)"),
        (["--text", "a\x1b[2Jb\r\n"], r"text: text contains a control character (\x1b)"),
    ],
)
def test_other_control_characters_are_still_refused(
    kb_copy: Path, capsys: pytest.CaptureFixture[str], fields: list[str], message: str
) -> None:
    before = snapshot(kb_copy)
    code, out, err = run_cli(capsys, "kb", "add", "--id", "t-bad", *fields, "--kb", str(kb_copy))
    assert code == 2 and err.count("\n") == 1, err
    assert f"passage 't-bad': {message}" in err
    assert snapshot(kb_copy) == before
