"""The replay cache cannot hurt you: what it records, what it replays, and how it survives a
corrupt file and two processes recording at once."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from chatbot.assembly import build_engine, make_http_client
from chatbot.config import load_settings
from chatbot.engine.models import Decision
from chatbot.valen import PREDICATE, PassageJudge, ReplayCache, ValenClient, input_text
from chatbot.valen.cache import CacheEntry, cache_key
from chatbot.valen.client import RetryPolicy
from chatbot.valen.errors import RefusedError, ReplayMissError
from chatbot.valen.protocol import Dialect
from tests.conftest import ROOT
from tests.valen_faults import FAST, QUESTION
from tests.valen_server import (
    Received,
    Reply,
    ValenTestServer,
    constant,
    probability_reply,
    refusal_reply,
    running,
)

FAST_RETRY = RetryPolicy(max_attempts=2, base_delay_s=0.01, max_delay_s=0.02)


def judge_for(server: ValenTestServer, cache: Path, *, dialect: Dialect = "decisions",
              key: str | None = None, http: httpx.AsyncClient) -> PassageJudge:  # fmt: skip
    client = ValenClient(http, base_url=server.base_url, dialect=dialect,
                         api_key=SecretStr(key) if key else None, retry=FAST_RETRY)  # fmt: skip
    return PassageJudge(replay="record", cache=ReplayCache(cache), client=client)


async def test_the_key_ignores_base_url_api_key_and_dialect(tmp_path: Path) -> None:
    cache = tmp_path / "cache.json"
    passages = ["Tandems can be rented at the main station.", "We have no tandems."]
    async with httpx.AsyncClient() as http:
        with running(constant(0.61)) as first:
            judge = judge_for(first, cache, dialect="decisions", key="key-one", http=http)
            assert await judge.judge("Tandems?", passages) == [0.61, 0.61]
        with running(constant(0.83)) as second:
            judge = judge_for(second, cache, dialect="systemone", key="key-two", http=http)
            assert await judge.judge("Tandems?", passages) == [0.83, 0.83]
    entries = json.loads(cache.read_text())["entries"]
    assert len(entries) == 2  # The second recording replaced the first, entry for entry.
    replay = PassageJudge(replay="on", cache=ReplayCache(cache))
    assert await replay.judge("Tandems?", passages) == [0.83, 0.83]


def test_the_key_does_depend_on_model_predicate_and_input() -> None:
    base = {"input": "Customer question: a\n\nHelp-center passage: b", "instructions": PREDICATE}
    keys = {
        cache_key(**base, model=None),
        cache_key(**base, model="valen-preview"),
        cache_key(input=base["input"], instructions="Another wording.", model=None),
        cache_key(input=base["input"] + " ", instructions=PREDICATE, model=None),
    }
    assert len(keys) == 4
    assert cache_key(**base, model=None) == cache_key(**base, model="")


async def test_only_valid_answers_are_recorded_and_refusals_as_refusals(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    def respond(received: Received, _: int) -> Reply:
        passage = received.body["input"].rsplit(": ", 1)[1]
        if passage == "good":
            return probability_reply(received, 0.88)
        if passage == "refused":
            return refusal_reply(received)
        if passage == "invalid":
            return probability_reply(received, 1.5)
        if passage == "html":
            return Reply(raw=b"<html><title>Oops</title></html>",
                         headers={"content-type": "text/html"})  # fmt: skip
        return Reply(status=503, body={"detail": "busy"})

    valen_server.responder = respond
    cache = tmp_path / "cache.json"
    passages = ["good", "refused", "invalid", "html", "busy"]
    async with httpx.AsyncClient() as http:
        live = await judge_for(valen_server, cache, http=http).judge("Q?", passages)
    assert [type(o).__name__ for o in live] == [
        "float", "RefusedError", "InvalidResponseError", "InvalidResponseError", "ServerError",
    ]  # fmt: skip

    recorded = json.loads(cache.read_text())["entries"].values()
    assert sorted((e["input"].rsplit(": ", 1)[1], e.get("probability"), e.get("refused"))
                  for e in recorded) == [("good", 0.88, None), ("refused", None, True)]  # fmt: skip

    replayed = await PassageJudge(replay="on", cache=ReplayCache(cache)).judge("Q?", passages)
    assert replayed[0] == 0.88
    assert isinstance(replayed[1], RefusedError)
    assert all(isinstance(o, ReplayMissError) for o in replayed[2:])


def settings(tmp_path: Path, base_url: str, *, replay: str, cache: Path) -> Any:
    return load_settings(valen={"base_url": base_url, "replay": replay, "cache": cache, **FAST},
                         engine={"k": 2})  # fmt: skip


async def ask(settings: Any) -> Decision:
    async with make_http_client(settings) as http:
        return await build_engine(settings, http).answer(QUESTION)


async def test_a_replay_hit_makes_no_request(
    valen_server: ValenTestServer, tmp_path: Path, cache_copy: Path
) -> None:
    decision = await ask(settings(tmp_path, valen_server.base_url, replay="on", cache=cache_copy))
    assert decision.answer is not None and decision.answer.id == "card-charged-twice"
    assert valen_server.received == []


async def test_a_replay_miss_is_not_judged_and_makes_no_request(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.json"
    decision = await ask(settings(tmp_path, valen_server.base_url, replay="on", cache=empty))
    assert decision.reason is not None and decision.reason.value == "not-judged"
    assert {c.error_kind for c in decision.candidates} == {"replay-miss"}
    # The file is not there at all: each passage says so, not that a recording is missing.
    assert {c.error for c in decision.candidates} == {
        "replay-miss: the replay cache file does not exist"
    }
    assert valen_server.received == []
    assert not empty.exists()


async def test_a_miss_says_whether_the_recordings_lacked_it_or_could_not_be_read(
    tmp_path: Path,
) -> None:
    recorded = tmp_path / "recorded.json"
    ReplayCache(recorded).record([CacheEntry(input_text("q", "other"), PREDICATE, None, 0.9)])
    broken = tmp_path / "broken.json"
    broken.write_bytes(CORRUPT)
    said = {}
    for path in (recorded, broken):
        [outcome] = await PassageJudge(replay="on", cache=ReplayCache(path)).judge("q", ["p"])
        assert isinstance(outcome, ReplayMissError)
        said[path.name] = str(outcome)
    assert said == {
        "recorded.json": "no recorded answer for this question and passage",
        "broken.json": "the replay cache could not be read (see the warning about it)",
    }


CORRUPT = b'{"format": "helpdesk-valen-replay/1", "entries": {"abc": {"probab'


async def test_a_corrupt_cache_warns_once_and_is_never_overwritten(
    valen_server: ValenTestServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = tmp_path / "cache.json"
    cache.write_bytes(CORRUPT)
    valen_server.responder = constant(0.9)
    caplog.set_level(logging.WARNING)

    # Replay: every passage not judged, one warning for any number of questions.
    on = settings(tmp_path, valen_server.base_url, replay="on", cache=cache)
    async with make_http_client(on) as http:
        engine = build_engine(on, http)
        for _ in range(3):
            decision = await engine.answer(QUESTION)
            assert decision.reason is not None and decision.reason.value == "not-judged"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "malformed JSON" in warnings[0].getMessage()
    assert "not written until repaired or moved aside" in warnings[0].getMessage()

    # Record: live answers still reach the customer, the file keeps its bytes, still one warning.
    caplog.clear()
    record = settings(tmp_path, valen_server.base_url, replay="record", cache=cache)
    async with make_http_client(record) as http:
        engine = build_engine(record, http)
        for _ in range(3):
            decision = await engine.answer(QUESTION)
            assert decision.answer is not None and decision.answer.probability == 0.9
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
    assert cache.read_bytes() == CORRUPT
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []

    # Moved aside, the next run records afresh.
    cache.rename(tmp_path / "cache.json.broken")
    await ask(record)
    assert len(json.loads(cache.read_text())["entries"]) == 2


def test_a_file_that_is_json_but_not_a_cache_is_not_overwritten(tmp_path: Path) -> None:
    cache = tmp_path / "cache.json"
    cache.write_text('["not", "a", "cache"]')
    assert ReplayCache(cache).record([CacheEntry("i", PREDICATE, None, 0.5)]) == 0
    assert cache.read_text() == '["not", "a", "cache"]'


def test_entries_with_bad_probabilities_replay_as_misses(tmp_path: Path) -> None:
    cache = tmp_path / "cache.json"
    good = CacheEntry("in", PREDICATE, None, 0.4)
    entries: dict[str, Any] = {good.key: good.to_json()}
    for text, value in [("nan", float("nan")), ("big", 2.0), ("str", "0.5"), ("bool", True)]:
        entry = CacheEntry(text, PREDICATE, None, 0.5)
        entries[entry.key] = {**entry.to_json(), "probability": value}
    cache.write_text(json.dumps({"format": "helpdesk-valen-replay/1", "entries": entries}))
    replay = ReplayCache(cache)
    assert replay.lookup(input="in", instructions=PREDICATE, model=None) == good
    for text in ["nan", "big", "str", "bool"]:
        assert replay.lookup(input=text, instructions=PREDICATE, model=None) is None


RECORDER = """
import sys, time
from pathlib import Path
from chatbot.valen.cache import CacheEntry, ReplayCache
path, who, count, barrier = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
# A barrier on files: say we are ready, then wait until every recorder is, so neither starts
# writing before the other is up (a condition, not a guessed pause).
(barrier / who).touch()
while len(list(barrier.iterdir())) < 2:
    time.sleep(0.001)
