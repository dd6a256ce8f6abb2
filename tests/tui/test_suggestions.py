"""Reading the recorded questions out of a replay cache file."""

from __future__ import annotations

import json
from pathlib import Path

from chatbot.tui.suggestions import recorded_questions
from tests.conftest import SHIPPED_CACHE
from tests.tui.conftest import Q1, Q3


def test_the_shipped_cache_offers_the_seed_questions() -> None:
    questions = recorded_questions(SHIPPED_CACHE)
    assert questions[0] == Q1 and Q3 in questions
    assert len(questions) == len(set(questions))


def test_a_missing_or_odd_cache_offers_nothing(tmp_path: Path) -> None:
    assert recorded_questions(tmp_path / "none.json") == ()
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"entries": {"k": {"input": "no prefix here"}}, "format": 1}))
    assert recorded_questions(odd) == ()
    odd.write_text("[1, 2]")
    assert recorded_questions(odd) == ()
