"""`helpdesk --help` and every subcommand's --help load no heavy library (issue 13: the help
took 1.6 s when registering the commands imported the engine, pydantic and httpx), and say
what they said before: the choices offered come from the same enums the models use."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.accounts.models import Role
from chatbot.cli.main import build_parser, main
from chatbot.desk.models import State
from chatbot.paths import default_database, default_knowledge_base

HEAVY = ["numpy", "pydantic", "pydantic_settings", "textual", "httpx", "rich", "asyncio"]

COMMANDS = [
    "ask",
    "eval",
    "kb",
    "valen",
    "chat",
    "agent",
    "bot",
    "conversations",
    "users",
    "serve",
    "stats",
]


def _help(*arguments: str) -> tuple[str, list[str]]:
    """The help text of `helpdesk ARGUMENTS --help`, run in a fresh interpreter, and which heavy
    libraries that interpreter had imported by the time it exited."""
    code = (
        "import atexit, sys\n"
        f"atexit.register(lambda: print(sorted(m for m in {HEAVY!r} if m in sys.modules),"
        " file=sys.stderr))\n"
        "from chatbot.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, *arguments, "--help"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    loaded: list[str] = ast.literal_eval(result.stderr.strip().splitlines()[-1])
    return result.stdout, loaded


def test_the_top_level_help_lists_every_command_and_loads_nothing_heavy() -> None:
    text, loaded = _help()
    assert loaded == []
    assert text.startswith("usage: helpdesk ")
    for command in COMMANDS:
        assert f"    {command} " in text, command
    assert "answer one question from the knowledge base" in text


@pytest.mark.parametrize(
    "arguments",
    [["ask"], ["users", "add"], ["conversations", "list"], ["kb", "add"], ["valen", "check"],
     ["serve"], ["bot"], ["eval"], ["agent"], ["stats"], ["kb", "synonyms", "add"]],
)  # fmt: skip
def test_each_subcommand_help_loads_nothing_heavy(arguments: list[str]) -> None:
    text, loaded = _help(*arguments)
    assert loaded == []
    assert text.startswith(f"usage: helpdesk {' '.join(arguments)} ")


def test_the_choices_offered_are_the_models_own(capsys: pytest.CaptureFixture[str]) -> None:
    # What the help says, not what loading it costs: this process will do.
    for arguments, choices in ((["users", "add"], Role), (["conversations", "list"], State)):
        with pytest.raises(SystemExit) as exited:
            main([*arguments, "--help"])
        assert exited.value.code == 0
        assert "{" + ",".join(choice.value for choice in choices) + "}" in capsys.readouterr().out


@pytest.mark.parametrize("folder", ["data", "100% mine"])
def test_the_help_names_where_the_passages_and_conversations_live(
    folder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The user edits a copy of the shipped passages in their data directory, so the help says
    that copy's path (it said "default: shipped"); a % in it is shown, not taken for a format."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / folder))
    knowledge_base = "".join(str(default_knowledge_base()).split())
    database = "".join(str(default_database()).split())
    assert knowledge_base.startswith("".join(str(tmp_path / folder).split()))
    for arguments, paths in (([], [knowledge_base, database]), (["ask"], [knowledge_base]),
                             (["kb", "list"], [knowledge_base])):  # fmt: skip
        with pytest.raises(SystemExit) as exited:
            main([*arguments, "--help"])
        assert exited.value.code == 0
        # argparse wraps long lines, and may break a long path across two of them.
        text = "".join(capsys.readouterr().out.split())
        for path in paths:
            assert f"default:{path}" in text, (arguments, path)
        assert "default:shipped" not in text


def test_a_replayed_ask_loads_only_what_replaying_needs() -> None:
    """Recorded answers need no HTTP client (httpx, aiohttp, an SSL context) and no file lock
    (those are for recording); issue 13 asks for it in under 0.3 s."""
    unwanted = ["httpx", "aiohttp", "filelock", "textual", "rich",
                "chatbot.cli.serve", "chatbot.cli.kb"]  # fmt: skip
    code = (
        "import atexit, sys\n"
        f"atexit.register(lambda: print(sorted(m for m in {unwanted!r} if m in sys.modules),"
        " file=sys.stderr))\n"
        "from chatbot.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    # The config file, data directory and Valen settings are the test's own already
    # (tests/conftest.py).
    env = dict(os.environ)
    result = subprocess.run(
        [sys.executable, "-c", code, "ask", "I was charged twice for the same ride, can I get "
         "my money back?"], capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Answer from card-charged-twice")
    assert ast.literal_eval(result.stderr.strip().splitlines()[-1]) == []


@pytest.mark.parametrize(
    "argv",
    [["ask", "hello", "--json", "-k", "3"], ["chat", "--db", "x.db", "--no-bot", "--kb", "kb"],
     ["agent", "--agent", "ana", "--conversation", "7"], ["kb", "synonyms", "add", "a", "b"],
     ["eval", "data.json", "--replay", "off"], ["users", "list"],
     ["conversations", "show", "3", "--json"], ["bot", "--concurrency", "5"], ["stats", "--json"],
     ["doctor"], ["valen", "check"]],
)  # fmt: skip
def test_a_line_starting_with_a_command_parses_as_with_every_command(argv: list[str]) -> None:
    # `main` builds only that command's parser for such a line (issue 13: ~15-20 ms each).
    full, fast = build_parser().parse_args(argv), build_parser(argv[0]).parse_args(argv)
    assert vars(fast) == vars(full)


@pytest.mark.parametrize(
    ("argv", "conversation", "agent"),
    [(["--conversation", "7", "chat"], 7, None), (["chat", "--conversation", "7"], 7, None),
     (["--agent", "bo", "--conversation", "3", "agent"], 3, "bo"),
     (["agent", "--agent", "bo"], None, "bo"), (["chat"], None, None)],
)  # fmt: skip
def test_app_options_before_the_command_are_kept(
    argv: list[str], conversation: int | None, agent: str | None
) -> None:
    # `helpdesk --conversation 7 chat` opened a new chat: the command's own `--conversation`,
    # unset, overwrote the 7 (and `--agent` likewise), while `--db` and the others carried.
    args = build_parser().parse_args(argv)
    assert getattr(args, "conversation", None) == conversation
    assert getattr(args, "agent", None) == agent


def test_an_empty_line_parses_as_with_every_command() -> None:
    assert vars(build_parser("").parse_args([])) == vars(build_parser().parse_args([]))


def test_numpy_loaded_by_the_engine_starts_no_blas_threads() -> None:
    # Nothing here multiplies matrices; OpenBLAS's idle threads cost `helpdesk ask` CPU.
    code = "import os, chatbot.engine.engine; print(len(os.listdir('/proc/self/task')))"
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, env=env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"