cache = ReplayCache(path)
started = time.monotonic()
for i in range(count):
    # One recording per answer, as a busy desk makes them: every write races the other process.
    assert cache.record([CacheEntry(f"{who} input {i}", "predicate", None, i / count)]) == 1
print(started, time.monotonic())
"""

PER_PROCESS = 60


def test_two_processes_recording_at_once_lose_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "shared" / "cache.json"
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", RECORDER, str(cache), who, str(PER_PROCESS), str(barrier)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for who in ("alpha", "beta")
    ]
    spans = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=60)
        assert process.returncode == 0, stderr
        started, ended = map(float, stdout.split())
        spans.append((started, ended))
    # They really raced: each began recording before the other had finished (CLOCK_MONOTONIC is
    # one clock for every process on the machine).
    (a_start, a_end), (b_start, b_end) = spans
    assert a_start < b_end and b_start < a_end, spans
    entries = json.loads(cache.read_text())["entries"]
    assert len(entries) == 2 * PER_PROCESS
    inputs = {entry["input"] for entry in entries.values()}
    for who in ("alpha", "beta"):
        assert {f"{who} input {i}" for i in range(PER_PROCESS)} <= inputs
    leftovers = [p.name for p in cache.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_a_recording_keeps_the_file_mode_and_sorted_pretty_json(tmp_path: Path) -> None:
    cache = tmp_path / "cache.json"
    ReplayCache(cache).record([CacheEntry("b", PREDICATE, None, 0.2)])
    ReplayCache(cache).record([CacheEntry("a", PREDICATE, "m", None)])
    text = cache.read_text()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert cache.stat().st_mode & 0o777 == 0o644
    assert {e.get("refused", False) for e in json.loads(text)["entries"].values()} == {
        False, True,
    }  # fmt: skip


def test_input_text_is_the_cookbook_layout() -> None:
    assert input_text("Q?", "P.") == "Customer question: Q?\n\nHelp-center passage: P."


HOSTILE_CACHES = {
    "nested-100000": b"[" * 100_000 + b"]" * 100_000,
    "huge-integer": b'{"format": "helpdesk-valen-replay/1", "entries": {"k": {"probability": '
    + b"7" * 5000
    + b"}}}",
    "not-utf8": b'{"entries": {"\xff": 1}}',
}


@pytest.mark.parametrize(
    ("content", "how"),
    list(zip(HOSTILE_CACHES.values(), ["env", "option", "option"], strict=True)),
    ids=HOSTILE_CACHES.keys(),
)
def test_a_cache_that_breaks_a_json_reader_is_one_warning_and_left_alone(
    content: bytes, how: str, tmp_path: Path
) -> None:
    cache = tmp_path / "cache.json"
    cache.write_bytes(content)
    # VALEN_CACHE for one file, --cache for the others: both reach the same loader.
    env = {"VALEN_CACHE": str(cache)} if how == "env" else {}
    args = ["ask", QUESTION] + ([] if env else ["--cache", str(cache)])
    result = subprocess.run(
        [sys.executable, "-m", "chatbot", *args], cwd=ROOT, capture_output=True, text=True,
        timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT), **env}, check=False,
    )  # fmt: skip
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    [warning] = result.stderr.splitlines()
    assert warning.startswith("helpdesk: warning: replay cache ignored")
    assert str(cache) in warning
    assert result.stdout.startswith("Escalated to a person: not-judged")
    assert cache.read_bytes() == content


def test_a_cache_path_that_does_not_exist_warns_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = tmp_path / "typo" / "rerank.json"
    result = subprocess.run(
        [sys.executable, "-m", "chatbot", "ask", QUESTION, "--cache", str(missing)], cwd=ROOT,
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert result.returncode == 0
    assert result.stderr == (f"helpdesk: warning: replay cache {missing} does not exist: every "
                             "passage is a replay miss (not judged)\n")  # fmt: skip
    assert "replay-miss is not a failure" in result.stdout
    assert not missing.parent.exists()

    # Once per cache, however many questions; and not at all when recording creates it.
    caplog.set_level(logging.WARNING)
    cache = ReplayCache(missing)
    for _ in range(3):
        assert cache.lookup(input="q", instructions=PREDICATE, model=None) is None
    assert len(caplog.records) == 1
    caplog.clear()
    recording = ReplayCache(tmp_path / "new.json")
    assert recording.record([CacheEntry("q", PREDICATE, None, 0.5)]) == 1
    assert recording.lookup(input="q", instructions=PREDICATE, model=None) is not None
    assert caplog.records == []
