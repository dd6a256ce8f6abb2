"""The analytics screen (F5) tells the customers' ratings: in the summary, their average to one
decimal, their number and the share of resolutions rated; below, how many of each from 5 down
to 1 and per agent who resolved. Whole at 80x24 and 60x20, and in the agent's language."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from chatbot.assembly import open_service
from chatbot.config import Settings
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.stats import StatsScreen
from tests.desk.rating_helpers import rated_day
from tests.tui.conftest import FrozenClock, MakeApp
from tests.tui.helpers import (
    agent_app,
    in_chinese,
    open_stats,
    screen_text,
    squashed,
    wait_until,
)


@pytest.fixture
def rated(settings: Settings, clock: FrozenClock) -> None:
    """`rated_day` in the app's database: 4 ratings (3.5 on average) of 5 resolutions."""
    desk = open_service(settings, clock=clock)
    try:
        rated_day(desk, clock)  # type: ignore[arg-type]
    finally:
        desk.close()


def shown(screen: StatsScreen, selector: str) -> list[str]:
    """The lines of one part of the screen as drawn (not the scroll bar beside it), each with
    its runs of spaces made one."""
    assert isinstance(screen.app, HelpDeskApp)
    text = screen_text(screen.app, screen.query_one(selector))
    return [" ".join(line.split()) for line in text.splitlines()]


async def scrolled_to(pilot: Pilot[None], screen: StatsScreen, selector: str) -> None:
    """`selector` and everything above it down from the ratings, scrolled into view."""
    chart = screen.query_one(selector)
    chart.scroll_visible(animate=False, immediate=True)
    await wait_until(pilot, lambda: chart.region.bottom <= screen.size.height - 1)
    await pilot.pause()


@pytest.mark.usefixtures("rated")
@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=["80x24", "60x20"])
async def test_the_ratings_in_the_summary_and_below(
    make_app: MakeApp, size: tuple[int, int]
) -> None:
    app = make_app("agent", bot=False)
    async with app.run_test(size=size) as pilot:
        screen = await open_stats(pilot)
        summary = " ".join(shown(screen, "#stats-summary"))
        assert "Customers rated 3.5 of 5 (4 ratings) · 4 of 5 resolutions rated (80.0%)" in summary
        await scrolled_to(pilot, screen, "#stats-raters")
        assert shown(screen, "#stats-ratings") == [
            "Customer ratings (4), average 3.5 of 5",
            f"5 {'█' * 20} 1", f"4 {'█' * 20} 1", f"3 {'█' * 20} 1", f"2 {'█' * 20} 1", "1 0",
        ]  # fmt: skip
        assert shown(screen, "#stats-raters") == [
            "Ratings by agent who resolved",
            f"ana {'█' * 16} 2, average 4.5",
            f"ben {'█' * 16} 2, average 2.5",
        ]
        # Nothing of them past the screen's edge or under the scroll bar.
        room = screen.query_one("#stats-body").scrollable_content_region.right
        for chart in ("#stats-ratings", "#stats-raters"):
            assert screen.query_one(chart).content_region.right <= room


@pytest.mark.usefixtures("day")
async def test_a_desk_with_no_rating_says_so(make_app: MakeApp) -> None:
    app = make_app("agent", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_stats(pilot)
        summary = " ".join(shown(screen, "#stats-summary"))
        assert "No customer rating · 0 of 2 resolutions rated (0.0%)" in summary
        await scrolled_to(pilot, screen, "#stats-raters")
        assert shown(screen, "#stats-ratings") == [
            "Customer ratings (0), average – of 5", "5 0", "4 0", "3 0", "2 0", "1 0"
        ]  # fmt: skip
        assert shown(screen, "#stats-raters") == ["Ratings by agent who resolved", "none"]


@pytest.mark.usefixtures("rated")
async def test_the_ratings_in_the_agents_language(
    settings: Settings, http: object, clock: FrozenClock
) -> None:
    app = agent_app(in_chinese(settings), http, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_stats(pilot)
        summary = "".join("".join(shown(screen, "#stats-summary")).split())
        assert "客户评分平均3.5分（满分5分，共4个评分）·5次解决中4次已评分（80.0%）" in summary
        await scrolled_to(pilot, screen, "#stats-raters")
        ratings = [*shown(screen, "#stats-ratings"), *shown(screen, "#stats-raters")]
        assert ratings[0] == "客户评分（4 个），平均 3.5 分（满分 5 分）"
        assert ratings[6:8] == ["按解决的客服统计的评分", f"ana {'█' * 16} 2 个，平均 4.5 分"]
        everything = squashed(app)
        for english in ["Customers rated", "resolutions rated", "Customer ratings", "average"]:
            assert english not in everything, english
