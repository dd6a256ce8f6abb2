"""While a person has the conversation, the side pane shows, under the escalation's decision, the
latest decision kept silent since that considered passages, not merely the very latest one.

The bot, down while the customer wrote, caught up once a person had the conversation: it
escalated the refund question, kept silent a decision that would have answered the damage
question from damage-fee (0.96), then decided "hello? anyone?" (no passages). The pane showed
only the escalation (the very latest decision had no passages, and was the only one looked at):
the damage-fee decision was gone, and Ctrl+O's picker no longer put damage-fee first."""

from __future__ import annotations

import re

from chatbot.desk.service import DeskService
from tests.tui.conftest import FrozenClock, MakeApp
from tests.tui.decision_helpers import (
    DAMAGE,
    HELLO,
    MISSED,
    damage_fee,
    handed_back_to_a_bot_that_was_down,
    nothing_found,
    pane,
)
from tests.tui.helpers import claim_and_pick, wait_until

WORDS = ("refund-time", "0.96")
"""In the pane once both decisions are: the escalation's candidates, the kept one's score."""
KEPT = re.compile(r"(?i)would have answered from damage-fee\b.*? damage-fee █+░* 0\.96")


async def test_a_kept_decision_with_passages_outlives_a_later_one_without(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    conversation = handed_back_to_a_bot_that_was_down(
        other, clock, [(DAMAGE, damage_fee()), (HELLO, nothing_found(HELLO))]
    )
    app = make_app("agent", bot=False)
    async with app.run_test(size=(120, 40)) as pilot:
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: all(word in pane(app, view) for word in WORDS))
        said = pane(app, view)
        assert "Escalated: not-judged" in said
        assert KEPT.search(said), said
        assert said.index("Escalated: not-judged") < said.lower().index("would have answered")
        assert "hello?" not in said and "no-passages" not in said

        # Ctrl+O: damage-fee first, with the score the bot gave it; the refund question's next.
        picker = await claim_and_pick(pilot, view)
        assert picker.items[0].passage.id == "damage-fee"
        assert picker.items[0].probability == 0.96
        assert {item.passage.id for item in picker.items[: len(MISSED)]} == set(MISSED)
