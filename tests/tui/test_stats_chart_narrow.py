"""The analytics screen's conversations per day at 60 columns: 30 days at two columns each need
60, and the right end (today's bar) was cut off with no way to scroll to it, under a heading
saying "today 9". Every day is drawn, today's last, at 60 columns as at 80 (one column a day
where two do not fit)."""

from __future__ import annotations

import pytest

from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.stats import StatsScreen
from chatbot.tui.widgets.fitted_sparkline import drawn_width
from tests.tui.conftest import MakeApp
from tests.tui.helpers import flat, open_stats, screen_text, wait_until

SPARKS = set("▁▂▃▄▅▆▇█")


def chart_rows(app: HelpDeskApp, screen: StatsScreen, chart: str) -> list[str]:
    """The rows of the chart `chart` as drawn on the screen, whole width."""
    widget = screen.query_one(chart)
    rows = screen_text(app).splitlines()
    return [rows[y] for y in range(widget.region.y, widget.region.bottom)]


@pytest.mark.usefixtures("day")
@pytest.mark.parametrize("size", [(60, 20), (60, 50), (80, 24)], ids=["60x20", "60x50", "80x24"])
async def test_the_last_30_days_show_today_at_60_columns(
    make_app: MakeApp, size: tuple[int, int]
) -> None:
    app = make_app("agent", bot=False)
    async with app.run_test(size=size) as pilot:
        screen = await open_stats(pilot)
        await pilot.press("p")
        await wait_until(pilot, lambda: "Last 30 days" in flat(screen_text(app)))
        days = screen.query_one("#stats-days")
        body = screen.query_one("#stats-body")
        days.scroll_visible(animate=False, immediate=True)
        await wait_until(pilot, lambda: days.region.y >= 1 and days.region.bottom <= size[1] - 1)
        await pilot.pause()
        heading = "Conversations per day: Dec 7 to Jan 5, most 9, today 9"
        assert heading in flat(screen_text(app))
        top, bottom = chart_rows(app, screen, "#stats-days")
        drawn = bottom.strip()
        # Every day: 29 at zero (the baseline) and today at the most, two columns a day or one.
        assert set(drawn) <= SPARKS and len(drawn) in (30, 60), bottom
        each = len(drawn) // 30
        assert drawn == "▁" * (29 * each) + "█" * each, bottom
        assert top.rstrip().endswith("█" * each) and len(top.rstrip()) == len(bottom.rstrip())
        # Inside what the screen shows of its body (not under the scroll bar, nor past the edge).
        assert len(bottom.rstrip()) <= body.scrollable_content_region.right
        if size[0] >= 80:
            assert each == 2  # Where they fit, two columns a day, as before.


def test_two_columns_a_value_where_they_fit_else_one() -> None:
    assert [drawn_width(30, room) for room in (72, 60, 56, 30, 29)] == [60, 60, 30, 30, 29]
    assert [drawn_width(7, 56), drawn_width(1, 56), drawn_width(24, 56), drawn_width(24, 40)] == [
        14, 8, 48, 24
    ]  # fmt: skip
