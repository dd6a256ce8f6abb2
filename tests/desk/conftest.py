"""Fixtures for the desk tests: a desk on each backend with a clock moved by hand, and a
PostgreSQL database of the test's own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chatbot.desk.service import DeskService
from tests.backends import Backend, postgres_server
from tests.desk.bot_outage_helpers import Database
from tests.store.conftest import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def desk(backend: Backend, clock: FakeClock) -> Iterator[DeskService]:
    service = backend.service(clock)
    yield service
    service.close()


@pytest.fixture
def database() -> Iterator[Database]:
    server = postgres_server()
    db = Database(server, server.take())
    try:
        yield db
    finally:
        db.up()
        server.give_back(db.url)
