"""A customer who thanks the agent for a resolution can still rate it, in the chat at 80x24.

Once an agent resolved the conversation, the chat asked for a 1–5 rating, and the customer
typed the usual "thanks!": that reopened the conversation for the bot, and the rating prompt
went away for good. Now the desk says "you're welcome", the conversation stays resolved and the
prompt stays, to be answered.
"""

from __future__ import annotations

from chatbot.desk.models import ChatEvent, EventData, Rated, Reopened, Resolved, State, Thanked
from chatbot.desk.service import DeskService
from chatbot.notices import THANKED_NOTICE
from tests.tui.conftest import MakeApp
from tests.tui.desk_helpers import customer_words, resolved_by_another_agent
from tests.tui.helpers import chat_panel_ready, flat, screen_text, type_text, wait_until

SIZE = (80, 24)


def logged(other: DeskService, cid: int) -> list[EventData]:
    return [entry.event for entry in other.entries(cid) if isinstance(entry, ChatEvent)]


def resolution(other: DeskService, cid: int) -> int:
    """The `resolved` event's entry: what a rating rates."""
    return next(
        entry.id
        for entry in reversed(other.entries(cid))
        if isinstance(entry, ChatEvent) and isinstance(entry.event, Resolved)
    )


async def test_thanks_after_the_resolution_keeps_the_rating_asked(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        cid = await resolved_by_another_agent(pilot, panel, other)
        assert app.screen.focused is panel.question

        await type_text(pilot, "thanks!")
        await pilot.press("enter")
        await wait_until(pilot, lambda: THANKED_NOTICE in flat(screen_text(app, panel)))
        assert customer_words(other, cid) == ["Where is my bike?", "thanks!"]
        assert logged(other, cid)[-1] == Thanked(resolved=True)
        assert Reopened() not in logged(other, cid)
        assert other.conversation(cid).state is State.RESOLVED
        # The prompt is still there, on screen, with the keyboard where it was.
        assert panel.rating.display
        assert "(excellent)" in flat(screen_text(app, panel.rating))
        assert app.screen.focused is panel.question
        assert panel.question.value == "" and not panel.error.display

        await type_text(pilot, "5")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not panel.rating.display)
        said = "You rated this conversation 5 out of 5. Thank you!"
        await wait_until(pilot, lambda: said in flat(screen_text(app, panel)))
        rated = Rated(rating=5, resolved_entry=resolution(other, cid), agent="ben")
        assert logged(other, cid)[-1] == rated
        assert other.conversation(cid).state is State.RESOLVED
        assert customer_words(other, cid) == ["Where is my bike?", "thanks!"]
