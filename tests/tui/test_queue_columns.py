"""The queue beside the chat (`helpdesk`, mode "all") in a narrow window: only the question is
shortened, never a reason. At 80x24 it showed `custo…`, at 60x20 `not-h…` under `Quest…`."""

from __future__ import annotations

import re

import pytest

from chatbot.desk.service import DeskService
from chatbot.engine.models import Reason
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.candidate_bars import CandidateBars
from chatbot.tui.widgets.queue_list import Columns, QueueTable
from tests.tui.conftest import Q1, Q3, MakeApp
from tests.tui.helpers import ask, flat, queue_rows, screen_text, wait_until


def waiting(desk: DeskService, question: str = Q1) -> int:
    """A customer in another process who asked for a person, then asked `question`."""
    conversation = desk.start_conversation().id
    desk.talk_to_person(conversation)
    desk.ask(conversation, question)
    return conversation


def table_text(app: HelpDeskApp) -> list[str]:
    """The queue table's lines as they are on screen."""
    return screen_text(app, app.screen.query_one(QueueTable)).splitlines()


@pytest.mark.parametrize(("size", "scrolls"), [((80, 24), False), ((60, 20), True)])
async def test_beside_the_chat_the_reason_is_whole_and_the_question_gives_way(
    make_app: MakeApp, other: DeskService, size: tuple[int, int], scrolls: bool
) -> None:
    app = make_app("all")
    async with app.run_test(size=size) as pilot:
        waiting(other)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1 and queue_rows(app)[0][5] != "")
        [row] = queue_rows(app)
        assert row[1:5] == ("1", "0s", "customer-asked", "–")
        assert row[5].startswith("I was") and row[5].endswith("…")
        await wait_until(pilot, lambda: "customer-asked" in "\n".join(table_text(app)))
        header, line = table_text(app)[:2]
        assert "Reason" in header.split() and "customer-asked" in line.split()
        table = app.screen.query_one(QueueTable)
        if not scrolls:  # At 80 columns all of it is on screen.
            assert table.max_scroll_x == 0 and line.rstrip().endswith("…")
            return
        # At 60 the rest of the row is there, to the right: the table scrolls sideways to it.
        assert table.max_scroll_x > 0
        table.focus()
        for _ in range(table.max_scroll_x):
            await pilot.press("right")
        await wait_until(pilot, lambda: table.scroll_x == table.max_scroll_x)
        await wait_until(pilot, lambda: "I was" in "\n".join(table_text(app)))
        header, line = table_text(app)[:2]
        assert header.rstrip().endswith("Quest…") and line.rstrip().endswith("I was…")


def test_no_reason_is_ever_shortened_at_any_width() -> None:
    longest = max(len(reason.value) for reason in Reason)
    for claims in (False, True):
        for width in range(0, 200):
            columns = Columns.for_width(width, id_width=3, claims=claims)
            assert columns.reason >= longest, (width, claims)
            assert columns.question >= 6 and columns.status >= 7, (width, claims)
            # The row fits the table, or else the table scrolls; never a column narrower
            # than it needs while there was room.
            if columns.width > width:
                assert columns.question == 6, (width, claims)


async def test_the_reason_column_is_as_wide_as_the_longest_reason_shown(
    make_app: MakeApp, other: DeskService
) -> None:
    # Sized for `customer-asked` whatever the queue held, the column left a queue of
    # `low-score` five blank cells the question could use.
    app = make_app("all")
    async with app.run_test(size=(80, 24)) as pilot:
        await ask(pilot, Q3)  # The bot sends it to a person: low-score.
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1 and queue_rows(app)[0][5] != "")
        table = app.screen.query_one(QueueTable)
        [row] = queue_rows(app)
        assert row[3] == "low-score" and table.columns().reason == len("low-score")
        assert row[5].startswith("There were")
        waiting(other)  # A customer-asked row widens it: that reason is whole too.
        await wait_until(pilot, lambda: len(queue_rows(app)) == 2)
        assert table.columns().reason == len("customer-asked")
        assert {row[3] for row in queue_rows(app)} == {"low-score", "customer-asked"}


async def test_the_scores_beside_a_narrow_queue_are_whole(make_app: MakeApp) -> None:
    # At 60 columns the passages pane (at least 34 wide) overflowed the half-screen console,
    # and every score at its right was cut: "damage-fee ███████████████░ 0".
    app = make_app("all")
    async with app.run_test(size=(60, 24)) as pilot:
        await ask(pilot, Q3)  # Judged, then sent to a person: the pane shows its candidates.
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        await app.open_conversation(1)
        bars = app.screen.query_one(CandidateBars)
        await wait_until(pilot, lambda: "late-return" in screen_text(app, bars))
        rows = [line for line in screen_text(app, bars).splitlines() if "█" in line or "░" in line]
        assert rows and all(re.search(r" [01]\.\d\d$", row) for row in rows), rows
        assert "threshold 0.70" in flat(screen_text(app, bars))


async def test_a_narrow_queues_wait_column_is_as_wide_as_the_statuses_it_shows(
    make_app: MakeApp, other: DeskService
) -> None:
    # With one of the agent's own claims listed, the short statuses ("ana 0s") sat in a column
    # sized for the longest a claim could be (14 cells): at 45 columns the question was cut to
    # `I was c…` beside blank cells it could have had.
    mine = waiting(other)
    other.claim(mine, agent="ana")
    waiting(other, Q3)
    app = make_app("agent")
    async with app.run_test(size=(45, 24)) as pilot:
        await wait_until(pilot, lambda: len(queue_rows(app)) == 2 and queue_rows(app)[0][5] != "")
        table = app.screen.query_one(QueueTable)
        columns = table.columns()
        assert columns.short
        statuses = [row[2] for row in queue_rows(app)]
        assert "ana 0s" in statuses
        assert columns.status == max(7, *(len(shown) for shown in statuses))
        assert table.max_scroll_x == 0  # The row fits: the question has the rest.
        assert columns.width == table.scrollable_content_region.width
