"""`helpdesk doctor` on each backend, with questions waiting long while a bot holds others: the
bots are busy (a slow Valen, or too little concurrency), so it says so instead of asking whether
a bot runs (a tester's finding: one `helpdesk bot --concurrency 1` stuck on a hanging Valen was
taken for none)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from chatbot.cli.main import main
from tests.backends import Backend

NOT_RUNNING = "is a bot running"


def test_doctor_says_the_bots_are_busy_while_a_bot_holds_questions(
    backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    asked = datetime.now(UTC) - timedelta(seconds=38)
    desk = backend.service(lambda: asked)
    for question in ("Is anyone there?", "Hello?", "Anyone?"):
        desk.ask(None, question)
    desk.close()
    desk = backend.service()  # The bot, now: it takes one (concurrency 1) and holds it.
    [held] = desk.lease("bot-1", limit=1, lease_s=30)
    db = str(backend.location)
    try:
        assert main(["doctor", "--db", db]) == 0
        bots = " ".join(capsys.readouterr().out.splitlines()[-1].split())
        assert bots.startswith("bots 2 questions wait for a bot, the oldest for 3")
        assert bots.endswith(
            "; the bots are busy with 1 (a slow Valen, or more concurrency needed)"
        )
        assert NOT_RUNNING not in bots
        assert main(["doctor", "--db", db, "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert (report["waiting_for_a_bot"], report["held_by_a_bot"]) == (2, 1)
        # The bot stops and gives its question back: nothing is held, so doctor asks again.
        assert desk.release_leases("bot-1", [held.id]) == 1
        assert main(["doctor", "--db", db]) == 0
        bots = " ".join(capsys.readouterr().out.splitlines()[-1].split())
        assert bots.startswith("bots 3 questions wait for a bot, the oldest for 3")
        assert bots.endswith(
            "; is a bot running (`helpdesk bot`, `helpdesk serve`, or an app without --no-bot)?"
        )
        assert main(["doctor", "--db", db, "--json"]) == 0
        assert "held_by_a_bot" not in json.loads(capsys.readouterr().out)
    finally:
        desk.close()
