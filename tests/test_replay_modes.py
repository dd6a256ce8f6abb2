"""Replay cache modes: on (cache only), off (live, cache untouched), record (live, saved)."""

import json
from pathlib import Path

import httpx

from chatbot.valen import PREDICATE, PassageJudge, ReplayCache, ValenClient, input_text
from chatbot.valen.errors import ReplayMissError
from tests.valen_server import ValenTestServer, constant

QUESTION = "I was charged twice for the same ride, can I get my money back?"
CHARGED_TWICE = (
    "Charged twice for one ride? The first charge is a temporary hold of 1 euro to check your "
    "card. It disappears within 7 days and is never collected."
)


async def test_on_replays_the_recorded_probability_without_a_request(
    cache_copy: Path, valen_server: ValenTestServer
) -> None:
    judge = PassageJudge(replay="on", cache=ReplayCache(cache_copy))
    assert await judge.judge(QUESTION, [CHARGED_TWICE]) == [0.8985652729227516]
    assert valen_server.received == []


async def test_on_turns_a_miss_into_not_judged(cache_copy: Path) -> None:
    judge = PassageJudge(replay="on", cache=ReplayCache(cache_copy))
    [outcome] = await judge.judge("Do you rent tandems?", [CHARGED_TWICE])
    assert isinstance(outcome, ReplayMissError)


async def test_on_with_a_missing_cache_file_is_all_misses(tmp_path: Path) -> None:
    judge = PassageJudge(replay="on", cache=ReplayCache(tmp_path / "none.json"))
    [outcome] = await judge.judge(QUESTION, [CHARGED_TWICE])
    assert isinstance(outcome, ReplayMissError)
    assert not (tmp_path / "none.json").exists()


async def test_off_asks_valen_and_leaves_the_cache_alone(
    cache_copy: Path, valen_server: ValenTestServer
) -> None:
    before = cache_copy.read_bytes()
    valen_server.responder = constant(0.42)
    async with httpx.AsyncClient() as http:
        client = ValenClient(http, base_url=valen_server.base_url)
        judge = PassageJudge(replay="off", cache=ReplayCache(cache_copy), client=client)
        # A recorded pair is asked live too: `off` means live.
        assert await judge.judge(QUESTION, [CHARGED_TWICE, "other"]) == [0.42, 0.42]
    assert len(valen_server.received) == 2
    assert cache_copy.read_bytes() == before


async def test_record_writes_answers_that_then_replay(
    tmp_path: Path, valen_server: ValenTestServer
) -> None:
    cache_path = tmp_path / "new" / "cache.json"
    valen_server.responder = constant(0.77)
    async with httpx.AsyncClient() as http:
        client = ValenClient(http, base_url=valen_server.base_url)
        judge = PassageJudge(replay="record", cache=ReplayCache(cache_path), client=client)
        assert await judge.judge("Tandems?", ["We rent tandems.", "No."]) == [0.77, 0.77]
    entries = json.loads(cache_path.read_text())["entries"]
    assert {e["input"] for e in entries.values()} == {
        input_text("Tandems?", "We rent tandems."),
        input_text("Tandems?", "No."),
    }
    assert all(e["instructions"] == PREDICATE for e in entries.values())
    replayed = PassageJudge(replay="on", cache=ReplayCache(cache_path))
    assert await replayed.judge("Tandems?", ["We rent tandems."]) == [0.77]
    assert len(valen_server.received) == 2


async def test_record_keeps_existing_entries(
    cache_copy: Path, valen_server: ValenTestServer
) -> None:
    async with httpx.AsyncClient() as http:
        client = ValenClient(http, base_url=valen_server.base_url)
        judge = PassageJudge(replay="record", cache=ReplayCache(cache_copy), client=client)
        await judge.judge("Tandems?", ["We rent tandems."])
    assert len(ReplayCache(cache_copy)) == 16
    assert await PassageJudge(replay="on", cache=ReplayCache(cache_copy)).judge(
        QUESTION, [CHARGED_TWICE]
    ) == [0.8985652729227516]


def test_recording_with_no_cache_named_goes_to_the_users_copy_and_is_replayed_from_it(
    tmp_path: Path,
) -> None:
    """`--replay record` with no cache named wrote into the package's own file (tracked by git,
    or in site-packages); recordings now go to a copy in the user's data folder, which replay
    then reads (the test's XDG_DATA_HOME is its own)."""
    from chatbot.config import load_settings
    from chatbot.paths import recorded_cache, shipped_cache

    own = recorded_cache()
    assert own.is_relative_to(tmp_path) and not own.exists()
    assert load_settings().valen.cache == shipped_cache()  # Nothing recorded yet: the shipped.
    shipped = shipped_cache().read_bytes()
    recording = load_settings(valen={"replay": "record"}).valen
    assert recording.cache == own and own.read_bytes() == shipped
    assert load_settings().valen.cache == own  # Replayed from the copy from now on.
    named = tmp_path / "mine.json"
    assert load_settings(valen={"replay": "record", "cache": named}).valen.cache == named
    assert shipped_cache().read_bytes() == shipped
