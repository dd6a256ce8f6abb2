"""A hostile `synonyms.toml` (nested 10,000 deep, a number of 5,000 digits, not UTF-8, a folder,
a FIFO) is one line naming it, in the words a passage file's problems are said in, from every
command that reads it: never a traceback, never a hang."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_run import run_cli
from tests.conftest import ROOT, SEED_DATA

NESTED = "a = " + "[" * 10_000 + "\n"
HUGE = "a = " + "1" * 5_000 + "\n"
LATIN_1 = 'helmet = "t\xeate"\n'.encode("latin-1")  # "tête": byte 11 is no UTF-8.

BAD = {
    "nested": (NESTED.encode(), "nested too deeply"),
    "huge-number": (HUGE.encode(), "a number in the TOML is too long"),
    "latin-1": (LATIN_1, "not UTF-8 text (byte 11)"),
}


def one_line(err: str, path: Path, reason: str) -> None:
    assert err == f"helpdesk: error: {path}: {reason}\n"


@pytest.mark.parametrize("name", sorted(BAD))
def test_every_command_says_what_is_wrong_with_the_synonyms_in_one_line(
    kb_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    content, reason = BAD[name]
    path = kb_copy / "synonyms.toml"
    path.write_bytes(content)
    kb = ["--kb", str(kb_copy)]

    for argv in (["ask", "headgear", *kb], ["kb", "synonyms", "list", *kb],
                 ["kb", "synonyms", "add", "helmet", "headgear", *kb],
                 ["eval", str(SEED_DATA), "--passages", str(kb_copy)]):  # fmt: skip
        code, out, err = run_cli(capsys, *argv)
        assert (code, out) == (2, ""), argv
        one_line(err, path, reason)
    code, out, _ = run_cli(capsys, "kb", "check", *kb)
    assert code == 1 and f"problem: {path}: {reason}\n" in out

    # A folder to import from, with the same file: refused before anything is written.
    other = tmp_path / "other"
    code, out, err = run_cli(capsys, "kb", "import", str(kb_copy), "--kb", str(other))
    assert (code, out) == (2, "")
    one_line(err, path, reason)
    assert not other.exists()

    # A translation's own file, read for its language's questions.
    path.unlink()
    zh = kb_copy / "zh" / "synonyms.toml"
    zh.write_bytes(content)
    code, out, err = run_cli(capsys, "ask", "头盔", *kb)
    assert (code, out) == (2, "")
    one_line(err, zh, reason)


def test_a_folder_named_synonyms_toml_is_named_once(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was `cannot read: [Errno 21] Is a directory: 'kb/synonyms.toml'`, the path twice."""
    path = kb_copy / "synonyms.toml"
    path.mkdir()
    code, out, err = run_cli(capsys, "kb", "synonyms", "list", "--kb", str(kb_copy))
    assert (code, out) == (2, "")
    one_line(err, path, "is a directory, expected a TOML file")


def helpdesk(*argv: str) -> subprocess.CompletedProcess[str]:
    # A process of its own with a timeout: a FIFO opened for reading blocks until a writer comes.
    return subprocess.run([sys.executable, "-m", "chatbot", *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)  # fmt: skip


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX feature")
def test_a_fifo_named_synonyms_toml_is_refused_without_waiting_on_it(
    kb_copy: Path, tmp_path: Path
) -> None:
    path = kb_copy / "synonyms.toml"
    os.mkfifo(path)
    kb = ["--kb", str(kb_copy)]
    reason = "is a FIFO (named pipe), not a regular file"

    for argv in (["ask", "headgear"], ["kb", "synonyms", "list"],
                 ["kb", "import", str(kb_copy), "--kb", str(tmp_path / "other")]):  # fmt: skip
        done = helpdesk(*argv, *kb)
        assert (done.returncode, done.stdout) == (2, ""), argv
        one_line(done.stderr, path, reason)
    checked = helpdesk("kb", "check", *kb)
    assert checked.returncode == 1 and f"problem: {path}: {reason}\n" in checked.stdout
