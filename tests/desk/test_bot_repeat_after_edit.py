"""Through a bot worker, as `helpdesk bot` runs one (an engine following the knowledge base, the
desk `open_service` builds, a real SQLite file): a question asked again after an editor changed
the passage its answer came from is judged afresh, and answered from the passage as it is now;
asked once more, unchanged since, a person is offered as before."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from chatbot.assembly import build_engine, open_service
from chatbot.config import load_settings
from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotWorker
from chatbot.desk.models import Author, ChatEvent, ChatMessage, PersonOffered
from chatbot.engine.live import LiveEngine
from chatbot.knowledge_base.store import PassageStore
from chatbot.valen.cache import ReplayCache
from chatbot.valen.judge import PassageJudge
from chatbot.valen.protocol import PREDICATE, Outcome
from tests.conftest import SHIPPED_CACHE

Q1 = "I was charged twice for the same ride, can I get my money back?"
PASSAGE = "card-charged-twice"
EDITED = (
    "Charged twice for one ride? We refund the second charge to your card within 3 days; "
    "there is no temporary hold any more."
)


class EditedJudge(PassageJudge):
    """The recorded answers, and a sure "yes" for the edited passage (which none was recorded
    for): Valen as it would judge the new text."""

    async def judge(
        self, question: str, passages: Sequence[str], *, instructions: str = PREDICATE
    ) -> list[Outcome]:
        outcomes = await super().judge(question, passages, instructions=instructions)
        return [0.95 if text == EDITED else o for text, o in zip(passages, outcomes, strict=True)]


async def until(condition: Callable[[], object], timeout: float = 15.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def test_an_edit_between_two_questions_has_the_second_judged_afresh(
    tmp_path: Path, kb_copy: Path
) -> None:
    settings = load_settings(
        store={"db": tmp_path / "helpdesk.sqlite3"},
        knowledge_base={"path": kb_copy},
        valen={"cache": SHIPPED_CACHE, "replay": "on"},
    )
    passages = PassageStore(kb_copy, lock_timeout=2.0)
    judge = EditedJudge(replay="on", cache=ReplayCache(SHIPPED_CACHE))
    live = LiveEngine(build_engine(settings, None, passages, judge=judge), passages)
    desk = AsyncDesk.open(lambda: open_service(settings))
    await desk.watch()
    worker = BotWorker(desk, lambda: live.engine, poll_s=60, sweep_s=0)
    following = asyncio.create_task(live.follow(interval=0.05))
    task = asyncio.create_task(worker.run())
    try:
        await worker.ready.wait()
        cid = (await desk.ask(None, Q1)).conversation.id
        await until(lambda: worker.stats.settled == 1)

        async def log() -> tuple[list[ChatMessage], list[PersonOffered]]:
            entries = await desk.entries_after(cid, 0)
            bots = [e for e in entries if isinstance(e, ChatMessage) and e.author is Author.BOT]
            offers = [
                e.event
                for e in entries
                if isinstance(e, ChatEvent) and isinstance(e.event, PersonOffered)
            ]
            return bots, offers

        [first], _ = await log()
        assert first.passage_id == PASSAGE and first.text != EDITED

        # The editor changes the passage; the worker's engine follows it.
        before = live.engine
        current = passages.get(PASSAGE)
        passages.save(current.passage.model_copy(update={"text": EDITED}),
                      based_on=current.revision)  # fmt: skip
        await until(lambda: live.engine is not before)

        again = await desk.ask(cid, Q1)
        assert again.message.pending  # Not "you asked this before": judged afresh.
        await until(lambda: worker.stats.settled == 2)
        bots, offers = await log()
        assert [b.text for b in bots] == [first.text, EDITED]
        assert offers == []
        assert len(await desk.decisions(cid)) == 2

        # Unchanged since the new answer: the short-cut applies again.
        once_more = await desk.ask(cid, Q1)
        assert not once_more.message.pending
        bots, offers = await log()
        assert offers == [PersonOffered(answer_entry=bots[-1].id)]
        assert worker.stats.settled == 2
    finally:
        worker.stop()
        await asyncio.wait_for(task, 10)
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        await desk.aclose()
