"""A bot worker in-process, on the real engine with recorded answers: it answers pending
questions, wakes on commits, stays within its concurrency, keeps its leases alive while it
judges, escalates when the engine fails, and gives back what it holds when stopped."""

from __future__ import annotations

import asyncio
import logging

import pytest

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotWorker
from chatbot.desk.models import Author, ChatMessage, State
from chatbot.engine.engine import Engine
from chatbot.engine.models import Decision, Reason
from tests.desk.bot_helpers import Q1, Q3, GatedEngine, desk, replay_engine, start, stopped, until

__all__ = ["desk"]  # A fixture.


class BrokenEngine(Engine):
    """Fails outright, as a bug would (Valen failures never raise)."""

    def __init__(self) -> None:
        inner = replay_engine()
        super().__init__(retriever=inner.retriever, judge=inner.judge)

    async def answer(self, question: str) -> Decision:
        raise RuntimeError("boom")


async def test_a_pending_question_is_answered(desk: AsyncDesk) -> None:
    worker = BotWorker(desk, replay_engine, concurrency=2, poll_s=60)
    task = start(worker)
    await worker.ready.wait()
    asked = await desk.ask(None, Q1)  # The commit wakes the worker: no poll needed.
    await until(lambda: worker.stats.settled == 1)
    await stopped(worker, task)
    entries = await desk.entries_after(asked.conversation.id, 0)
    bots = [e for e in entries if isinstance(e, ChatMessage) and e.author is Author.BOT]
    assert [b.passage_id for b in bots] == ["card-charged-twice"]
    [stored] = await desk.decisions(asked.conversation.id)
    assert stored.worker == worker.name
    assert (await desk.conversation(asked.conversation.id)).pending == 0


async def test_an_escalating_question_reaches_the_queue(desk: AsyncDesk) -> None:
    worker = BotWorker(desk, replay_engine, poll_s=60)
    task = start(worker)
    await worker.ready.wait()
    asked = await desk.ask(None, Q3)
    await until(lambda: worker.stats.settled == 1)
    await stopped(worker, task)
    [item] = await desk.queue()
    assert (item.conversation_id, item.question, item.reason) == (
        asked.conversation.id, Q3, Reason.LOW_SCORE,
    )  # fmt: skip


async def test_it_judges_no_more_than_its_concurrency_at_once(desk: AsyncDesk) -> None:
    engine = GatedEngine(replay_engine())
    for _ in range(7):
        await desk.ask(None, Q1)
    worker = BotWorker(desk, lambda: engine, concurrency=3, poll_s=60)
    task = start(worker)
    await until(lambda: engine.waiting == 3)
    assert len(worker._in_flight) == 3
    engine.gate.set()
    await until(lambda: worker.stats.settled == 7)
    await stopped(worker, task)
    assert engine.most_waiting == 3
    assert worker.stats.outcomes == {"answered": 7}


async def test_an_engine_crash_hands_the_customer_to_a_person(desk: AsyncDesk) -> None:
    worker = BotWorker(desk, BrokenEngine, poll_s=60)
    task = start(worker)
    await worker.ready.wait()
    asked = await desk.ask(None, Q1)
    await until(lambda: worker.stats.settled == 1)
    await stopped(worker, task)
    conversation = await desk.conversation(asked.conversation.id)
    assert (conversation.state, conversation.reason) == (State.WAITING, Reason.VALEN_ERROR)


async def test_a_question_that_kept_killing_workers_goes_to_a_person_and_is_reported(
    desk: AsyncDesk, caplog: pytest.LogCaptureFixture
) -> None:
    asked = await desk.ask(None, Q1)
    for dead in ("w1", "w2", "w3"):  # Each took it and died at once: its lease is already over.
        assert [q.id for q in await desk.lease(dead, limit=1, lease_s=0)] == [asked.message.id]
    worker = BotWorker(desk, replay_engine, poll_s=60)
    with caplog.at_level(logging.INFO):
        task = start(worker)
        await until(lambda: worker.stats.settled == 1)
        await stopped(worker, task)
    # `helpdesk bot -v` said nothing of it: the question went to a person inside the lease.
    assert worker.stats.outcomes == {"escalated": 1}
    assert (
        f"question {asked.message.id} (conversation {asked.conversation.id}): escalated "
        "(bot-failed): taken 3 times, no decision stored"
    ) in caplog.text
    conversation = await desk.conversation(asked.conversation.id)
    assert (conversation.state, conversation.reason) == (State.WAITING, Reason.BOT_FAILED)
    assert await desk.decisions(asked.conversation.id) == []


async def test_stopping_gives_back_what_is_in_flight(
    desk: AsyncDesk, caplog: pytest.LogCaptureFixture
) -> None:
    engine = GatedEngine(replay_engine())
    asked = await desk.ask(None, Q1)
    first = BotWorker(desk, lambda: engine, grace_s=0, poll_s=60)
    task = start(first)
    await until(lambda: engine.waiting == 1)
    with caplog.at_level(logging.INFO):
        await stopped(first, task)
    assert (await desk.conversation(asked.conversation.id)).pending == 1
    assert "gave back 1 question unjudged" in caplog.text  # What `helpdesk bot -v` prints.
    # The next worker takes it at once (no lease to wait out), and it is still its first attempt.
    [again] = await desk.lease("next", limit=1, lease_s=30)
    assert (again.id, again.attempts) == (asked.message.id, 1)


async def test_stopping_waits_a_bounded_time_for_what_is_in_flight(desk: AsyncDesk) -> None:
    engine = GatedEngine(replay_engine())
    asked = await desk.ask(None, Q1)
    worker = BotWorker(desk, lambda: engine, grace_s=30, poll_s=60)
    task = start(worker)
    await until(lambda: engine.waiting == 1)
    worker.stop()
    await asyncio.sleep(0)
    assert not task.done()  # Still within its grace: the judgment in flight may finish.
    assert await desk.lease("other", limit=1, lease_s=30) == []  # And it still holds it.
    engine.gate.set()
    await asyncio.wait_for(task, 5)
    assert worker.stats.outcomes == {"answered": 1}
    assert (await desk.conversation(asked.conversation.id)).pending == 0


async def test_a_heartbeat_keeps_a_long_judgment_its_own(desk: AsyncDesk) -> None:
    engine = GatedEngine(replay_engine())
    asked = await desk.ask(None, Q1)
    holder = BotWorker(desk, lambda: engine, lease_s=0.3, poll_s=0.05)
    holder_task = start(holder)
    await until(lambda: engine.waiting == 1)
    rival = BotWorker(desk, replay_engine, lease_s=0.3, poll_s=0.05)
    rival_task = start(rival)
    extended: list[list[int]] = []
    original = desk.extend_leases

    async def spy(worker: str, ids: list[int], *, lease_s: float) -> list[int]:
        held = await original(worker, ids, lease_s=lease_s)
        extended.append(held)
        return held

    desk.extend_leases = spy  # type: ignore[method-assign, assignment]
    # Judging outlasts two leases; each heartbeat keeps it, so the rival never takes it.
    await until(lambda: len(extended) >= 7)
    assert all(held == [asked.message.id] for held in extended)
    engine.gate.set()
    await until(lambda: holder.stats.settled == 1)
    await stopped(rival, rival_task)
    await stopped(holder, holder_task)
    assert rival.stats.taken == 0
    assert len(await desk.decisions(asked.conversation.id)) == 1
