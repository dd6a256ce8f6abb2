"""`helpdesk stats` on the scripted day of tests/desk/helpers.py (in a database file of
the test's own), run in the test's process."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.assembly import open_service
from chatbot.cli.main import main
from chatbot.config import load_settings
from tests.desk.helpers import script_day
from tests.store.conftest import FakeClock

ESCAPE = "my bike \x1b[31mis red\x1b[0m"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The scripted day, plus a customer who asks for a person with an escape sequence."""
    path = tmp_path / "helpdesk.sqlite3"
    clock = FakeClock()
    desk = open_service(load_settings(store={"db": path}), clock=clock)
    try:
        script_day(desk, clock)
        conversation = desk.ask(None, ESCAPE).conversation.id
        desk.talk_to_person(conversation)
    finally:
        desk.close()
    return path


def run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    code = main(["stats", *arguments])
    captured = capsys.readouterr()
    return code, captured.out, captured.err
