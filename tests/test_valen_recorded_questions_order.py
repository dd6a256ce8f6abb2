"""Which recorded questions the chat offers: the cookbook's first, in its order, then the most
recently recorded, whatever their place in the cache file (sorted by key, a hash).

The list took the first five questions in the file's order: after a few throwaway `helpdesk ask
--replay record` runs, the cookbook's questions were pushed out for arbitrary ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chatbot.tui.suggestions import recorded_questions
from chatbot.valen.cache import RECORDING, SEED_QUESTIONS, in_offer_order, read_entries
from chatbot.valen.protocol import PREDICATE, question_of
from tests.cli_run import run_cli
from tests.valen_server import ValenTestServer

# Throwaway questions the shipped knowledge base retrieves passages for, recorded in this order.
THROWAWAY = [
    "Do helmets come with the bikes?",
    "How far does an e-bike battery go?",
    "What does the student pass cost?",
    "How long does a card refund take?",
]


def record(capsys: pytest.CaptureFixture[str], cache: Path, url: str, question: str) -> None:
    code, _, err = run_cli(capsys, "ask", question, "--replay", "record", "--cache", str(cache),
                           "--base-url", url, "-k", "2")  # fmt: skip
    assert code in (0, 1) and "Traceback" not in err, err


def offered(cache: Path) -> list[str]:
    return [s.question for s in recorded_questions(cache)]


def test_the_cookbooks_questions_come_first_then_the_newest_recordings(
    capsys: pytest.CaptureFixture[str], cache_copy: Path, valen_server: ValenTestServer,
    seed_data: dict[str, Any],
) -> None:  # fmt: skip
    cookbook = [query["text"] for query in seed_data["queries"]]
    assert list(SEED_QUESTIONS) == cookbook  # The constant is the cookbook's, in its order.
    assert offered(cache_copy) == cookbook
    for question in THROWAWAY:
        record(capsys, cache_copy, valen_server.base_url, question)
    assert offered(cache_copy) == [*cookbook, THROWAWAY[3], THROWAWAY[2]]
    # Recorded again, the first throwaway is the newest.
    record(capsys, cache_copy, valen_server.base_url, THROWAWAY[0])
    assert offered(cache_copy) == [*cookbook, THROWAWAY[0], THROWAWAY[3]]


def test_each_recording_is_numbered_in_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, valen_server: ValenTestServer
) -> None:
    cache = tmp_path / "cache.json"
    for question in THROWAWAY[:2]:
        record(capsys, cache, valen_server.base_url, question)
    entries = json.loads(cache.read_text())["entries"].values()
    numbers = {question_of(e["input"]): e[RECORDING] for e in entries}
    assert numbers == {THROWAWAY[0]: 1, THROWAWAY[1]: 2}


def entry(question: str, **fields: Any) -> dict[str, Any]:
    text = f"Customer question: {question}\n\nHelp-center passage: p"
    return {"input": text, "instructions": PREDICATE, "model": None, "probability": 0.9, **fields}


def test_odd_numbers_count_as_none_and_keep_the_files_order(tmp_path: Path) -> None:
    cache = tmp_path / "cache.json"
    entries = {
        "a": entry("old, unnumbered"),
        "b": entry("a bool", recording=True),
        "c": entry("a string", recording="9"),
        "d": entry("newer", recording=7),
        "e": "not an entry",
        "f": entry(SEED_QUESTIONS[2]),
        "g": entry("newest", recording=8),
        "h": entry(SEED_QUESTIONS[0], recording=1),
    }
    cache.write_text(json.dumps({"format": "helpdesk-valen-replay/1", "entries": entries}))
    assert list(read_entries(cache) or {}) == ["h", "f", "g", "d", "a", "b", "c", "e"]
    assert list(in_offer_order(entries)) == ["h", "f", "g", "d", "a", "b", "c", "e"]
