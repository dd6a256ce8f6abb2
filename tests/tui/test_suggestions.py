"""Reading the recorded questions out of a replay cache file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.config import Settings, load_settings
from chatbot.tui.suggestions import Suggestion, recorded_questions
from chatbot.valen.protocol import PREDICATE
from tests.conftest import SHIPPED_CACHE
from tests.tui.conftest import Q1, Q2, Q3, SIZE, MakeApp


def test_the_shipped_cache_offers_the_seed_questions() -> None:
    suggestions = recorded_questions(SHIPPED_CACHE)
    questions = [s.question for s in suggestions]
    assert questions[0] == Q1 and Q3 in questions
    assert len(questions) == len(set(questions))


def test_a_question_whose_recorded_answers_miss_the_threshold_goes_to_a_person() -> None:
    # The third question's best recorded probability is 0.644: under 0.7 a person replies.
    answered = {s.question: s.answered for s in recorded_questions(SHIPPED_CACHE)}
    assert answered == {Q1: True, Q2: True, Q3: False}
    # The threshold decides, not the question: at 0.6 the bot would answer it too.
    lower = recorded_questions(SHIPPED_CACHE, threshold=0.6)
    assert all(s.answered for s in lower)
    # Recordings under another predicate or model would not replay, so they answer nothing.
    assert recorded_questions(SHIPPED_CACHE, predicate=PREDICATE + " ") == ()
    assert recorded_questions(SHIPPED_CACHE, model="other-model") == ()


def test_a_refusal_or_an_odd_probability_never_counts_as_an_answer(tmp_path: Path) -> None:
    def entry(question: str, **answer: object) -> dict[str, object]:
        text = f"Customer question: {question}\n\nHelp-center passage: p"
        return {"input": text, "instructions": PREDICATE, "model": None, **answer}

    cache = tmp_path / "cache.json"
    entries = {
        "a": entry("refused?", refused=True),
        "b": entry("true?", probability=True),
        "c": entry("text?", probability="0.9"),
        "d": entry("sure?", probability=0.95),
    }
    cache.write_text(json.dumps({"entries": entries, "format": 1}))
    assert recorded_questions(cache) == (
        Suggestion("refused?", answered=False),
        Suggestion("true?", answered=False),
        Suggestion("text?", answered=False),
        Suggestion("sure?", answered=True),
    )


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
