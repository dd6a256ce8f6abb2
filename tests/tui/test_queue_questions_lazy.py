"""The queue table reads a whole queue without flattening every question on the UI thread (at
10,000 waiting that was more than half of `replace_all`): a row's question is made one literal
line when the row is first drawn, and kept; rows never drawn cost nothing, and leave or change
like any other."""

from __future__ import annotations

from chatbot.desk.service import DeskService
from chatbot.tui.widgets.queue_list import QueueTable
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.desk_helpers import waiting
from tests.tui.helpers import queue_rows, wait_until

COUNT = 60
"""More rows than the table shows at `SIZE`."""


async def test_only_drawn_rows_have_their_questions_flattened(
    make_app: MakeApp, other: DeskService
) -> None:
    ids = [waiting(other, f"Question {n}\nover\ttwo lines \x1b[1m{n}") for n in range(COUNT)]
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(QueueTable)
        await wait_until(pilot, lambda: table.row_count == COUNT and table.region.height > 0)
        await pilot.pause()
        shown = table.scrollable_content_region.height - 1  # The header takes a line.
        assert 0 < shown < COUNT
        flattened = dict(table._questions)
        # The rows on screen (and the one the table's last line cuts), none below them.
        assert shown <= len(flattened) <= shown + 1 < COUNT, (len(flattened), shown)
        assert set(flattened) == set(ids[: len(flattened)])
        assert flattened[ids[0]] == "Question 0 over two lines \\x1b[1m0"

        # A row never drawn leaves the queue, and one comes back changed: nothing held for them.
        assert other.claim(ids[-1], agent="bo").won
        assert other.claim(ids[-2], agent="bo").won
        other.release(ids[-2], agent="bo")
        await wait_until(pilot, lambda: table.row_count == COUNT - 1)
        assert table.item(ids[-1]) is None and table.item(ids[-2]) is not None

        # Every row as drawn, the ones scrolled to last too: each question on one literal line.
        rows = queue_rows(app)
        assert len(rows) == COUNT - 1
        by_id = {int(row[1]): row[5] for row in rows}
        for n, conversation in enumerate(ids[:-1]):
            assert by_id[conversation].startswith(f"Question {n} over two lines"), by_id
        assert set(table._questions) == set(ids[:-1])
