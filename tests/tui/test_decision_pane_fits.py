"""With two decisions beside the transcript (the escalation's, and one the bot kept silent since),
what the agent answers from is in sight, and the rest is reached from the keyboard.

A tester found, with the refund question escalated (five passages not judged) and the damage
question's decision kept (damage-fee, 0.96): at 80x24 (`helpdesk agent`) the pane is eight rows,
and the damage-fee bar and the whole second decision were below the fold; at 60x20 the refund
question, quoted over two rows, pushed every candidate out; at 120x40 in the desk the kept
decision's 0.96 bar was cut. The pane could not take the focus, so only a mouse wheel reached the
rest. Each question is now quoted on one line, cut to the pane's width; the first decision's
unjudged passages are named on one line, the kept one said in brief with the passage it came to;
and a pane that holds more than it shows is a Tab stop whose arrows scroll it."""

from __future__ import annotations

import re

from textual.color import Color

from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.conversation_view import ConversationView
from tests.tui.conftest import FrozenClock, MakeApp
from tests.tui.decision_helpers import (
    DAMAGE,
    MISSED,
    REFUND,
    SIDE,
    damage_fee,
    handed_back_to_a_bot_that_was_down,
    pane,
)
from tests.tui.helpers import focus_of, screen_text, wait_until

KEPT = re.compile(r"(?i)would have answered from damage-fee\b.*? damage-fee █+░* 0\.96")
"""The kept decision, and its bar whole, score and all."""


def escalation_shown(said: str) -> bool:
    """The escalation's verdict and every one of its candidates are in `said`."""
    return "Escalated: not-judged" in said and all(passage in said for passage in MISSED)


def two_decisions(other: DeskService, clock: FrozenClock) -> int:
    """The refund question escalated, the damage question's decision kept silent since."""
    return handed_back_to_a_bot_that_was_down(other, clock, [(DAMAGE, damage_fee())])


def quoted_lines(app: HelpDeskApp, view: ConversationView) -> list[str]:
    """The pane's rows on screen that begin a quoted question."""
    rows = screen_text(app, view.query_one(SIDE)).splitlines()
    return [row.strip() for row in rows if row.strip().startswith("“")]


def one_line_quote(row: str, question: str) -> bool:
    """`row` quotes `question` whole, or its start cut with … (no second row to go on in)."""
    inside = row.removeprefix("“").rsplit("”", 1)[0]
    return inside == question or (inside.endswith("…") and question.startswith(inside[:-1]))


async def test_at_80x24_both_decisions_show_whole(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    conversation = two_decisions(other, clock)
    app = make_app("agent", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: bool(KEPT.search(pane(app, view))))
        said = pane(app, view)
        assert escalation_shown(said)
        assert said.index("Escalated: not-judged") < said.lower().index("would have answered")
        assert f"Not judged: {', '.join(MISSED)}" in said  # On one line, wrapped as it needs.
        quotes = quoted_lines(app, view)
        assert len(quotes) == 2, quotes
        assert one_line_quote(quotes[0], REFUND) and one_line_quote(quotes[1], DAMAGE), quotes
        assert quotes[1].endswith("…”")  # Longer than the pane is wide: cut, on its one row.


async def test_at_60x20_the_candidates_show_and_the_rest_is_reached_with_the_keys(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    conversation = two_decisions(other, clock)
    app = make_app("agent", bot=False)
    async with app.run_test(size=(60, 20)) as pilot:
        view = await app.open_conversation(conversation)
        side = view.query_one(SIDE)
        await wait_until(pilot, lambda: escalation_shown(pane(app, view)))
        (quote, *_) = quoted_lines(app, view)
        assert one_line_quote(quote, REFUND) and quote.endswith("…”"), quote
        assert not KEPT.search(pane(app, view))  # Six rows: the kept decision is further down.

        # Tab: from the transcript to the reply box, then the pane, which shows it has the focus.
        unfocused = side.styles.border_top
        assert focus_of(app) is view.transcript
        await pilot.press("tab", "tab")
        assert focus_of(app) is side
        await wait_until(pilot, lambda: side.styles.border_top != unfocused)
        assert side.styles.border_top[1] == Color.parse(app.get_css_variables()["accent"])
        await pilot.press("pagedown")
        await wait_until(pilot, lambda: bool(KEPT.search(pane(app, view))))
        await pilot.press("home")
        await wait_until(pilot, lambda: escalation_shown(pane(app, view)))

        # A letter typed there goes to the reply box, as one typed on the transcript does.
        await pilot.press("h")
        assert focus_of(app) is view.reply_input and view.reply_input.value == "h"


async def test_in_the_desk_at_120x40_the_kept_decisions_bar_shows_whole(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    conversation = two_decisions(other, clock)
    app = make_app("all", bot=False)
    async with app.run_test(size=(120, 40)) as pilot:
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: bool(KEPT.search(pane(app, view))))
        said = pane(app, view)
        assert escalation_shown(said)
        assert said.index("Escalated: not-judged") < said.lower().index("would have answered")
        assert len(quoted_lines(app, view)) == 2
