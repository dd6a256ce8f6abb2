"""A tester's finding: at the rating prompt, `7` and Enter was rightly not sent ("A rating is a
number from 1 to 5.") but the `7` was taken out of the box. Words not sent stay in the box, as a
message refused for its length does, for the customer to correct; the line goes once they do."""

from __future__ import annotations

from chatbot.desk.models import ChatEvent, Rated, State
from chatbot.desk.service import DeskService
from tests.tui.conftest import MakeApp
from tests.tui.desk_helpers import customer_words, resolved_by_another_agent
from tests.tui.helpers import chat_panel_ready, flat, screen_text, type_text, wait_until

SIZE = (60, 20)
RANGE = "A rating is a number from 1 to 5."


async def test_a_number_out_of_range_stays_in_the_box_to_correct(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        cid = await resolved_by_another_agent(pilot, panel, other)
        box = panel.question
        box.focus()
        await type_text(pilot, "7")
        await pilot.press("enter")

        def said() -> str:
            return flat(screen_text(app, panel.error)) if panel.error.display else ""

        await wait_until(pilot, lambda: said() == RANGE)
        assert box.value == "7" and box.cursor_position == 1
        assert screen_text(app, box).strip() == "7"  # On screen, in the box.
        assert panel.rating.display and other.conversation(cid).state is State.RESOLVED
        # Corrected: the line goes with the 7, and the 4 typed in its place rates.
        await pilot.press("backspace")
        await wait_until(pilot, lambda: said() == "")
        await type_text(pilot, "4")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not panel.rating.display)
        rated = [e.event.rating for e in other.entries(cid)
                 if isinstance(e, ChatEvent) and isinstance(e.event, Rated)]  # fmt: skip
        assert rated == [4] and box.value == ""
        # Once rated, a lone number is not sent either, and stays too.
        await type_text(pilot, "5")
        await pilot.press("enter")
        await wait_until(pilot, lambda: said() == "You already rated this conversation 4 out of 5.")
        assert box.value == "5"
        assert customer_words(other, cid) == ["Where is my bike?"]
        assert other.conversation(cid).state is State.RESOLVED
