"""`helpdesk`, `helpdesk chat`, `helpdesk agent`: bad input is one line on stderr, never a
traceback.

The app paints its first screen before it loads its settings and opens the desk (issue 13), so
bad settings end an app that has started: each case runs the real command in a terminal (a pty),
and what is left on that terminal once the app has given it back is the one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.cli.main import build_parser
from tests.tui.terminal_helpers import LEAVE_SCREEN, after_the_app, run_in_terminal


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


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """The user's own config, data and environment settings shut out."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HELPDESK_", "VALEN_"))}
    return env | {
        "HELPDESK_CONFIG": str(tmp_path / "none.toml"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "TERM": "xterm-256color",
    }


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
        (
            ["--threshold", "7"],
            "invalid option --threshold: Input should be less than or equal to 1",
        ),
    ],
)
def test_bad_input_is_one_line_and_a_nonzero_exit(
    arguments: list[str], message: str, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    (tmp_path / "file").write_text("")
    (tmp_path / "notdb").write_text("not a database " * 100)
    code, output = run_in_terminal([a.format(tmp=tmp_path) for a in arguments], cli_env)
    assert code == 2, output
    assert LEAVE_SCREEN in output  # The app had started: the error ended it.
    left = after_the_app(output).strip()
    assert left.count("\n") == 0 and message in left, left
    assert left.startswith("helpdesk: error: ")
    assert "secret" not in output  # A password in a URL is never echoed.
    assert "Traceback" not in output


def test_a_bad_config_file_is_one_line(tmp_path: Path, cli_env: dict[str, str]) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[engine]\nthreshold = [\n", encoding="utf-8")
    code, output = run_in_terminal(
        ["--db", str(tmp_path / "ok.db")], cli_env | {"HELPDESK_CONFIG": str(config)}
    )
    assert code == 2, output
    left = after_the_app(output).strip()
    assert left.startswith("helpdesk: error: cannot read configuration") and "\n" not in left
    assert "Traceback" not in output


def test_a_bad_db_as_a_process(tmp_path: Path) -> None:
    """Without a terminal too (output piped), the error is the last line, never a traceback."""
    result = subprocess.run(
        [sys.executable, "-m", "chatbot", "--db", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    last = after_the_app(result.stderr).strip()
    assert last.count("\n") == 0 and "is a directory" in last
    assert "Traceback" not in result.stderr
