"""Bytes that are not UTF-8, on the command line or as a password: one line and exit 2, never a
traceback, nothing stored. Python keeps such bytes as lone surrogates (U+DC80-DCFF, one per byte:
"surrogateescape"), which no file, database or password hash can encode; `main` gets them as they
are here."""

from __future__ import annotations

import io
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.cli.main import main
from chatbot.store.sqlite import SQLiteStore
from chatbot.text import not_utf8, printable
from tests.accounts.helpers import Helpdesk, Ran, authenticates
from tests.terminal import read_until

BAD = "\udcff\udcfe bad"
"""$'\\xff\\xfe bad' as Python reads it from a command line."""
BAD_LINE = "'\\xff\\xfe bad') is not valid UTF-8: byte 0xff at character 1\n"
PASSWORD = "correct horse"
NOT_UTF8_PASSWORD = b"\xff\xfe\xfdbadutf8aaaa\n"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "helpdesk.sqlite3"
    SQLiteStore.open(path).close()
    monkeypatch.setenv("HELPDESK_DB", str(path))
    return path


@pytest.fixture
def helpdesk(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Helpdesk:
    """`helpdesk ARGS` in this process; `stdin` as bytes, read as a terminal's locale would
    (`errors`: strict, or surrogateescape as Python does under C.UTF-8)."""

    def run(*args: str, stdin: bytes = b"", errors: str = "strict") -> Ran:
        wrapper = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors=errors)
        monkeypatch.setattr("sys.stdin", wrapper)
        try:
            code = main(list(args))
        except SystemExit as leaving:  # What argparse does with a command line it refuses.
            code = leaving.code if isinstance(leaving.code, int) else 1
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run


def test_text_spells_a_byte_that_was_not_utf8_out_as_that_byte() -> None:
    assert printable(BAD) == "\\xff\\xfe bad"
    assert printable("\ud800 \x1b") == "\\ud800 \\x1b"  # Not from a byte: its code point.
    assert not_utf8("ok \udc80") == "byte 0x80 at character 4"
    assert not_utf8("\ud800") == "\\ud800 at character 1"
    assert not_utf8("café 中文") is None


@pytest.mark.parametrize(
    ("args", "name"),
    [
        pytest.param(
            ["kb", "add", "--id", "nb3", "--text", "ok", "--tag", BAD], "--tag", id="kb-tag"
        ),  # fmt: skip
        pytest.param(["kb", "add", "--id", BAD, "--text", "ok"], "--id", id="kb-id"),
        pytest.param(["kb", "synonyms", "add", BAD, "x"], "word", id="kb-synonym"),
        pytest.param(["kb", "synonyms", "add", "x", "ok", BAD], "synonym", id="kb-synonyms"),
        pytest.param(
            ["users", "add", "zz", "--role", "agent", "--display-name", BAD],
            "--display-name",
            id="users-add",
        ),  # fmt: skip
        pytest.param(
            ["users", "edit", "alex", "--display-name", BAD], "--display-name", id="users-edit"
        ),  # fmt: skip
        pytest.param(["ask", BAD], "question", id="ask"),
        pytest.param(["--agent", BAD, "users", "list"], "--agent", id="before-the-command"),
    ],
)
def test_an_argument_that_is_not_utf8_is_refused_before_the_command_runs(
    helpdesk: Helpdesk, db: Path, tmp_path: Path, args: list[str], name: str
) -> None:
    # A tag or synonym raised UnicodeEncodeError writing the file (exit 1, a traceback), a
    # display name writing the database. The refusal names the option, as argparse's own do.
    ran = helpdesk(*args)
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr == f"helpdesk: error: argument {name} ({BAD_LINE}"
    assert not any(tmp_path.rglob("nb3*")) and not any(tmp_path.rglob("synonyms.toml"))
    assert helpdesk("users", "list").stdout == ""


def test_control_characters_in_such_an_argument_are_spelled_out(helpdesk: Helpdesk) -> None:
    ran = helpdesk("ask", "\x1b[2J\x9b\udcff")
    assert ran.stderr == (
        "helpdesk: error: argument question ('\\x1b[2J\\x9b\\xff') is not valid UTF-8:"
        " byte 0xff at character 6\n"
    )


