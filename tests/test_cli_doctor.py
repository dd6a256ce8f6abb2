"""`helpdesk doctor` on each backend: where the database is (never the password), its server,
schema version and a measured latency."""

from __future__ import annotations

import json

import pytest

from chatbot.cli.main import main
from chatbot.store.postgres_schema import MIGRATIONS as POSTGRES_MIGRATIONS
from chatbot.store.schema import MIGRATIONS as SQLITE_MIGRATIONS
from tests.backends import Backend


def test_doctor_reports_the_database_without_its_password(
    backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(backend.location)
    if backend.name == "postgresql":  # Trust authentication ignores it; it must not be shown.
        db = db.replace("postgresql://postgres@", "postgresql://postgres:hunter2@")
        assert "hunter2" in db
    assert main(["doctor", "--db", db, "--json"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out)
    assert "hunter2" not in out
    assert report["database"] == str(backend.location)
    expected = (
        ("PostgreSQL 1", len(POSTGRES_MIGRATIONS))
        if backend.name == "postgresql"
        else ("SQLite 3.", len(SQLITE_MIGRATIONS))
    )
    assert report["server"].startswith(expected[0]) and report["schema_version"] == expected[1]
    assert report["latency_ms"] > 0

    assert main(["doctor", "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["database", "server", "schema", "latency"]
    assert lines[0] == f"database  {backend.location}"
