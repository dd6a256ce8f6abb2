"""Only the commands that use the knowledge base copy the shipped one into the user's data
folder on first use: `doctor` ("doctor makes nothing"), `stats`, `conversations`, `users` and
`valen` never read it, and must create nothing."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from chatbot.paths import default_knowledge_base
from tests.cli_run import run_cli


def test_commands_that_never_read_the_knowledge_base_do_not_seed_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    own = default_knowledge_base()
    assert own.is_relative_to(tmp_path)  # The test's own data folder (conftest).
    missing = str(tmp_path / "missing" / "x.sqlite3")
    for argv in (["doctor"], ["stats"], ["conversations", "list", "--db", missing],
                 ["stats", "--db", missing]):  # fmt: skip
        run_cli(capsys, *argv)
        assert not own.exists(), argv
    # A command that uses it does: the first `kb list` finds the shipped passages.
    code, out, _ = run_cli(capsys, "kb", "list")
    assert code == 0 and len(out.splitlines()) == 10
    assert (own / "helmet.json").is_file() and (own / "zh" / "helmet.json").is_file()


def test_users_and_valen_do_not_seed_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    own = default_knowledge_base()
    assert own.is_relative_to(tmp_path)
    db = str(tmp_path / "accounts.sqlite3")
    # Nothing listens on port 9 (discard): the check fails at once, having read the settings.
    for argv in (["users", "list"], ["users", "list", "--db", db],
                 ["valen", "check", "--base-url", "http://127.0.0.1:9"]):  # fmt: skip
        run_cli(capsys, *argv)
        assert not own.exists(), argv
    # Nor those that write: an account is made, the knowledge base is not.
    monkeypatch.setattr("sys.stdin", io.StringIO("correct horse battery\n"))
    code, _, err = run_cli(
        capsys, "users", "add", "ana", "--role", "admin", "--password-stdin", "--db", db
    )
    assert code == 0, err
    for argv in (["users", "edit", "ana", "--display-name", "Ana", "--db", db],
                 ["users", "rm", "ana", "--db", db]):  # fmt: skip
        code, _, err = run_cli(capsys, *argv)
        assert code == 0, err
    assert not own.exists()
