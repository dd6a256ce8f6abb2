"""The analytics screen (F5) on an empty desk: with no question asked it named "busiest 00:00"
over a flat line. It says there are none, as `helpdesk stats` does, and names no busiest hour."""

from __future__ import annotations

from textual.widgets import Sparkline

from chatbot.config import Settings
from tests.tui.conftest import FrozenClock, MakeApp
from tests.tui.helpers import agent_app, flat, in_chinese, open_stats, screen_text, squashed


async def test_an_empty_desk_has_no_busiest_hour(make_app: MakeApp) -> None:
    app = make_app("agent", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_stats(pilot)
        assert screen.stats is not None and not any(screen.stats.questions_by_hour)
        # The hours come last: scrolled to, they are on screen.
        screen.query_one("#stats-hours-title").scroll_visible(animate=False, immediate=True)
        await pilot.pause()
        shown = flat(screen_text(app))
        assert "Questions by hour (UTC) none" in shown
        assert "busiest" not in shown
        assert not screen.query_one("#stats-hours", Sparkline).display


async def test_an_empty_desk_says_none_in_chinese(
    settings: Settings, http: object, clock: FrozenClock
) -> None:
    app = agent_app(in_chinese(settings), http, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_stats(pilot)
        screen.query_one("#stats-hours-title").scroll_visible(animate=False, immediate=True)
        await pilot.pause()
        shown = squashed(app)
        assert "每小时问题数（UTC）无" in shown
        assert "最忙" not in shown
