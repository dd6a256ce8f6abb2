"""Fixtures for the desk tests: a PostgreSQL database of the test's own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.backends import postgres_server
from tests.desk.bot_outage_helpers import Database


@pytest.fixture
def database() -> Iterator[Database]:
    server = postgres_server()
    db = Database(server, server.take())
    try:
        yield db
    finally:
        db.up()
        server.give_back(db.url)
