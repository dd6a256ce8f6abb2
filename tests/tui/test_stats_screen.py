"""The analytics screen: opened with F5 or the command palette by agents and editors (never in a
customer's chat), the scripted day's figures drawn beside their pictures, the period changed with
P, other processes' changes followed, and snapshots at 80x24 and 120x40."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from textual.pilot import Pilot

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.desk.stats import duration
from chatbot.tui import HelpDeskApp, Mode, create_app
from chatbot.tui.screens import stats as stats_screen
from chatbot.tui.screens.stats import StatsScreen
from tests.desk.helpers import DOCKS
from tests.tui.conftest import FrozenClock, MakeApp
from tests.tui.helpers import flat, open_stats, screen_text, type_text, wait_until

SnapCompare = Callable[..., bool]
SMALL = (80, 24)
LARGE = (120, 40)


@pytest.mark.usefixtures("day")
async def test_f5_shows_the_figures_with_their_pictures(make_app: MakeApp) -> None:
    app = make_app("agent", bot=False)
    async with app.run_test(size=LARGE) as pilot:
        await open_stats(pilot)
        text = screen_text(app)
        shown = flat(text)
        assert "Last 7 days · 9 conversations · bot resolved 22.2% (2 of 9) · 4 waiting" in shown
        assert "First reply p50 3m 00s p90 11m 00s · resolved p50 8m 00s p90 21m 00s" in shown
        assert "Escalations by reason (7)" in shown
        assert "customer-asked ████████████████ 1" in shown
        assert "at 0.70 4 ◀" in shown and "▲ 0.70" in shown
        assert "card-charged-twice ████████████████████ 1 ✓ 1 ✗" in shown
        assert "Valen errors: replay-miss 5, timeout 1" in shown
        assert f"2 {DOCKS}" in shown
        assert "Questions by hour (UTC, 00 to 23): busiest 09:00, 9" in shown
        # Escape goes back to where the agent was.
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, StatsScreen))


@pytest.mark.usefixtures("day")
async def test_p_changes_the_period_and_reads_again(
    make_app: MakeApp, clock: FrozenClock, other: DeskService
) -> None:
    app = make_app("agent", bot=False)
    async with app.run_test(size=LARGE) as pilot:
        screen = await open_stats(pilot)
        first = screen.stats
        # A day and a half later, "last 24 hours" holds nothing; "everything" holds it all.
        clock.advance(36 * 3600)
        await pilot.press("p", "p")
        await wait_until(pilot, lambda: screen.stats is not first and screen.period == 2)
        await wait_until(
            pilot, lambda: screen.stats is not None and screen.stats.conversations == 0
        )
        assert "Last 24 hours · 0 conversations · bot resolved – (0 of 0)" in flat(screen_text(app))
        # One of a kind is said in the singular (R reads the figures again at once).
        other.ask(None, "Is there a bike near the station?")
        await pilot.press("r")
        await wait_until(pilot, lambda: "Last 24 hours · 1 conversation · bot resolved" in
                         flat(screen_text(app)))  # fmt: skip
        assert "· 1 question, 0 answers" in flat(screen_text(app))
        await pilot.press("p")
        await wait_until(pilot, lambda: "Everything recorded · 10 conversations" in
                         flat(screen_text(app)))  # fmt: skip


async def test_the_last_7_and_30_days_are_that_many_calendar_days(
    make_app: MakeApp, clock: FrozenClock, other: DeskService
) -> None:
    """ "Last 7 days" is today and the six UTC days before it: seven bars, and a question asked on
    the eighth day back (less than 7×24 hours ago) is not counted; likewise for 30 days."""
    clock.now = datetime(2025, 12, 29, 23, 0, tzinfo=UTC)  # 7×24 h before is Jan 5 09:00.
    other.ask(None, "Is there a bike near the station?")
    clock.now = datetime(2025, 12, 30, 0, 30, tzinfo=UTC)
    other.ask(None, "Can I rent two bikes at once?")
    clock.now = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    app = make_app("agent", bot=False)
    async with app.run_test(size=LARGE) as pilot:
        screen = await open_stats(pilot)
        assert screen.stats is not None and screen.stats.conversations == 1
        assert len(screen.stats.per_day) == 7
        shown = flat(screen_text(app))
        assert "Last 7 days · 1 conversation ·" in shown
        assert "Conversations per day: Dec 30 to Jan 5, most 1" in shown
        await pilot.press("p")
        await wait_until(pilot, lambda: "Last 30 days · 2 conversations ·" in
                         flat(screen_text(app)))  # fmt: skip
        assert screen.stats is not None and len(screen.stats.per_day) == 30
        assert "Conversations per day: Dec 7 to Jan 5" in flat(screen_text(app))


@pytest.mark.usefixtures("day")
async def test_changes_by_another_process_show_up(
    make_app: MakeApp, other: DeskService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stats_screen, "REFRESH_S", 0.05)
    app = make_app("agent", bot=False)
    async with app.run_test(size=LARGE) as pilot:
        screen = await open_stats(pilot)
        other.ask(None, "Is there a bike near the station?")
        await wait_until(pilot, lambda: screen.stats is not None and
                         screen.stats.conversations == 10)  # fmt: skip
        await wait_until(pilot, lambda: "· 10 conversations ·" in flat(screen_text(app)))


@pytest.mark.usefixtures("day")
async def test_the_oldest_wait_ticks_and_old_figures_are_read_again(
    make_app: MakeApp, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With nobody changing anything, "oldest 6m 42s" stood still, and "Last 24 hours" never
    # slid past what it held.
    monkeypatch.setattr(stats_screen, "REFRESH_S", 0.05)
    app = make_app("agent", bot=False)
    async with app.run_test(size=LARGE) as pilot:
        screen = await open_stats(pilot)
        read = screen.stats
        assert read is not None and read.oldest_wait_s is not None
        clock.advance(30)  # Under a minute: the same figures, the wait grown by 30 s.
        later = f"oldest {duration(read.oldest_wait_s + 30)}"
        await wait_until(pilot, lambda: later in flat(screen_text(app)))
        assert screen.stats is read
        await pilot.press("p", "p")  # Last 30 days, then last 24 hours.
        await wait_until(pilot, lambda: "Last 24 hours · 9 conversations" in
                         flat(screen_text(app)))  # fmt: skip
        clock.advance(24 * 3600)  # The day has gone by: read again, it holds nothing now.
        await wait_until(pilot, lambda: "Last 24 hours · 0 conversations" in
                         flat(screen_text(app)))  # fmt: skip


@pytest.mark.parametrize("mode", ["all", "editor"])
async def test_agents_and_editors_have_it_in_the_palette(make_app: MakeApp, mode: Mode) -> None:
    app = make_app(mode, bot=False)
    async with app.run_test(size=LARGE) as pilot:
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Analytics" in titles
        await pilot.press("ctrl+p")
        await type_text(pilot, "analytics")
        await wait_until(pilot, lambda: "Analytics" in screen_text(app))
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen))


async def test_a_customer_is_never_shown_it(make_app: MakeApp) -> None:
    app = make_app("chat", bot=False, editor=False)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("f5")
        await pilot.pause()
        assert app.screen is screen
        assert "Analytics" not in [c.title for c in app.get_system_commands(app.screen)]
        assert app.check_action("analytics", ()) is False


def make(settings: Settings, clock: FrozenClock, mode: Mode) -> HelpDeskApp:
    return create_app(settings, mode=mode, clock=clock, agent="ana", timings=False, bot=False)


@pytest.mark.usefixtures("day")
@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x40"])
def test_snapshot(
    snap_compare: SnapCompare, settings: Settings, clock: FrozenClock, size: tuple[int, int]
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await open_stats(pilot)

    assert snap_compare(make(settings, clock, "agent"), terminal_size=size, run_before=run_before)


@pytest.mark.usefixtures("day")
async def test_at_60_columns_the_charts_stack_and_the_scores_are_whole(make_app: MakeApp) -> None:
    # Side by side, the score table ran past a 60-column screen, its threshold row cut off
    # ("Top scores (5 decisi"), with no way to scroll to it.
    app = make_app("agent", bot=False)
    async with app.run_test(size=(60, 20)) as pilot:
        screen = await open_stats(pilot)
        scores = screen.query_one("#stats-scores")
        await wait_until(pilot, lambda: scores.region.right <= 60)
        assert screen.query_one("#stats-reasons").region.bottom <= scores.region.y
        await pilot.resize_terminal(120, 40)  # Room again: side by side.
        await wait_until(
            pilot, lambda: scores.region.y == screen.query_one("#stats-reasons").region.y
        )
