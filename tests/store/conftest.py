"""Fixtures for the store tests: a fresh database of each backend and a clock moved by hand."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from chatbot.desk.service import DeskService
from chatbot.engine.models import Answer, Candidate, Decision, Reason
from chatbot.store.interface import ConversationStore
from tests.backends import Backend

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


class FakeClock:
    """A clock that only moves when told to, so stored times are exact."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(backend: Backend, clock: FakeClock) -> Iterator[ConversationStore]:
    opened = backend.open(clock)
    yield opened
    opened.close()


@pytest.fixture
def desk(backend: Backend, clock: FakeClock) -> Iterator[DeskService]:
    service = backend.service(clock)
    yield service
    service.close()


CHARGED = Candidate(
    id="card-charged-twice",
    title="Charged twice for one ride",
    text="Charged twice for one ride? The first charge is a temporary hold.",
    bm25=3.7,
    probability=0.899,
)
LATE = Candidate(id="late-return", title="Late returns", text="Late fee text.", bm25=5.3,
                 probability=0.644)  # fmt: skip
MISS = Candidate(id="refund-time", text="Refund text.", bm25=1.7, error="replay-miss: no answer",
                 error_kind="replay-miss")  # fmt: skip


def answered(question: str = "I was charged twice, can I get my money back?") -> Decision:
    return Decision(
        question=question,
        answer=Answer(id=CHARGED.id, title=CHARGED.title, text=CHARGED.text, probability=0.899),
        reason=None,
        candidates=(CHARGED, LATE, MISS),
        threshold=0.7,
        latency_ms=12.5,
    )


def escalated(question: str = "No free docks, will I pay a late fee?") -> Decision:
    return Decision(
        question=question,
        answer=None,
        reason=Reason.LOW_SCORE,
        candidates=(LATE, MISS),
        threshold=0.7,
        latency_ms=8.0,
    )
