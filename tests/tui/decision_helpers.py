"""A conversation the bot escalated while it was down, and decided more of since, built through
the desk with the injected clock: for the tests of what the agent's side pane and transcript show
of the bot's decisions while a person has the conversation."""

from __future__ import annotations

from collections.abc import Sequence

from chatbot.desk.service import DeskService
from chatbot.engine.models import Answer, Candidate, Decision, Reason
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.conversation_view import ConversationView
from tests.tui.conftest import FrozenClock
from tests.tui.helpers import flat, screen_text

REFUND = "ok. and how long does a refund take to show up on my card?"
HELLO = "hello? anyone?"
UNLOCK = "and how do I unlock a bike at a full station?"
DAMAGE = "the brakes were already worn when I took the bike, will I have to pay for that damage?"
MISSED = ("refund-time", "refund-request", "card-charged-twice", "late-return", "damage-fee")
"""The refund question's candidates (passages of the shipped knowledge base), none judged."""
WORKER = "bot-1"
SIDE = "#conversation-side"
"""The pane beside (or under) the agent's transcript that shows the bot's decisions."""


def not_judged(question: str) -> Decision:
    return Decision(
        question=question,
        answer=None,
        reason=Reason.NOT_JUDGED,
        candidates=tuple(
            Candidate(
                id=id_,
                text="…",
                bm25=9.0 - n,
                error="replay-miss: no recorded answer",
                error_kind="replay-miss",
            )
            for n, id_ in enumerate(MISSED)
        ),
        threshold=0.7,
    )


def nothing_found(question: str) -> Decision:
    return Decision(
        question=question, answer=None, reason=Reason.NO_PASSAGES, candidates=(), threshold=0.7
    )


def answerable(question: str, passage: str = "station-full", probability: float = 0.91) -> Decision:
    """The bot would answer `question` from `passage`, the one candidate it judged."""
    found = Candidate(id=passage, text="The passage.", bm25=6.0, probability=probability)
    return Decision(
        question=question,
        answer=Answer(id=found.id, text=found.text, probability=probability),
        reason=None,
        candidates=(found,),
        threshold=0.7,
    )


def damage_fee(question: str = DAMAGE) -> Decision:
    """The bot would answer from damage-fee (0.96), and judged one more passage."""
    fee = Candidate(id="damage-fee", text="Report damage first.", bm25=7.0, probability=0.96)
    other = Candidate(id="late-return", text="Late fees.", bm25=3.0, probability=0.12)
    return Decision(
        question=question,
        answer=Answer(id=fee.id, text=fee.text, probability=0.96),
        reason=None,
        candidates=(fee, other),
        threshold=0.7,
    )


def handed_back_to_a_bot_that_was_down(
    desk: DeskService,
    clock: FrozenClock,
    later: Sequence[tuple[str, Decision]] = ((HELLO, nothing_found(HELLO)),),
) -> int:
    """ana answered the customer, who then asked `REFUND`; she handed the conversation back to
    the bot, which was down. The customer wrote again (`later`: each message, and the bot's
    decision on it); the bot, up again, escalated the refund question, and as ben had claimed it
    by then, kept its decisions on the later messages to itself; ben released it, back to the
    queue. (Waiting unclaimed, the bot would have said an answer to a later message.)"""
    messages = list(later)
    conversation = desk.start_conversation().id
    desk.talk_to_person(conversation)
    desk.ask(conversation, "my card was charged twice")
    desk.claim(conversation, agent="ana")
    desk.reply(conversation, agent="ana", text="I refunded the second charge.")
    clock.advance(30)
    desk.ask(conversation, REFUND)
    desk.hand_back(conversation, agent="ana")
    for text, _ in messages:
        clock.advance(60)
        desk.ask(conversation, text)
    clock.advance(60)
    refund, *again = desk.lease(WORKER, limit=1 + len(messages), lease_s=60)
    assert [refund.text, *(q.text for q in again)] == [REFUND, *(text for text, _ in messages)]
    assert desk.record_decision(WORKER, refund, not_judged(REFUND)).outcome == "escalated"
    assert desk.claim(conversation, agent="ben").won
    for question, (_, decision) in zip(again, messages, strict=True):
        assert desk.record_decision(WORKER, question, decision).outcome == "kept"
    desk.release(conversation, agent="ben")
    queued = desk.conversation(conversation)
    assert queued.question_entry == refund.id  # The queue row names the refund question.
    return conversation


def pane(app: HelpDeskApp, view: ConversationView) -> str:
    """What the side pane shows on screen now (what is scrolled out of its view is not), line
    wrapping undone."""
    return flat(screen_text(app, view.query_one(SIDE)))
