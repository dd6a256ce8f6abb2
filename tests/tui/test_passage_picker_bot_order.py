"""Ctrl+O's passage picker lists the bot's candidates in the bot's own order, as the pane beside
the transcript does: judged ones by probability, best first (ties in retrieval order), then those
not judged in retrieval order; the rest of the knowledge base after them.

For "How long do refunds take?" the bot retrieved refund-time (BM25 6.88) then refund-request
(2.42), judging neither (replay misses). The pane listed them so, but the picker put
refund-request first: it sorted the passages by score alone, and two without one kept the
knowledge base's (alphabetical) order."""

from __future__ import annotations

from collections.abc import Sequence

from textual.pilot import Pilot

from chatbot.desk.service import DeskService
from chatbot.engine.models import Candidate, Decision
from chatbot.engine.policy import decide
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.passage_picker import PassagePicker
from tests.tui.conftest import SIZE, FrozenClock, MakeApp
from tests.tui.decision_helpers import (
    MISSED,
    UNLOCK,
    WORKER,
    answerable,
    handed_back_to_a_bot_that_was_down,
    pane,
)
from tests.tui.helpers import claim_and_pick, screen_text, wait_until

REFUNDS = "How long do refunds take?"
MISS = "replay-miss: no recorded answer"


def unjudged(id_: str, bm25: float) -> Candidate:
    return Candidate(id=id_, text="…", bm25=bm25, error=MISS, error_kind="replay-miss")


def judged(id_: str, bm25: float, probability: float) -> Candidate:
    return Candidate(id=id_, text="…", bm25=bm25, probability=probability)


def escalated(desk: DeskService, question: str, retrieved: Sequence[Candidate]) -> int:
    """A conversation whose one question the bot escalated, its candidates `retrieved` (in
    retrieval order) ranked as the bot ranks them."""
    conversation = desk.ask(None, question).conversation.id
    [pending] = desk.lease(WORKER, limit=1, lease_s=60)
    ranked, answer, reason = decide(retrieved)
    assert answer is None
    decision = Decision(question=question, answer=None, reason=reason, candidates=ranked,
                        threshold=0.7)  # fmt: skip
    assert desk.record_decision(WORKER, pending, decision).outcome == "escalated"
    return conversation


def ids(picker: PassagePicker) -> list[str]:
    return [item.passage.id for item in picker.items]


def listed_in_order(app: HelpDeskApp, picker: PassagePicker, passages: Sequence[str]) -> bool:
    """Whether the picker's list, as drawn, shows `passages` in this order."""
    drawn = screen_text(app, picker.query_one("#passages"))
    found = [drawn.find(f"{passage}  ") for passage in passages]
    return -1 not in found and found == sorted(found)


async def picked(app: HelpDeskApp, pilot: Pilot[None], conversation: int) -> PassagePicker:
    """Open the conversation, claim it (Ctrl+L) and press Ctrl+O, as the agent does."""
    view = await app.open_conversation(conversation)
    await wait_until(pilot, lambda: view.conversation is not None)
    return await claim_and_pick(pilot, view)


async def test_two_unjudged_candidates_come_in_retrieval_order(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = escalated(
        other, REFUNDS, [unjudged("refund-time", 6.88), unjudged("refund-request", 2.42)]
    )
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        # The pane lists them so: the bot's order.
        await wait_until(pilot, lambda: "refund-request not judged" in pane(app, view))
        said = pane(app, view)
        assert said.index("refund-time not judged") < said.index("refund-request not judged")
        picker = await claim_and_pick(pilot, view)
        assert ids(picker)[:2] == ["refund-time", "refund-request"]
        assert [item.probability for item in picker.items[:2]] == [None, None]
        assert "refund-time" not in ids(picker)[2:] and "refund-request" not in ids(picker)[2:]
        await wait_until(
            pilot, lambda: listed_in_order(app, picker, ["refund-time", "refund-request"])
        )


async def test_judged_ones_by_probability_ties_and_the_unjudged_in_retrieval_order(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = escalated(other, "Where can I leave the bike when every dock is taken?", [
        judged("station-full", 5.0, 0.55),
        judged("late-return", 4.0, 0.55),
        unjudged("student-pass", 3.0),
        judged("damage-fee", 2.5, 0.61),
        unjudged("card-charged-twice", 2.0),
    ])  # fmt: skip
    bot = ["damage-fee", "station-full", "late-return", "student-pass", "card-charged-twice"]
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        picker = await picked(app, pilot, conversation)
        assert ids(picker)[: len(bot)] == bot
        assert [item.probability for item in picker.items[: len(bot)]] == [
            0.61, 0.55, 0.55, None, None
        ]  # fmt: skip
        await wait_until(pilot, lambda: listed_in_order(app, picker, bot))


async def test_a_kept_decisions_better_score_first_then_the_escalations_in_its_order(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    # The refund question escalated with MISSED, none judged (retrieval order); a question since
    # would have been answered from station-full (0.91).
    conversation = handed_back_to_a_bot_that_was_down(other, clock, [(UNLOCK, answerable(UNLOCK))])
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        picker = await picked(app, pilot, conversation)
        assert ids(picker)[: len(MISSED) + 1] == ["station-full", *MISSED]
