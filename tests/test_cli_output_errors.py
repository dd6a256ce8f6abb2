"""Standard output that cannot be written: one line and a failing status, never a traceback."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.cli.main import main
from tests.conftest import ROOT

Q1 = "I was charged twice for the same ride, can I get my money back?"


class _FullDisk(io.StringIO):
    """A stream whose every write fails as one to /dev/full does."""

    def write(self, _text: str) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("argv", [["ask", Q1, "--json"], ["ask", Q1], ["kb", "export"]])
def test_a_full_disk_is_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    full = _FullDisk()
    monkeypatch.setattr(sys, "stdout", full)
    code = main(argv)
    assert sys.stdout is full  # Put back as it was.
    err = capsys.readouterr().err
    assert code == 1
    assert err == "helpdesk: error: cannot write output: No space left on device\n"


def test_no_standard_output_at_all_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `>&-` leaves Python with `sys.stdout = None`: every print vanished, then the closing flush
    # raised AttributeError.
    monkeypatch.setattr(sys, "stdout", None)
    code = main(["ask", Q1, "--json"])
    assert sys.stdout is None
    assert code == 1
    assert capsys.readouterr().err == (
        "helpdesk: error: cannot write output: standard output is closed\n"
    )


def _helpdesk(*argv: str, stdout: int | None = None, close_stdout: bool = False) -> tuple[int, str]:
    result = subprocess.run(
        [sys.executable, "-m", "chatbot", *argv], cwd=ROOT, stdout=stdout, stderr=subprocess.PIPE,
        text=True, timeout=120, preexec_fn=(lambda: os.close(1)) if close_stdout else None,
    )  # fmt: skip
    return result.returncode, result.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_full_disk_as_a_shell_gives_it() -> None:
    with open("/dev/full", "w") as full:
        code, err = _helpdesk("ask", Q1, "--json", stdout=full.fileno())
    # One line: no traceback, nor Python's "Exception ignored" from its own flush at exit.
    assert (code, err) == (1, "helpdesk: error: cannot write output: No space left on device\n")


def test_a_closed_standard_output_as_a_shell_gives_it() -> None:
    code, err = _helpdesk("ask", Q1, close_stdout=True)
    assert (code, err) == (1, "helpdesk: error: cannot write output: standard output is closed\n")
