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

import re

from chatbot.desk.service import DeskService
from chatbot.tui.screens.passage_picker import PassagePicker
from tests.tui.conftest import SIZE, FrozenClock, MakeApp
from tests.tui.decision_helpers import (
    MISSED,
    REFUND,
    UNLOCK,
    answerable,
    handed_back_to_a_bot_that_was_down,
    pane,
)
from tests.tui.helpers import claim_and_pick, wait_until


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
    conversation = handed_back_to_a_bot_that_was_down(other, clock, [(UNLOCK, answerable(UNLOCK))])
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        kept = "Kept silent: would have answered from station-full"
        await wait_until(pilot, lambda: "station-full" in pane(app, view))
        said = pane(app, view)
        # The escalation first, then the kept one, each headed by its question (on one line,
        # cut to the pane's width).
        assert said.index(f"“{REFUND[:30]}") < said.index("Escalated: not-judged")
        not_judged = f"Not judged: {', '.join(MISSED)}"
        assert said.index("Escalated: not-judged") < said.index(not_judged)
        assert said.index(not_judged) < said.index(f"“{UNLOCK[:30]}") < said.index(kept)
        assert re.search(rf"{kept} station-full █+░* 0\.91", said), said

        # Ctrl+O: both questions' candidates first, scores and all.
        picker = await claim_and_pick(pilot, view)
        first = picker.items[: len(MISSED) + 1]
        assert {item.passage.id for item in first} == {*MISSED, "station-full"}
        assert first[0].passage.id == "station-full" and first[0].probability == 0.91
