"""A thank-you for a resolution leaves the conversation resolved. On every backend (a real SQLite
file, and PostgreSQL), through the desk service.

Once an agent resolved a conversation, the chat asks the customer for a 1–5 rating, and the most
common reply is "thanks!". That reopened the conversation (a `reopened` event, the bot's again)
and the rating could no longer be given. A message that only thanks, acknowledges or says
goodbye now moves nothing: no `reopened`, nothing judged, nobody's queue, the same figures; the
desk says "you're welcome" and the rating is still due. Anything else still reopens it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chatbot.assembly import open_service
from chatbot.cli.main import main
from chatbot.config import load_settings
from chatbot.desk.models import (
    ChatEvent,
    Escalated,
    EventData,
    Rated,
    Reopened,
    Resolved,
    State,
    Thanked,
)
from chatbot.desk.service import DeskService
from chatbot.notices import (
    THANKED_AFTER_RESOLUTION_FOR_AGENTS,
    THANKED_FOR_AGENTS,
    THANKED_NOTICE,
    notice,
)
from tests.desk.helpers import Q2, WORKER, in_state
from tests.store.conftest import FakeClock

THANKS = ["thanks!", "thank you, bye", "Thanks Ana 👍", "ok", "谢谢"]


def events(desk: DeskService, conversation_id: int) -> list[EventData]:
    return [e.event for e in desk.entries(conversation_id) if isinstance(e, ChatEvent)]


def figures(desk: DeskService) -> dict[str, Any]:
    return desk.stats().model_dump(exclude={"generated_at"})


@pytest.mark.parametrize("text", THANKS)
def test_a_thank_you_after_the_resolution_leaves_it_resolved(
    desk: DeskService, clock: FakeClock, text: str
) -> None:
    cid = in_state(desk, State.RESOLVED)
    due = desk.rating_due(cid)
    assert due is not None and isinstance(due.event, Resolved)
    before = desk.conversation(cid)
    shown = figures(desk)
    clock.advance(60)

    thanked = desk.ask(cid, text)

    # Stored, as any message, but no question: nothing for a bot to take.
    assert thanked.message.text == text and not thanked.message.pending
    assert thanked.conversation.state is State.RESOLVED
    assert desk.lease(WORKER, limit=5, lease_s=30) == []
    after = desk.conversation(cid)
    assert (after.state, after.agent, after.reason, after.pending) == (
        State.RESOLVED, before.agent, before.reason, 0,
    )  # fmt: skip
    # Not reopened, not escalated; the desk's word back follows the message.
    logged = events(desk, cid)
    assert Reopened() not in logged
    assert sum(isinstance(event, Escalated) for event in logged) == 1  # The one before.
    *_, last = desk.entries(cid)
    assert isinstance(last, ChatEvent) and last.event == Thanked(resolved=True)
    assert last.id > thanked.message.id
    # In nobody's queue, marked for no one; the figures as they were (no question, no reopening).
    assert desk.queue(agent="ana") == [] and desk.queue(agent="ben") == []
    assert desk.queue_items([cid], agent="ana") == [] and desk.claims() == []
    assert figures(desk) == shown
    # The rating is still asked, and given.
    assert desk.rating_due(cid) == due
    rated = desk.rate(cid, rating=5)
    assert rated.event == Rated(rating=5, resolved_entry=due.id, agent="ana")
    assert desk.conversation(cid).state is State.RESOLVED
    assert desk.rating_due(cid) is None


def test_an_agent_opening_it_sees_the_thank_you(desk: DeskService) -> None:
    cid = in_state(desk, State.RESOLVED)
    ana_read = desk.entries(cid)[-1].id
    desk.mark_read(cid, agent="ana", entry_id=ana_read)
    thanked = desk.ask(cid, "thanks!").message
    shown = desk.page(cid, limit=10).entries
    assert [entry.id for entry in shown][-2:] == [thanked.id, thanked.id + 1]
    # Reopened to follow up, it is ana's again, the thank-you the newest thing she has not read.
    assert desk.reopen(cid, agent="ana").won
    [item] = desk.queue(agent="ana")
    assert item.last_customer_entry == thanked.id and item.read_entry == ana_read


def test_a_thank_you_after_the_rating_leaves_it_rated(desk: DeskService) -> None:
    cid = in_state(desk, State.RESOLVED)
    desk.rate(cid, rating=4)
    desk.ask(cid, "thank you, bye")
    assert desk.conversation(cid).state is State.RESOLVED
    assert desk.rating_due(cid) is None
    assert Reopened() not in events(desk, cid)
    assert events(desk, cid)[-1] == Thanked(resolved=True)


@pytest.mark.parametrize(
    "text", ["thanks, how do I reset my password?", Q2, "no thanks", "ok?", "4 stars"]
)
def test_anything_else_still_reopens_it_for_the_bot(desk: DeskService, text: str) -> None:
    cid = in_state(desk, State.RESOLVED)
    asked = desk.ask(cid, text)
    assert asked.message.pending
    assert asked.conversation.state is State.BOT and asked.conversation.agent is None
    assert Reopened() in events(desk, cid)
    assert not any(isinstance(event, Thanked) for event in events(desk, cid))
    assert desk.rating_due(cid) is None


def test_asking_for_a_person_with_thanks_still_goes_to_the_queue(desk: DeskService) -> None:
    cid = in_state(desk, State.RESOLVED)
    asked = desk.ask(cid, "agent thanks")  # Asks for a person first of all.
    assert asked.conversation.state is State.WAITING
    assert Reopened() in events(desk, cid)


def test_a_thank_you_sent_to_a_person_reopens_it_for_them(desk: DeskService) -> None:
    """The customer pressed "talk to a person" with the words: a person it is."""
    cid = in_state(desk, State.RESOLVED)
    asked = desk.ask(cid, "thanks!", to_person=True)
    assert asked.conversation.state is State.WAITING
    assert not any(isinstance(event, Thanked) for event in events(desk, cid))


def test_the_thank_you_is_worded_for_each_reader() -> None:
    after = Thanked(resolved=True)
    assert notice(after, reader="customer") == THANKED_NOTICE
    assert notice(after, reader="agent") == (
        "The customer only said thanks, okay or goodbye after the resolution: it stays resolved."
    )
    assert notice(after, reader="agent") == THANKED_AFTER_RESOLUTION_FOR_AGENTS
    assert notice(after, reader="agent", locale="zh") == (
        "客户在对话解决后只是道谢、表示知道了或道别：对话仍为已解决。"
    )
    assert notice(Thanked(), reader="agent") == THANKED_FOR_AGENTS  # With the bot, as before.


def test_conversations_show_says_it_stays_resolved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "helpdesk.sqlite3"
    desk = open_service(load_settings(store={"db": path}), clock=FakeClock())
    try:
        cid = in_state(desk, State.RESOLVED)
        desk.ask(cid, "thanks!")
    finally:
        desk.close()
    assert main(["conversations", "show", str(cid), "--db", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "ana marked the conversation resolved." in out
    said = out[out.index("customer: thanks!") :]
    assert THANKED_AFTER_RESOLUTION_FOR_AGENTS in said
    assert "The customer wrote again; the bot answers." not in out
    assert main(["conversations", "show", str(cid), "--db", str(path), "--json"]) == 0
    shown = capsys.readouterr().out
    assert '"type": "thanked"' in shown and '"resolved": true' in shown
    assert '"type": "reopened"' not in shown and '"state": "resolved"' in shown
