"""`helpdesk eval DATA --passages DIR` where DIR holds no passages (a folder that is no knowledge
base, such as /etc, or an empty one) says so, naming DIR: it blamed the data file, whose first
question's relevant id "is not a passage"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_run import run_cli
from tests.conftest import SEED_DATA

NOTHING = (
    "no passages there to evaluate the questions against (a knowledge-base folder holds a "
    "NAME.json file for each)"
)


def test_eval_names_a_passages_folder_with_no_passages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for folder in (str(empty), "/etc"):
        code, out, err = run_cli(capsys, "eval", str(SEED_DATA), "--passages", folder)
        assert (code, out) == (2, "")
        assert err == f"helpdesk: error: {folder}: {NOTHING}\n"
        assert "rerank_data" not in err
