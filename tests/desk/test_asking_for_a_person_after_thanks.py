"""A customer who thanks the bot for an answer and then asks for a person (typed, or "talk to a
person") hands over the question they asked before the thanks, with its top score, as one who
did not say thanks does. On every backend (a real SQLite file, and PostgreSQL), through the desk
service.

The desk took only the customer's newest message for the question: "thanks!" asks nothing, so
the conversation reached the queue as "(no question yet)" with no top score, and the customer
read a plain "A person will reply here." where, without the thanks, it named their question."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chatbot.desk.models import Author, ChatEvent, Escalated, PersonOffered, State
from chatbot.desk.service import ASKED_PAGE, DeskService
from chatbot.engine.models import Reason
from chatbot.notices import ASKED_NOTICE, notice
from chatbot.store.interface import ConversationStore
from chatbot.tui.widgets.transcript import about_question
from tests.desk.helpers import Q1, answer_next

Handoff = Callable[[DeskService, int], object]

HANDOFFS: dict[str, Handoff] = {
    "typed": lambda desk, cid: desk.ask(cid, "Talk to a person!"),
    "action": lambda desk, cid: desk.talk_to_person(cid),
}
"""The two ways a customer asks for a person: the words, or the talk-to-a-person action."""

NOTHING_ASKED = ["thanks!", "ok great, thank you", "👍", "谢谢"]
"""Thank-yous the customer may write, one after another, while the bot has the conversation."""


def escalation(desk: DeskService, conversation_id: int) -> Escalated:
    """The conversation's newest escalation."""
    return [
        e.event
        for e in desk.entries(conversation_id)
        if isinstance(e, ChatEvent) and isinstance(e.event, Escalated)
    ][-1]


def handed_over(desk: DeskService, conversation_id: int) -> tuple[str, int | None, float | None]:
    """The queue row's question, its message and its top score, checked against the
    conversation (what `conversations list --json` says) and its escalation event (which the
    customer's notice and the agent's side pane name the question from)."""
    [item] = [i for i in desk.queue() if i.conversation_id == conversation_id]
    assert (item.state, item.reason) == (State.WAITING, Reason.CUSTOMER_ASKED)
    conversation = desk.conversation(conversation_id)
    assert (conversation.question_entry, conversation.top_probability) == (
        item.question_entry,
        item.top_probability,
    )
    escalated = escalation(desk, conversation_id)
    assert (escalated.question_entry, escalated.top_probability) == (
        item.question_entry,
        item.top_probability,
    )
    return item.question, item.question_entry, item.top_probability


def assert_answered_question(desk: DeskService, conversation_id: int, entry: int) -> None:
    """The person takes up `Q1` (message `entry`) with the score it was answered with."""
    question, question_entry, top = handed_over(desk, conversation_id)
    assert (question, question_entry) == (Q1, entry)
    assert top == pytest.approx(0.899)


@pytest.mark.parametrize("way", HANDOFFS)
def test_after_thanks_the_person_takes_up_the_answered_question(
    desk: DeskService, way: str
) -> None:
    asked = desk.ask(None, Q1)
    cid = asked.conversation.id
    answer_next(desk)  # From card-charged-twice, p=0.899.
    for text in NOTHING_ASKED:
        desk.ask(cid, text)
    HANDOFFS[way](desk, cid)
    assert_answered_question(desk, cid, asked.message.id)
    # Answered by the bot: no content gap, as without the thanks.
    assert desk.content_gaps() == []


@pytest.mark.parametrize("way", HANDOFFS)
def test_the_customers_notice_names_the_question_the_queue_shows(
    desk: DeskService, way: str
) -> None:
    """The chat says which question a person will reply about: the one the queue lists."""
    asked = desk.ask(None, Q1)
    cid = asked.conversation.id
    answer_next(desk)
    desk.ask(cid, "thanks!")
    HANDOFFS[way](desk, cid)
    escalated = escalation(desk, cid)
    customer = [m for m in desk.messages(cid) if m.author is Author.CUSTOMER]
    said = about_question(
        escalated,
        notice(escalated, reader="customer") or "",
        asked={m.id: m.text for m in customer},
        last_asked=customer[-1].id,
    )
    assert said == f"About “{Q1}”: {ASKED_NOTICE}"


