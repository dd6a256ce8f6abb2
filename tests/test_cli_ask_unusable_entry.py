"""`helpdesk ask` on a replay cache whose entry for a candidate is recorded but cannot be
replayed (a probability of "high", 7.5 or NaN) says so of that candidate.

It said "replay-miss: no recorded answer for this question and passage", and below it "none is
recorded for this question and passage", beside the warning that the file's entries were broken:
the reader looked for a gap in the recordings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.valen.cache import cache_key
from chatbot.valen.protocol import PREDICATE, input_text
from tests.cli_process import helpdesk
from tests.conftest import SHIPPED_KB

QUESTION = "I was charged twice for the same ride, can I get my money back?"
UNUSABLE = "replay-miss: recorded answer unusable: not a probability from 0 to 1, nor a refusal"
NONE_RECORDED = "replay-miss: no recorded answer for this question and passage"
UNUSABLE_NOTE = "A replay-miss whose recorded answer is unusable comes from an entry of"
MISS_NOTE = "replay-miss is not a failure"


def rows(out: str) -> dict[str, str]:
    """Each candidate's row, by its id."""
    listed = out.split("Candidates (threshold", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    return {row.split()[0]: row for row in listed}


def ask(cache: Path) -> str:
    # A pipe: each candidate's reason on its row.
    done = helpdesk("ask", QUESTION, "--cache", str(cache), "-k", "6")
    assert done.returncode == 0
    return done.stdout


def late_return_key() -> str:
    """The shipped cache's key for `QUESTION` and the late-return passage (a candidate at
    `-k 6`)."""
    passage = json.loads((SHIPPED_KB / "late-return.json").read_text())["text"]
    return cache_key(input=input_text(QUESTION, passage), instructions=PREDICATE, model=None)


@pytest.mark.parametrize("probability", ["high", 7.5, float("nan")])
def test_a_recorded_answer_that_cannot_be_replayed_is_said_so(
    cache_copy: Path, probability: object
) -> None:
    before = rows(ask(cache_copy))
    assert "p=" in before["late-return"]  # Judged from its recording.
    assert before["refund-time"].endswith(NONE_RECORDED)  # None is recorded for this one.
    data = json.loads(cache_copy.read_text())
    data["entries"][late_return_key()]["probability"] = probability
    cache_copy.write_text(json.dumps(data))

    out = ask(cache_copy)
    after = rows(out)
    assert after["late-return"].endswith(f"not judged  {UNUSABLE}")
    assert after["refund-time"].endswith(NONE_RECORDED)
    # Each kind of miss is explained below, once.
    assert out.count(UNUSABLE_NOTE) == 1 and out.count(MISS_NOTE) == 1


def test_the_json_says_which_recorded_answer_is_unusable(cache_copy: Path) -> None:
    data = json.loads(cache_copy.read_text())
    data["entries"][late_return_key()]["probability"] = "high"
    cache_copy.write_text(json.dumps(data))
    done = helpdesk("ask", QUESTION, "--cache", str(cache_copy), "-k", "6", "--json")
    assert done.returncode == 0
    errors = {c["id"]: c["error"] for c in json.loads(done.stdout)["candidates"]}
    assert errors["late-return"] == UNUSABLE
