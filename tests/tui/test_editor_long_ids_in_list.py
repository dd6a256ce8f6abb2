"""Long ids in the editor's passage list are cut with … on their row, as titles are: wrapped,
`my-ebike-battery-range` at 60 columns left "ange" alone on a line (where the list could start
after scrolling), and a 64-character id broke anywhere with no mark."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, OptionList

from chatbot.config import Settings
from chatbot.knowledge_base.models import MAX_ID_CHARS, Passage
from chatbot.knowledge_base.store import PassageStore
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor
from tests.tui.helpers import screen_text, steady, wait_until

LONGEST = ("the-longest-id-a-passage-may-have-" + "x" * MAX_ID_CHARS)[:MAX_ID_CHARS]
PASSAGES = [
    Passage(id="my-ebike-battery-range", title="How far an e-bike goes", text="About 60 km."),
    Passage(id=LONGEST, title="The longest id", text="Ids may have 64 characters."),
]


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    store = PassageStore(kb_copy)
    for passage in PASSAGES:
        store.add(passage)
    return editor_settings(db_path, kb_copy)


def starts_a_row(line: str, rows: list[str]) -> bool:
    """`line` is the start of an id or a title (whole, or cut with …), not a fragment."""
    return any(row.startswith(line.removesuffix("…")) for row in rows)


@pytest.mark.parametrize("size", [(60, 20), (80, 24)])
async def test_each_line_of_the_list_starts_an_id_or_a_title(
    make_app: MakeApp, size: tuple[int, int]
) -> None:
    app = make_app("agent")
    async with app.run_test(size=size) as pilot:
        editor = await open_editor(pilot)
        options = editor.query_one("#passage-options", OptionList)
        rows = [text for passage in PASSAGES for text in (passage.id, passage.title)]
        for search in ("my-ebike", "longest-id"):
            editor.query_one("#passage-search", Input).clear()
            await pilot.press(*search)
            await wait_until(pilot, lambda: options.option_count == 1)
            await steady(pilot)
            lines = [line.strip("▊▎ ") for line in screen_text(app, options).splitlines()]
            shown = [line for line in lines if line]
            assert len(shown) == 2, shown  # The id's line and the title's.
            if search == "longest-id":
                assert shown[0].endswith("…"), shown  # 64 characters: cut at either size.
            assert all(starts_a_row(line, rows) for line in shown), shown
