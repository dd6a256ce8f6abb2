"""`helpdesk`, `helpdesk chat`, `helpdesk agent`: bad input is one line on stderr, never a
traceback, and nothing opens."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.cli.main import build_parser, main


@pytest.mark.parametrize("command", [[], ["chat"], ["agent"]])
def test_each_mode_parses_db_and_engine_options(command: list[str], tmp_path: Path) -> None:
    args = build_parser().parse_args([*command, "--db", str(tmp_path / "x.db"), "-k", "3"])
    assert args.mode == (command[0] if command else "all")
    assert args.db == str(tmp_path / "x.db") and args.k == 3
    assert getattr(args, "bot", True) is True
    assert build_parser().parse_args([*command, "--no-bot"]).bot is False


def test_other_commands_keep_their_own_function() -> None:
    args = build_parser().parse_args(["ask", "hello"])
    assert args.func.__module__ == "chatbot.cli.ask"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--db", "{tmp}"], "is a directory, expected a database file"),
        (["chat", "--db", "{tmp}/file/x.db"], "cannot create folder"),
        (["agent", "--db", "{tmp}/notdb"], "cannot use database: file is not a database"),
        (["--db", "{tmp}/ok.db", "--kb", "{tmp}/missing"], "knowledge base not found"),
        (["agent", "--db", "{tmp}/ok.db", "--conversation", "7"], "conversation 7 not found"),
        # Port 1 on loopback refuses at once: a server that is not there, named without its
        # password.
        (
            ["--db", "postgresql://ana:secret@127.0.0.1:1/helpdesk"],
            "postgresql://ana@127.0.0.1:1/helpdesk: database unavailable",
        ),
        (["chat", "--db", "mysql://db/x"], "unknown database scheme 'mysql'"),
        (["--db", "sqlite:///{tmp}"], "is a directory, expected a database file"),
    ],
)
def test_bad_input_is_one_line_and_a_nonzero_exit(
    arguments: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("")
    (tmp_path / "notdb").write_text("not a database " * 100)
    code = main([argument.format(tmp=tmp_path) for argument in arguments])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.count("\n") == 1 and message in captured.err
    assert captured.err.startswith("helpdesk: error: ")
    assert "secret" not in captured.err  # A password in a URL is never echoed.
    assert "Traceback" not in captured.err and captured.out == ""


def test_a_bad_db_as_a_process(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "chatbot", "--db", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "is a directory" in result.stderr