@pytest.mark.parametrize("way", HANDOFFS)
def test_after_a_repeated_question_and_thanks_as_without_the_thanks(
    desk: DeskService, way: str
) -> None:
    """Asked again, the bot offers a person instead of the same answer; a thank-you before
    taking the offer changes nothing in what the person takes up."""
    handed: list[tuple[str, int | None, float | None]] = []
    for thanks in (False, True):
        cid = desk.ask(None, Q1).conversation.id
        answer_next(desk)
        again = desk.ask(cid, Q1)
        assert not again.message.pending
        assert any(
            isinstance(e, ChatEvent) and isinstance(e.event, PersonOffered)
            for e in desk.entries(cid)
        )
        if thanks:
            desk.ask(cid, "thanks!")
        HANDOFFS[way](desk, cid)
        question, entry, top = handed_over(desk, cid)
        assert (question, entry) == (Q1, again.message.id)
        handed.append((question, None, top))
    assert handed[0] == handed[1]


@pytest.mark.parametrize("way", HANDOFFS)
def test_the_latest_real_question_past_a_person_handing_it_back(
    desk: DeskService, way: str
) -> None:
    """A "talk to a person" and a thank-you before the hand-back are walked past as well, to the
    newest question: not an older one, not the request."""
    cid = desk.ask(None, "hello, my bike will not unlock").conversation.id
    answer_next(desk, "hello, my bike will not unlock")
    asked = desk.ask(cid, Q1)
    answer_next(desk)
    desk.ask(cid, "talk to a person")
    assert desk.claim(cid, agent="ana").won
    desk.reply(cid, agent="ana", text="Anything else?")
    desk.ask(cid, "thanks Wendy 👍")  # To the person.
    desk.hand_back(cid, agent="ana")
    desk.ask(cid, "thanks!")
    HANDOFFS[way](desk, cid)
    assert_answered_question(desk, cid, asked.message.id)


@pytest.mark.parametrize("way", HANDOFFS)
@pytest.mark.parametrize("first", NOTHING_ASKED)
def test_with_nothing_but_thanks_there_is_still_no_question(
    desk: DeskService, way: str, first: str
) -> None:
    cid = desk.ask(None, first).conversation.id
    desk.ask(cid, "thanks again")
    HANDOFFS[way](desk, cid)
    assert handed_over(desk, cid) == ("", None, None)
    assert desk.content_gaps() == []


class CountingReads:
    """The store, counting the customer messages the desk reads back, and refusing to read a
    whole log: a handoff in a long conversation costs pages, not the transcript."""

    def __init__(self, store: ConversationStore) -> None:
        self._store = store
        self.read = 0

    def latest_questions(self, *args: Any, **kwargs: Any) -> Any:
        page = self._store.latest_questions(*args, **kwargs)
        self.read += len(page)
        return page

    def entries(self, *args: Any, **kwargs: Any) -> Any:
        assert kwargs.get("limit") is not None, "the whole log read"
        return self._store.entries(*args, **kwargs)

    def entries_of(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("whole logs read")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


@pytest.mark.parametrize("way", HANDOFFS)
def test_many_thanks_are_read_back_a_page_at_a_time(desk: DeskService, way: str) -> None:
    asked = desk.ask(None, Q1)
    cid = asked.conversation.id
    answer_next(desk)
    thanks = 2 * ASKED_PAGE + 5
    for _ in range(thanks):
        desk.ask(cid, "thanks")
    store, counting = desk.store, CountingReads(desk.store)
    desk.store = counting
    HANDOFFS[way](desk, cid)
    desk.store = store
    assert_answered_question(desk, cid, asked.message.id)
    assert counting.read <= thanks + 1 + ASKED_PAGE
