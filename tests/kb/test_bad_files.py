"""Hostile and broken files in and around a knowledge base: one line each, never a traceback,
never a hang, never a write that half happens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.cli.main import main
from chatbot.knowledge_base import Passage, load_knowledge_base
from chatbot.knowledge_base.storage import KnowledgeBaseError, load_passages_file
from chatbot.knowledge_base.store import PassageStore
from tests.conftest import ROOT
from tests.readonly import read_only

Q1 = "I was charged twice for the same ride, can I get my money back?"
DEEP = "[" * 100_000 + "]" * 100_000
HUGE_INT = '{"id": "big", "text": "x", "title": ' + "9" * 100_000 + "}"
BROKEN = {
    "deep": (DEEP.encode(), "JSON nested too deeply"),
    "deep-value": (('{"id": "deep-value", "text": ' + DEEP + "}").encode(), "nested too deeply"),
    "huge-int": (HUGE_INT.encode(), "a number in the JSON is too long"),
    "not-utf8": (b'{"id": "not-utf8", "text": "caf\xe9"}', "not UTF-8 text"),
}


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    assert err.startswith("helpdesk: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_passage_file_is_one_line_from_every_command(
    kb_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    content, message = BROKEN[name]
    (kb_copy / f"{name}.json").write_bytes(content)
    kb = ["--kb", str(kb_copy)]

    with pytest.raises(KnowledgeBaseError, match=f"{name}.json: .*{message}"):
        load_knowledge_base(kb_copy, strict=True)  # As an import reads a folder.
    # Used, it is skipped with a warning naming it: the other passages still answer.
    assert len(load_knowledge_base(kb_copy)) == 10
    code, out, err = run_cli(capsys, "ask", Q1, *kb)
    assert code == 0 and "Answer from card-charged-twice" in out, err
    code, _, err = run_cli(capsys, "kb", "list", *kb)
    assert code == 0 and f"{name}.json: " in err and message in err and "Traceback" not in err
    code, out, _ = run_cli(capsys, "kb", "check", *kb)
    assert code == 1 and f"problem: {kb_copy / name}.json: " in out and message in out

    # The same content as an import file: refused before anything is written.
    imported = tmp_path / f"{name}-import.json"
    imported.write_bytes(content)
    code, _, err = run_cli(capsys, "kb", "import", str(imported), *kb)
    assert code == 2 and f"{name}-import.json" in one_error_line(err)


def test_an_oversized_passage_file_is_refused_without_reading_it_all(kb_copy: Path) -> None:
    (kb_copy / "huge.json").write_bytes(b" " * (2 << 20))
    with pytest.raises(KnowledgeBaseError, match=r"huge.json: larger than 1,048,576 bytes"):
        load_knowledge_base(kb_copy, strict=True)


def helpdesk(*argv: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    # A separate process with a timeout: were a FIFO opened for reading, it would block forever.
    return subprocess.run([sys.executable, "-m", "chatbot", *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX feature")
def test_a_fifo_in_the_knowledge_base_is_skipped_and_named(kb_copy: Path, tmp_path: Path) -> None:
    os.mkfifo(kb_copy / "zz.json")
    (kb_copy / "folder.json").mkdir()
    kb = ["--kb", str(kb_copy)]
    skipped = f"{kb_copy / 'zz.json'}: skipped: is a FIFO (named pipe), not a regular file"

    asked = helpdesk("ask", Q1, *kb)
    assert asked.returncode == 0, asked.stderr
    assert "Answer from card-charged-twice" in asked.stdout
    assert f"helpdesk: warning: {skipped}" in asked.stderr
    assert "folder.json: skipped: is a directory" in asked.stderr

    listed = helpdesk("kb", "list", *kb)
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == 10, listed.stderr
    assert skipped in listed.stderr

    checked = helpdesk("kb", "check", *kb)
    assert checked.returncode == 0, checked.stdout
    assert f"note: {skipped}" in checked.stdout

    os.mkfifo(tmp_path / "import.json")
    imported = helpdesk("kb", "import", str(tmp_path / "import.json"), *kb)
    assert imported.returncode == 2
    assert imported.stderr == (
        f"helpdesk: error: {tmp_path / 'import.json'}: is a FIFO (named pipe), not a regular file\n"
    )


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*")
            if p.is_file() and p.name != ".lock"}  # fmt: skip


def test_a_read_only_knowledge_base_refuses_writes_in_one_line(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = ["--kb", str(kb_copy)]
    before = snapshot(kb_copy)
    with read_only(kb_copy):
        for argv in (["add", "--id", "new-one", "--text", "hello"],
                     ["edit", "helmet", "--text", "Helmets for all."],
                     ["rm", "helmet"], ["restore", "helmet"]):  # fmt: skip
            code, _, err = run_cli(capsys, "kb", *argv, *kb)
            assert code == 2, argv
            assert "cannot write" in one_error_line(err) or "no earlier versions" in err, err
        # Reading still works.
        code, out, _ = run_cli(capsys, "kb", "list", *kb)
        assert code == 0 and len(out.splitlines()) == 10
    assert snapshot(kb_copy) == before


@pytest.mark.parametrize("reserved", ["con", "nul", "aux", "prn", "com1", "lpt1", "prn.txt"])
def test_windows_device_names_are_not_passage_ids(
    kb_copy: Path, capsys: pytest.CaptureFixture[str], reserved: str
) -> None:
    code, _, err = run_cli(capsys, "kb", "add", "--id", reserved, "--text", "x", "--kb",
                           str(kb_copy))  # fmt: skip
    assert code == 2 and "is a device name on Windows" in one_error_line(err)
    assert not (kb_copy / f"{reserved}.json").exists()


def test_names_that_only_look_like_device_names_are_fine() -> None:
    for fine in ["console", "con-ed", "com10", "nullable", "aux2", "lpt"]:
        assert Passage(id=fine, text="x").id == fine


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"title": "\x1b]0;PWNED\x07"}, r"title contains a control character \(\\x1b\)"),
        ({"title": "two\nlines"}, "title contains a line break or tab"),
        ({"tags": ("ok", "\x1b[2J")}, r"a tag contains a control character \(\\x1b\)"),
        ({"tags": ("",)}, "a tag is empty"),
        ({"text": "clip \x1b]52;c;SGVsbG8=\x07"}, r"text contains a control character \(\\x1b\)"),
        ({"text": "del \x7f"}, r"text contains a control character \(\\x7f\)"),
        ({"text": "c1 \x9b2J"}, r"text contains a control character \(\\x9b\)"),
    ],
)
def test_passages_refuse_control_characters(fields: dict[str, object], message: str) -> None:
    values: dict[str, object] = {"id": "x", "text": "fine"} | fields
    with pytest.raises(ValueError, match=message):
        Passage.model_validate(values)


def test_text_keeps_newlines_and_tabs_and_loses_surrounding_space() -> None:
    passage = Passage(id="x", title="  Title  ", text="\n  line one\n\tline two  \n")
    assert passage.text == "line one\n\tline two"
    assert passage.title == "Title"


ESC_NAME = "evil\x1b]0;PWNED\x07.json"


def test_cli_error_lines_never_carry_raw_escapes(
    kb_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = ["--kb", str(kb_copy)]
    # A file name with an ESC in it.
    code, _, err = run_cli(capsys, "kb", "import", str(tmp_path / ESC_NAME), *kb)
    assert code == 2 and "evil\\x1b]0;PWNED\\x07.json: no such file" in one_error_line(err)
    assert "\x1b" not in err
    # A JSON key with an ESC in it, in a passage file: the warning `kb list` skips it with, and
    # `kb check`.
    (kb_copy / "keyed.json").write_text(
        json.dumps({"id": "keyed", "text": "x", "\x1b[2J\x1b]52;c;SGk=\x07": 1}), encoding="utf-8"
    )
    code, _, err = run_cli(capsys, "kb", "list", *kb)
    assert code == 0 and "\\x1b[2J\\x1b]52;c;SGk=\\x07" in err
    assert "\x1b" not in err
    code, out, err = run_cli(capsys, "kb", "check", *kb)
    assert code == 1 and "\\x1b[2J" in out and "\x1b" not in out + err


def test_a_stale_temporary_file_is_swept_by_the_next_write(kb_copy: Path) -> None:
    stale = kb_copy / ".helmet.json.0123456789ab.tmp"
    stale.write_bytes(b"x" * 1000)
    history_stale = kb_copy / ".history" / "helmet" / ".000001.json.0123456789ab.tmp"
    history_stale.parent.mkdir(parents=True)
    history_stale.write_bytes(b"x")
    store = PassageStore(kb_copy)
    assert any("the next write removes it" in note for note in store.check().notes)
    seen = store.get("helmet")
    store.save(seen.passage.model_copy(update={"text": "Helmets."}), based_on=seen.revision)
    assert not stale.exists() and not history_stale.exists()
    assert list(kb_copy.rglob("*.tmp")) == []


def test_a_history_folder_that_is_no_passage_id_is_not_listed_as_deleted(kb_copy: Path) -> None:
    (kb_copy / ".history" / "\x1b]0;PWNED\x07").mkdir(parents=True)
    (kb_copy / ".history" / "con").mkdir()
    assert PassageStore(kb_copy).deleted() == []


def test_the_import_file_loader_survives_every_broken_form(tmp_path: Path) -> None:
    for name, (content, message) in BROKEN.items():
        path = tmp_path / f"{name}.json"
        path.write_bytes(content)
        with pytest.raises(KnowledgeBaseError, match=message):
            load_passages_file(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff", "not UTF-8 text"),
        (b"{", "malformed JSON"),
        (b'{"id": "other", "text": "x"}', "id does not match the file name"),
    ],
)
def test_kb_check_reports_a_bad_file_once(
    kb_copy: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    # The synonyms check read the passages again, and raised the first bad file's problem a
    # second time: two "problem:" lines and "2 problems" for one file.
    good = len(list(kb_copy.glob("*.json")))
    (kb_copy / "bad.json").write_bytes(content)
    code, out, err = run_cli(capsys, "kb", "check", "--kb", str(kb_copy))
    [problem] = [line for line in out.splitlines() if line.startswith("problem:")]
    assert code == 1 and f"{kb_copy / 'bad.json'}: " in problem and message in problem
    assert err == f"1 problem, {good} good passages\n"
