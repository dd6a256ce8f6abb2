"""Only the commands that use the knowledge base copy the shipped one into the user's data
folder on first use: `doctor` ("doctor makes nothing"), `stats` and `conversations` never read it,
and must create nothing."""

from __future__ import annotations

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
