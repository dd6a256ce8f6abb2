"""`helpdesk eval` with no recorded answers says why nothing was judged, as `ask` does: it ended
"reranked 0/3 … escalated 3" with nothing saying every judgment was a replay miss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.cli.main import main
from tests.conftest import SEED_DATA


def test_replay_misses_are_explained_last(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "empty.json"
    cache.write_text(json.dumps({"entries": {}}))
    code = main(["eval", str(SEED_DATA), "--cache", str(cache)])
    out = capsys.readouterr().out
    assert code == 0
    assert out.rstrip().endswith(
        "All 9 judgments were replay misses, not failures: in replay mode (the default) only "
        f"recorded Valen judgments are used, from {cache}, and none is recorded for them. Ask "
        "Valen live with --replay off, or with --replay record to save its answers for next time."
    )


def test_a_report_with_no_replay_miss_says_nothing_of_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["eval", str(SEED_DATA), "--retriever", "overlap"])
    assert code == 0
    assert "replay miss" not in capsys.readouterr().out