def test_a_file_name_that_is_not_utf8_is_a_file_name(
    helpdesk: Helpdesk, db: Path, tmp_path: Path, kb_copy: Path
) -> None:
    """A file's name is the bytes the system was given, not text: `kb export -o $'out\\xe9.json'`
    and `kb import` of it, `--kb` and `--db` under such a directory, work as they did. They were
    refused as "argument 4 (...) is not valid UTF-8"."""
    exported = tmp_path / os.fsdecode(b"out\xe9.json")
    ran = helpdesk("kb", "export", "--output", str(exported))
    assert ran.returncode == 0, ran.stderr
    assert os.fsencode(exported) in [os.fsencode(path) for path in tmp_path.iterdir()]
    ran = helpdesk("kb", "import", str(exported))
    assert ran.returncode == 0, ran.stderr
    assert "unchanged" in ran.stdout

    directory = tmp_path / os.fsdecode(b"d\xe9")
    shutil.copytree(kb_copy, directory / "kb")
    ran = helpdesk("kb", "list", "--kb", str(directory / "kb"))
    assert ran.returncode == 0 and ran.stderr.endswith(" passages\n"), ran.stderr
    assert "card-charged-twice" in ran.stdout
    SQLiteStore.open(directory / "x.sqlite3").close()
    ran = helpdesk("--db", str(directory / "x.sqlite3"), "users", "list")
    assert (ran.returncode, ran.stdout) == (0, ""), ran.stderr
    assert "no accounts yet" in ran.stderr


def test_a_real_command_line_with_such_bytes_is_one_line(db: Path) -> None:
    """The same through a process: the bytes as a shell passes them, Python's own decoding."""
    result = subprocess.run(
        [sys.executable, "-m", "chatbot", "kb", "synonyms", "add", b"\xff\xfe bad", "x"],
        capture_output=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"helpdesk: error: argument word ({BAD_LINE}".encode()
    assert result.stdout == b""


@pytest.mark.parametrize("errors", ["surrogateescape", "strict"])
def test_a_password_on_stdin_that_is_not_utf8_is_refused_and_nothing_stored(
    helpdesk: Helpdesk, db: Path, errors: str
) -> None:
    # Read with surrogateescape (Python's way under C.UTF-8) the hash raised UnicodeEncodeError;
    # read strictly, reading it raised UnicodeDecodeError.
    ran = helpdesk("users", "add", "z4", "--role", "agent", "--password-stdin",
                   stdin=NOT_UTF8_PASSWORD, errors=errors)  # fmt: skip
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr == "helpdesk: error: password is not valid UTF-8\n"
    assert helpdesk("users", "list").stdout == ""

    added = helpdesk("users", "add", "z5", "--role", "agent", "--password-stdin",
                     stdin=f"{PASSWORD}\n".encode())  # fmt: skip
    assert added.returncode == 0, added.stderr
    ran = helpdesk("users", "passwd", "z5", "--password-stdin",
                   stdin=NOT_UTF8_PASSWORD, errors=errors)  # fmt: skip
    assert (ran.returncode, ran.stderr) == (2, "helpdesk: error: password is not valid UTF-8\n")
    assert authenticates(db, "z5", PASSWORD)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a pty as controlling terminal")
def test_a_password_typed_at_the_prompt_that_is_not_utf8_is_refused(
    helpdesk: Helpdesk, db: Path
) -> None:
    """`getpass` reads the terminal itself (/dev/tty): the process gets a pty as its controlling
    terminal, and the bytes ff fe fd are typed at the prompt. They raised UnicodeDecodeError."""
    added = helpdesk("users", "add", "z5", "--role", "agent", "--password-stdin",
                     stdin=f"{PASSWORD}\n".encode())  # fmt: skip
    assert added.returncode == 0, added.stderr
    controller, terminal = pty.openpty()
    start = ("import fcntl, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
             "from chatbot.cli.main import main; sys.exit(main(sys.argv[1:]))")  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-c", start, "users", "passwd", "z5"],
        stdin=terminal, stdout=terminal, stderr=terminal, start_new_session=True,
    )  # fmt: skip
    os.close(terminal)
    try:
        assert b"Password: " in read_until(controller, lambda shown: b"Password: " in shown)
        os.write(controller, b"\xff\xfe\xfd\n")
        shown = read_until(controller, lambda _: False).decode("utf-8", errors="replace")
        code = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(controller)
    assert code == 2, shown
    assert shown.replace("\r\n", "\n") == "\nhelpdesk: error: password is not valid UTF-8\n"
    assert authenticates(db, "z5", PASSWORD)
