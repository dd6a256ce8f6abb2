"""The conversation stores the contract tests run against. A new backend is one more entry here:
every test of `tests/store/test_contract.py` and `tests/desk/` then runs on it as well."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from chatbot.desk.clock import Clock, utc_now
from chatbot.desk.service import DeskService
from chatbot.store.interface import ConversationStore
from chatbot.store.sqlite import SQLiteStore

BACKENDS = ["sqlite"]


@dataclass
class Backend:
    """Opens connections to one fresh database of one kind; each is what another process has."""

    name: str
    location: Path

    def open(self, clock: Clock = utc_now) -> ConversationStore:
        return SQLiteStore.open(self.location, clock=clock)

    def service(self, clock: Clock = utc_now, *, max_attempts: int = 3) -> DeskService:
        return DeskService(self.open(clock), max_attempts=max_attempts)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    assert request.param == "sqlite"
    yield Backend("sqlite", tmp_path / "helpdesk.sqlite3")
