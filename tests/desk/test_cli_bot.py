"""`helpdesk bot` refuses bad settings with one line before it starts."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from chatbot.cli.main import main


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--db", "{tmp}"], "is a directory, expected a database file"),
        (["--db", "postgresql://u:secret@127.0.0.1:1/db"], "database unavailable"),
        (["--db", "{tmp}/x.db", "--concurrency", "0"], "invalid option --concurrency: "),
        (["--db", "{tmp}/x.db", "--kb", "{tmp}/missing"], "knowledge base not found"),
    ],
)
def test_bad_settings_are_one_line(
    arguments: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["bot", *(a.format(tmp=tmp_path) for a in arguments)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert "secret" not in err
    # The shared logger is left as it was: set not to propagate, it hid every later bot's log
    # lines from a test's capture in the same process.
    shared = logging.getLogger("helpdesk.bot")
    assert shared.propagate and not shared.handlers
