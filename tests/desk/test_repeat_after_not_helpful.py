"""A question asked again after its answer was marked "Not helpful", on every backend.

The customer marked the bot's answer Not helpful, an agent replied and handed the conversation
back to the bot, and the customer asked the same question again: the bot offered a person with
"You asked this before: the answer above is what the help center says. If it did not help, …",
where the answer above was the agent's and the customer had said it did not help."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chatbot.desk.models import ChatEvent, ChatMessage, Feedback, PersonOffered, State
from chatbot.desk.service import DeskService
from chatbot.notices import REPEAT_NOTICE, REPEAT_NOTICE_IN_A_BROWSER, notice
from tests.backends import Backend
from tests.desk.helpers import Q1, answer_next
from tests.store.conftest import FakeClock

SAID = (
    "You asked this before, and said the answer did not help: talk to a person (Ctrl+T) and they "
    "will reply here."
)
SAID_IN_A_BROWSER = (
    "You asked this before, and said the answer did not help: press “Talk to a person” below and "
    "someone will reply here."
)


@pytest.fixture
def desk(backend: Backend) -> Iterator[DeskService]:
    service = backend.service(FakeClock(), max_attempts=2)
    yield service
    service.close()


def judged_then_handed_back(desk: DeskService, value: Feedback) -> tuple[int, ChatMessage]:
    """Q1 answered, the answer marked `value`, a person's reply, the conversation back with the
    bot; the conversation and the bot's answer."""
    cid = desk.ask(None, Q1).conversation.id
    answer = answer_next(desk)
    desk.feedback(cid, entry_id=answer.id, value=value)
    if desk.conversation(cid).state is State.BOT:  # Helpful: nobody was asked for.
        desk.talk_to_person(cid)
    desk.claim(cid, agent="ana")
    desk.reply(cid, agent="ana", text="Refunds for a double charge take up to 5 days.")
    desk.hand_back(cid, agent="ana")
    assert desk.conversation(cid).state is State.BOT
    return cid, answer


def repeated(desk: DeskService, cid: int) -> PersonOffered:
    """Ask Q1 again; the offer that follows it, as read back from the store."""
    again = desk.ask(cid, Q1.lower())
    assert not again.message.pending  # Not judged again: a person is offered.
    last = desk.entries(cid)[-1]
    assert isinstance(last, ChatEvent) and isinstance(last.event, PersonOffered)
    return last.event


def test_asked_again_after_not_helpful_the_offer_says_so_and_points_at_nothing_above(
    desk: DeskService,
) -> None:
    cid, answer = judged_then_handed_back(desk, Feedback.NOT_HELPFUL)
    offer = repeated(desk, cid)
    assert offer.answer_entry == answer.id
    # Kept with the offer (and exported with it), as the log read back says.
    assert offer.model_dump(mode="json") == {
        "type": "person-offered", "answer_entry": answer.id, "not_helpful": True,
    }  # fmt: skip

    assert notice(offer, reader="customer") == SAID
    assert notice(offer, reader="customer", browser=True) == SAID_IN_A_BROWSER
    # In Chinese as well: the catalog's own sentence, not the plain repeat's.
    chinese = notice(offer, reader="customer", locale="zh")
    assert chinese is not None and "没有帮到您" in chinese and "上面" not in chinese
    assert chinese != notice(PersonOffered(answer_entry=answer.id), reader="customer", locale="zh")
    # The agents' line is as it was.
    assert notice(offer, reader="agent") == (
        "The customer asked the same question again; the bot offered a person."
    )


def test_asked_again_after_helpful_the_offer_is_as_before(desk: DeskService) -> None:
    cid, answer = judged_then_handed_back(desk, Feedback.HELPFUL)
    offer = repeated(desk, cid)
    assert offer == PersonOffered(answer_entry=answer.id)
    # Stored in the form it always had.
    assert offer.model_dump(mode="json") == {"type": "person-offered", "answer_entry": answer.id}
    assert notice(offer, reader="customer") == REPEAT_NOTICE
    assert notice(offer, reader="customer", browser=True) == REPEAT_NOTICE_IN_A_BROWSER
