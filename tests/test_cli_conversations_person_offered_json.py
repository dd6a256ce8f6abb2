"""`helpdesk conversations show --json` and `export` give every `person-offered` event its
`not_helpful`, false as well as true, as the README documents it. An offer after an answer the
customer had not marked not helpful came without the key (it is stored so), and a script reading
`event["not_helpful"]` met a KeyError."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chatbot.cli.main import main
from chatbot.desk.models import Feedback, State
from chatbot.desk.service import DeskService
from chatbot.store.sqlite import SQLiteStore
from tests.desk.helpers import Q1, answer_next
from tests.store.conftest import FakeClock


def asked_again_after(desk: DeskService, value: Feedback | None) -> tuple[int, int]:
    """Q1 answered; the answer marked `value` (None: left unmarked), a person's reply after a
    verdict, the conversation back with the bot; Q1 asked again. The conversation and the
    bot's answer."""
    cid = desk.ask(None, Q1).conversation.id
    answer = answer_next(desk)
    if value is not None:
        desk.feedback(cid, entry_id=answer.id, value=value)
        if desk.conversation(cid).state is State.BOT:  # Helpful: nobody was asked for.
            desk.talk_to_person(cid)
        desk.claim(cid, agent="ana")
        desk.reply(cid, agent="ana", text="Refunds for a double charge take up to 5 days.")
        desk.hand_back(cid, agent="ana")
    again = desk.ask(cid, Q1.lower())
    assert not again.message.pending  # Not judged again: a person is offered.
    return cid, answer.id


@pytest.fixture
def db(tmp_path: Path) -> tuple[Path, dict[int, tuple[int, bool]]]:
    """Three offers of a person: after an answer left unmarked, one marked helpful and one
    marked not helpful; per conversation, the answer offered again and whether it was marked
    not helpful."""
    path = tmp_path / "helpdesk.sqlite3"
    # No knowledge-base check: the recorded answer's passage text is the test's, not shipped.
    desk = DeskService(SQLiteStore.open(path, clock=FakeClock()))
    offers: dict[int, tuple[int, bool]] = {}
    try:
        for value in (None, Feedback.HELPFUL, Feedback.NOT_HELPFUL):
            cid, answer = asked_again_after(desk, value)
            offers[cid] = (answer, value is Feedback.NOT_HELPFUL)
    finally:
        desk.close()
    return path, offers


def run(capsys: pytest.CaptureFixture[str], *arguments: str) -> str:
    code = main(["conversations", *arguments])
    captured = capsys.readouterr()
    assert (code, captured.err) == (0, "")
    return captured.out


def offered(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in conversation["events"] if e["type"] == "person-offered"]


def test_every_person_offered_event_says_whether_the_answer_was_not_helpful(
    db: tuple[Path, dict[int, tuple[int, bool]]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, offers = db
    exported = [json.loads(line) for line in run(capsys, "export", "--db", str(path)).splitlines()]
    assert [c["id"] for c in exported] == list(offers)
    for conversation in exported:
        answer, not_helpful = offers[conversation["id"]]
        shown = json.loads(
            run(capsys, "show", str(conversation["id"]), "--db", str(path), "--json")
        )
        for said in (conversation, shown):
            [event] = offered(said)
            assert event["not_helpful"] is not_helpful
            assert (event["answer_entry"], set(event)) == (
                answer, {"id", "at", "type", "answer_entry", "not_helpful"}
            )  # fmt: skip
