"""The editor's passage list shows at most `MAX_ROWS` rows, by id, and says so on a line below
them. End went to the last row and left that line below the view (at 41 rows tall it showed cut,
"1,510 more: type to narrow the"), so the list looked complete, and the passages after the cut
(`helmet`, `refund-time`) looked missing. End now shows the whole line, wrapped, and it says
plainly that the list is cut and how to find the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList

from chatbot.config import Settings
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.passage_list import MAX_ROWS
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor, type_into
from tests.tui.helpers import flat, screen_text, wait_until

GENERATED = MAX_ROWS + 20
"""Passages `gen-0000`… added to the shipped ones: the list is cut inside them."""
CUT = "only the first 500 by id"


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    for n in range(GENERATED):
        passage = {"id": f"gen-{n:04d}", "title": f"Generated {n}", "tags": [], "text": f"Text {n}"}
        (kb_copy / f"gen-{n:04d}.json").write_text(json.dumps(passage), encoding="utf-8")
    return editor_settings(db_path, kb_copy)


def options(app: HelpDeskApp) -> OptionList:
    return app.screen.query_one("#passage-options", OptionList)


def note(app: HelpDeskApp) -> str:
    """The list's last line, as the code says it (whatever its words)."""
    rows = options(app)
    last = rows.get_option_at_index(rows.option_count - 1)
    assert last.disabled
    return flat(str(last.prompt))


SCROLLBAR = str.maketrans(dict.fromkeys("▁▂▃▄▅▆▇█▔", " "))
"""The scrollbar's thumb, drawn beside the rows' last cells."""


def shown(app: HelpDeskApp) -> str:
    """The list's rows as on screen, wrapped lines joined."""
    return flat(screen_text(app, options(app)).translate(SCROLLBAR))


async def end_of_list(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, HelpDeskApp)
    rows = options(app)
    rows.focus()
    await pilot.press("end")
    await wait_until(pilot, lambda: rows.highlighted == rows.option_count - 2)


@pytest.mark.parametrize("size", [(80, 41), (80, 24), (60, 20)])
async def test_end_on_a_cut_list_shows_the_whole_line_saying_so(
    make_app: MakeApp, kb_copy: Path, size: tuple[int, int]
) -> None:
    total = len(PassageStore(kb_copy).passages())
    app = make_app("agent")
    async with app.run_test(size=size) as pilot:
        await open_editor(pilot)
        rows = options(app)
        await wait_until(pilot, lambda: rows.option_count == MAX_ROWS + 1)
        await end_of_list(pilot)
        assert rows.highlighted is not None
        assert rows.get_option_at_index(rows.highlighted).id == "gen-0495"
        said = note(app)
        assert said.startswith(f"{total - MAX_ROWS:,} more passages not listed"), said
        assert CUT in said and "type a word from an id, title or text" in said
        # Whole and wrapped, on screen: every word, the last one too.
        await wait_until(pilot, lambda: said in shown(app))
        assert shown(app).endswith(said)

        # Typed on the list, a word reaches a passage past the cut.
        await pilot.press(*"helmet")
        await wait_until(pilot, lambda: rows.option_count == 1)
        assert rows.get_option_at_index(0).id == "helmet"


async def test_a_search_matching_more_than_the_rows_says_so_at_its_end(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=(60, 20)) as pilot:
        await open_editor(pilot)
        rows = options(app)
        await type_into(pilot, "#passage-search", "generated")
        await wait_until(pilot, lambda: rows.option_count == MAX_ROWS + 1)
        await end_of_list(pilot)
        said = note(app)
        assert said == (
            f"{GENERATED - MAX_ROWS} more matches not listed, {CUT}: "
            "type more words to narrow the search."
        )
        await wait_until(pilot, lambda: shown(app).endswith(said))


async def test_the_line_stays_last_under_deleted_passages(make_app: MakeApp, kb_copy: Path) -> None:
    PassageStore(kb_copy).delete("late-return")  # Listed after the live ones, marked deleted.
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_editor(pilot)
        rows = options(app)
        await wait_until(pilot, lambda: rows.option_count == MAX_ROWS + 2)
        await end_of_list(pilot)
        assert rows.get_option_at_index(rows.option_count - 2).id == "deleted:late-return"
        said = note(app)
        assert CUT in said
        await wait_until(pilot, lambda: shown(app).endswith(said))
