"""Reading the recorded questions out of a replay cache file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.config import Settings, load_settings
from chatbot.tui.suggestions import recorded_questions
from tests.conftest import SHIPPED_CACHE
from tests.tui.conftest import Q1, Q3, SIZE, MakeApp


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


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"entries": {"k": ' + "[" * 100_000 + "]" * 100_000 + "}}", id="nested"),
        pytest.param("[" * 100_000 + "]" * 100_000, id="nested-document"),
        pytest.param('{"entries": {"k": {"input": ' + "9" * 5000 + "}}}", id="5000-digits"),
        pytest.param('{"entries": {"k": {"input": "\xff"}}}', id="not-utf8"),
    ],
)
def test_a_hostile_cache_offers_nothing_and_raises_nothing(text: str, tmp_path: Path) -> None:
    # The suggestions used to parse the file with json.loads of their own, and a cache nested
    # 100,000 deep raised RecursionError out of create_app: the app did not start.
    hostile = tmp_path / "hostile.json"
    hostile.write_bytes(text.encode("latin-1"))
    assert recorded_questions(hostile) == ()


@pytest.fixture
def settings(db_path: Path, tmp_path: Path) -> Settings:
    """The app's settings with a replay cache nested 100,000 deep."""
    deep = tmp_path / "deep.json"
    deep.write_text('{"entries": {"k": ' + "[" * 100_000 + "]" * 100_000 + "}}")
    return load_settings(store={"db": db_path}, valen={"cache": deep})


async def test_the_app_starts_on_a_cache_nested_100000_deep(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE):
        assert app.services.suggestions == ()
        assert app.is_running
