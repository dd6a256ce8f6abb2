"""`kb add` and `kb edit` read the text from standard input with `--text-file -`, as `cat -` does
(it said "-: no such file"); `./-` is still the file named "-"."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.cli_run import run_cli

TEXT = "Lost items are kept at the depot for 30 days. Café opening hours apply."


def typed(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    """Standard input holding `data`, as a pipe gives it."""
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def text_of(capsys: pytest.CaptureFixture[str], kb: Path, passage: str) -> str:
    code, out, err = run_cli(capsys, "kb", "show", passage, "--json", "--kb", str(kb))
    assert code == 0, err
    text: str = json.loads(out)["text"]
    return text


def test_add_and_edit_read_the_text_from_standard_input(
    kb_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    typed(monkeypatch, f"{TEXT}\n".encode())
    code, out, err = run_cli(capsys, "kb", "add", "--id", "lost-item", "--title", "Lost items",
                             "--text-file", "-", "--kb", str(kb_copy))  # fmt: skip
    assert (code, err) == (0, ""), err
    assert out.startswith("added lost-item (revision ")
    assert text_of(capsys, kb_copy, "lost-item") == TEXT
    typed(monkeypatch, "\ufeffKept for 60 days now.\n".encode())  # A byte-order mark, as a file's.
    code, out, err = run_cli(capsys, "kb", "edit", "lost-item", "--text-file", "-",
                             "--kb", str(kb_copy))  # fmt: skip
    assert (code, err) == (0, ""), err
    assert text_of(capsys, kb_copy, "lost-item") == "Kept for 60 days now."


def test_standard_input_that_is_not_utf8_is_named(
    kb_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    typed(monkeypatch, b"caf\xe9\n")
    code, out, err = run_cli(capsys, "kb", "edit", "card-charged-twice", "--text-file", "-",
                             "--kb", str(kb_copy))  # fmt: skip
    assert (code, out) == (2, "")
    assert err == "helpdesk: error: standard input: not UTF-8 text (byte 3)\n"


def test_a_file_named_dash_is_still_read_as_dot_slash_dash(
    kb_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    (tmp_path / "-").write_text("From the file named dash.\n")
    monkeypatch.chdir(tmp_path)
    typed(monkeypatch, b"From standard input.\n")
    code, _, err = run_cli(capsys, "kb", "edit", "card-charged-twice", "--text-file", "./-",
                           "--kb", str(kb_copy))  # fmt: skip
    assert code == 0, err
    assert text_of(capsys, kb_copy, "card-charged-twice") == "From the file named dash."


@pytest.mark.parametrize("command", ["add", "edit"])
def test_help_says_so(
    command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")
    code, out, _ = run_cli(capsys, "kb", command, "--help")
    assert code == 0 and "--text-file FILE  read the text from FILE; - reads standard input" in out
