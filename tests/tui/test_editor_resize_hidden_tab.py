"""A window resized while another editor tab is shown: the passage's text is wrapped to the new
width as Passages is shown again, not left wrapped to the old one (cut at the new width, words
out of sight, where an editor could save them unseen) until the next resize."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TextArea

from chatbot.config import Settings
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.store import PassageStore
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor, open_passage
from tests.tui.helpers import flat, screen_text, wait_until

# As many lines at the narrower width as at the wider: Textual repainted the box only when that
# number changed.
TEXT = "Xyzzy is a magic word; plugh too. Qwerty is a keyboard."


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    PassageStore(kb_copy).add(Passage(id="magic-words", title="Magic words", text=TEXT))
    return editor_settings(db_path, kb_copy)


@pytest.mark.parametrize("away", ["ctrl+g", "ctrl+t", "ctrl+o"])
async def test_the_text_is_wrapped_to_a_width_changed_on_another_tab(
    make_app: MakeApp, away: str
) -> None:
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "magic-words")
        await wait_until(pilot, lambda: editor.form.passage_id == "magic-words")
        text = editor.query_one("#form-text", TextArea)
        await wait_until(pilot, lambda: flat(screen_text(app, text)) == TEXT)
        wide = text.size.width
        await pilot.press(away)
        await wait_until(pilot, lambda: not text.region)
        await pilot.resize_terminal(60, 20)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: 0 < text.size.width < wide)

        def shown() -> str:
            return flat(screen_text(app, text))

        await wait_until(pilot, lambda: shown() == TEXT, timeout=3)
