"""For the bot worker's tests: the real engine on the shipped replay cache (gated where the
test holds each answer), the worker started and stopped, and a store that fails on demand."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotWorker
from chatbot.desk.service import DeskService
from chatbot.engine.engine import Engine
from chatbot.engine.models import Decision
from chatbot.knowledge_base.storage import load_knowledge_base
from chatbot.retrieval.retrievers import BM25Retriever
from chatbot.store.interface import StoreError
from chatbot.valen.cache import ReplayCache
from chatbot.valen.judge import PassageJudge
from tests.backends import Backend
from tests.conftest import SHIPPED_CACHE, SHIPPED_KB

Q1 = "I was charged twice for the same ride, can I get my money back?"
Q3 = "There were no free docks at the station so I kept riding. Will I pay a late fee?"


def replay_engine() -> Engine:
    judge = PassageJudge(replay="on", cache=ReplayCache(SHIPPED_CACHE))
    return Engine(retriever=BM25Retriever(load_knowledge_base(SHIPPED_KB)), judge=judge)


class GatedEngine(Engine):
    """The real engine, holding each answer until the test opens the gate; counts who waits."""

    def __init__(self, inner: Engine) -> None:
        super().__init__(retriever=inner.retriever, judge=inner.judge,
                         threshold=inner.threshold, k=inner.k)  # fmt: skip
        self.gate = asyncio.Event()
        self.waiting = 0
        self.most_waiting = 0

    async def answer(self, question: str) -> Decision:
        self.waiting += 1
        self.most_waiting = max(self.most_waiting, self.waiting)
        try:
            await self.gate.wait()
        finally:
            self.waiting -= 1
        return await super().answer(question)


@pytest.fixture
async def desk(backend: Backend) -> AsyncIterator[AsyncDesk]:
    opened = AsyncDesk.open(lambda: backend.service(max_attempts=3))
    await opened.watch()
    yield opened
    await opened.aclose()


async def until(condition: Callable[[], object], timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


def start(worker: BotWorker) -> asyncio.Task[None]:
    return asyncio.create_task(worker.run())


async def stopped(worker: BotWorker, task: asyncio.Task[None]) -> None:
    worker.stop()
    await asyncio.wait_for(task, 5)


REFUSED = (
    "postgresql://postgres@127.0.0.1:55433/helpdesk: database unavailable: connection failed: "
    'connection to server at "127.0.0.1", port 55433 failed: Connection refused\n'
    "\tIs the server running on that host and accepting TCP/IP connections?"
)
"""What the store says while PostgreSQL is stopped (the driver's sentences, two lines)."""


class Outage:
    """Stands in for a desk service's store: every call fails while `down`, as every call to a
    stopped PostgreSQL does, and goes to the real store otherwise."""

    def __init__(self, service: DeskService) -> None:
        self._real = service.store
        self.down = False
        self.failed = 0
        """Calls refused so far."""
        service.store = self

    @classmethod
    def of(cls, desk: AsyncDesk) -> Outage:
        return cls(desk._service)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._real, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.down:
                self.failed += 1
                raise StoreError(REFUSED)
            return attribute(*args, **kwargs)

        return call
