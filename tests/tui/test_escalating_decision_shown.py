"""While a conversation waits for (or is held by) a person, the pane beside the agent's
transcript shows the bot's decision on the question the queue row names, with its candidates;
a decision kept silent since (the bot was down, and caught up once a person had it) does not
hide it.

Handed back to a bot that was down, a customer asked about refunds, then wrote "hello? anyone?".
Once the bot was up, the refund question escalated (`not-judged`: five replay misses) and
"hello?" was decided `kept: no-passages`. The pane showed only that last decision ("Would have
escalated: no-passages; kept silent …"): the refund question's candidates were nowhere, and
Ctrl+O's passage picker, the bot's candidates first, had none first."""

from __future__ import annotations

from chatbot.desk.service import DeskService
from chatbot.engine.models import Answer, Candidate, Decision, Reason
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.passage_picker import PassagePicker
from chatbot.tui.widgets.candidate_bars import CandidateBars
from chatbot.tui.widgets.conversation_view import ConversationView
from tests.tui.conftest import SIZE, FrozenClock, MakeApp
from tests.tui.helpers import claim_and_pick, flat, screen_text, wait_until

REFUND = "ok. and how long does a refund take to show up on my card?"
HELLO = "hello? anyone?"
UNLOCK = "and how do I unlock a bike at a full station?"
MISSED = ("refund-time", "refund-request", "card-charged-twice", "late-return", "damage-fee")
"""The refund question's candidates (passages of the shipped knowledge base), none judged."""
WORKER = "bot-1"


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


def answerable(question: str) -> Decision:
    station = Candidate(id="station-full", text="Dock at the next station.", bm25=6.0,
                        probability=0.91)  # fmt: skip
    return Decision(
        question=question,
        answer=Answer(id=station.id, text=station.text, probability=0.91),
        reason=None,
        candidates=(station,),
        threshold=0.7,
    )


def handed_back_to_a_bot_that_was_down(
    desk: DeskService,
    clock: FrozenClock,
    later: tuple[str, Decision] = (HELLO, nothing_found(HELLO)),
) -> int:
    """ana answered the customer, who then asked `REFUND`; she handed the conversation back to
    the bot, which was down. The customer wrote again (`later`); the bot, up again, escalated the
    refund question and kept its decision on the later message to itself."""
    conversation = desk.start_conversation().id
    desk.talk_to_person(conversation)
    desk.ask(conversation, "my card was charged twice")
    desk.claim(conversation, agent="ana")
    desk.reply(conversation, agent="ana", text="I refunded the second charge.")
    clock.advance(30)
    desk.ask(conversation, REFUND)
    desk.hand_back(conversation, agent="ana")
    clock.advance(60)
    text, decision = later
    desk.ask(conversation, text)
    clock.advance(60)
    refund, again = desk.lease(WORKER, limit=2, lease_s=60)
    assert (refund.text, again.text) == (REFUND, text)
    assert desk.record_decision(WORKER, refund, not_judged(REFUND)).outcome == "escalated"
    assert desk.record_decision(WORKER, again, decision).outcome == "kept"
    queued = desk.conversation(conversation)
    assert queued.question_entry == refund.id  # The queue row names the refund question.
    return conversation


def pane(app: HelpDeskApp, view: ConversationView) -> str:
    return flat(screen_text(app, view.query_one(CandidateBars)))


async def test_the_escalating_questions_candidates_are_shown_not_a_later_kept_decision(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    conversation = handed_back_to_a_bot_that_was_down(other, clock)
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        # Laid out a frame after it is drawn: its height was the one line of "not judged".
        await wait_until(pilot, lambda: f"{MISSED[-1]} not judged" in pane(app, view))
        said = pane(app, view)
        assert "Escalated: not-judged" in said
        for passage in MISSED:
            assert f"{passage} not judged" in said
        assert "no-passages" not in said and "kept silent" not in said
        assert "hello?" not in said  # One decision: not headed by its question.

        # Ctrl+O: the refund question's candidates first.
        picker = await claim_and_pick(pilot, view)
        assert {item.passage.id for item in picker.items[: len(MISSED)]} == set(MISSED)
        assert all(item.probability is None for item in picker.items[: len(MISSED)])
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, PassagePicker))

        # Claimed, still the question it came with; resolved, what the bot did last stands.
        assert "Escalated: not-judged" in pane(app, view)
        other.resolve(conversation, agent="ana")
        await wait_until(pilot, lambda: "Would have escalated: no-passages" in pane(app, view))
        assert "refund-time" not in pane(app, view)


async def test_a_later_kept_decision_that_considered_passages_is_shown_under_it(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    conversation = handed_back_to_a_bot_that_was_down(other, clock, (UNLOCK, answerable(UNLOCK)))
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        kept = "Would have answered from station-full; kept silent as the conversation had gone"
        await wait_until(pilot, lambda: "station-full" in pane(app, view))
        said = pane(app, view)
        # The escalation first, then the kept one, each headed by its question.
        assert said.index(f"“{REFUND}”") < said.index("Escalated: not-judged")
        assert said.index("Escalated: not-judged") < said.index("refund-time not judged")
        assert said.index("refund-time not judged") < said.index(f"“{UNLOCK}”") < said.index(kept)
        assert "station-full" in said and "0.91" in said

        # Ctrl+O: both questions' candidates first, scores and all.
        picker = await claim_and_pick(pilot, view)
        first = picker.items[: len(MISSED) + 1]
        assert {item.passage.id for item in first} == {*MISSED, "station-full"}
        assert first[0].passage.id == "station-full" and first[0].probability == 0.91
