"""One decider for every browser session's suggested questions (`chatbot.engine.suggestions`):
it decides them with an engine of the knowledge base, writes the verdicts for the sessions to
read, and decides them again at each change of the knowledge base; sessions tell a decider that
is gone by its lock."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

from chatbot.config import Settings, load_settings
from chatbot.engine.suggestions import SharedVerdicts, Suggestion, keep_deciding
from chatbot.knowledge_base.store import PassageStore
from tests.conftest import SHIPPED_CACHE
from tests.tui.conftest import Q1, Q2, Q3
from tests.tui.suggestions_helpers import CHARGED_TWICE, edit

RECORDED = (Suggestion(Q1, True), Suggestion(Q2, True), Suggestion(Q3, False))


def replaying(tmp_path: Path, kb: Path, replay: str = "on") -> Settings:
    return load_settings(
        store={"db": tmp_path / "helpdesk.sqlite3"},
        knowledge_base={"path": kb},
        valen={"cache": SHIPPED_CACHE, "replay": replay},
    )


async def until(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def read_by(reader: SharedVerdicts) -> Callable[[], dict[str, bool] | None]:
    """What a session reading the file sees now (None: nothing new since it last looked)."""
    seen: list[dict[str, bool]] = []

    def now() -> dict[str, bool] | None:
        fresh = reader.fresh(RECORDED)
        if fresh is not None:
            seen.append({s.question: s.answered for s in fresh})
        return seen[-1] if seen else None

    return now


async def test_the_decider_writes_the_verdicts_and_follows_the_knowledge_base(
    tmp_path: Path, kb_copy: Path
) -> None:
    path = tmp_path / "suggestions.json"
    now = read_by(SharedVerdicts(path))
    original = PassageStore(kb_copy).get(CHARGED_TWICE).passage.text
    deciding = asyncio.create_task(
        keep_deciding(replaying(tmp_path, kb_copy), SharedVerdicts(path), interval=0.05)
    )
    try:
        await until(lambda: now() == {Q1: True, Q2: True, Q3: False}, "the first verdicts")
        # The passage that answers Q1 no longer matches its recorded answer: a person replies.
        edit(kb_copy, "Write to support about double charges.")
        await until(lambda: now() == {Q1: False, Q2: True, Q3: False}, "Q1 to a person")
        edit(kb_copy, original)
        await until(lambda: now() == {Q1: True, Q2: True, Q3: False}, "Q1 answered again")
        assert not deciding.done()
    finally:
        deciding.cancel()
        await asyncio.gather(deciding, return_exceptions=True)


async def test_asking_valen_live_there_is_nothing_to_decide(tmp_path: Path, kb_copy: Path) -> None:
    path = tmp_path / "suggestions.json"
    await asyncio.wait_for(
        keep_deciding(replaying(tmp_path, kb_copy, "off"), SharedVerdicts(path)), 10
    )
    assert not path.exists()


def test_a_session_tells_a_decider_that_is_gone_by_its_lock(tmp_path: Path) -> None:
    decider = SharedVerdicts(tmp_path / "suggestions.json")
    session = SharedVerdicts(tmp_path / "suggestions.json")
    assert not session.decider_alive()  # None started yet (no lock file).
    lock = decider.hold()
    assert session.decider_alive() and session.decider_alive()  # Looking takes nothing away.
    decider.write(RECORDED)
    assert session.fresh(RECORDED) == RECORDED
    assert session.fresh(RECORDED) is None  # Nothing new since.
    os.close(lock)  # The decider ended (its descriptor closed with it).
    assert not session.decider_alive()
    decider.remove()
    assert not session.decider_alive() and list(tmp_path.iterdir()) == []
