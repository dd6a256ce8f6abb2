"""A recording worker that met a corrupt replay cache records again once the file is repaired or
moved aside, as its warning ("not written until repaired or moved aside") promises: it used to
record nothing for the rest of its life, silently, whatever became of the file."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from chatbot.valen import PREDICATE, PassageJudge, ReplayCache, ValenClient
from chatbot.valen.cache import FORMAT, CacheEntry
from chatbot.valen.client import RetryPolicy
from tests.valen_server import ValenTestServer, constant

CORRUPT = b'{"format": "helpdesk-valen-replay/1", "entries": {"abc": {"probab'
KEPT = CacheEntry("kept before", PREDICATE, None, 0.25)


def entries(path: Path) -> dict[str, object]:
    found: dict[str, object] = json.loads(path.read_text())["entries"]
    return found


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


@pytest.mark.parametrize("how", ["repaired", "moved aside"])
def test_recording_resumes_once_the_file_is_repaired_or_gone(
    how: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "cache.json"
    path.write_bytes(CORRUPT)
    cache = ReplayCache(path)  # One object for the worker's whole life, as a bot has.
    caplog.set_level(logging.WARNING)

    assert cache.record([CacheEntry("first", PREDICATE, None, 0.9)]) == 0
    assert cache.record([CacheEntry("second", PREDICATE, None, 0.8)]) == 0
    assert path.read_bytes() == CORRUPT
    [warned] = warnings(caplog)
    assert "not written until repaired or moved aside" in warned

    if how == "repaired":
        path.write_text(json.dumps({"format": FORMAT, "entries": {KEPT.key: KEPT.to_json()}}))
    else:
        path.rename(tmp_path / "cache.json.broken")
    assert cache.record([CacheEntry("third", PREDICATE, None, 0.7)]) == 1
    recorded = entries(path)
    assert CacheEntry("third", PREDICATE, None, 0.7).key in recorded
    assert (KEPT.key in recorded) == (how == "repaired")  # The repaired entries are kept.
    assert cache.corrupt is None
    assert "usable again: recording resumed" in warnings(caplog)[-1]
    assert cache.lookup(input="third", instructions=PREDICATE, model=None) is not None


def test_a_file_that_changes_but_stays_corrupt_is_still_left_alone_and_warned_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "cache.json"
    path.write_bytes(CORRUPT)
    cache = ReplayCache(path)
    caplog.set_level(logging.WARNING)
    assert cache.record([CacheEntry("first", PREDICATE, None, 0.9)]) == 0
    half_repaired = CORRUPT + b'ility": 0.5'
    path.write_bytes(half_repaired)
    assert cache.record([CacheEntry("second", PREDICATE, None, 0.8)]) == 0
    assert path.read_bytes() == half_repaired
    assert len(warnings(caplog)) == 1
    assert cache.corrupt is not None


async def test_a_recording_judge_records_again_after_the_repair(
    tmp_path: Path, valen_server: ValenTestServer
) -> None:
    # The bot's path: one judge, one cache, live answers all along.
    path = tmp_path / "cache.json"
    path.write_bytes(CORRUPT)
    valen_server.responder = constant(0.9)
    async with httpx.AsyncClient() as http:
        client = ValenClient(http, base_url=valen_server.base_url, api_key=SecretStr("k"),
                             retry=RetryPolicy(max_attempts=1))  # fmt: skip
        judge = PassageJudge(replay="record", cache=ReplayCache(path), client=client)
        assert await judge.judge("before", ["a passage"]) == [0.9]
        assert path.read_bytes() == CORRUPT
        path.unlink()
        assert await judge.judge("after", ["a passage"]) == [0.9]
    assert len(entries(path)) == 1
