"""A deleted passage's form: the footer leaves out Ctrl+S and F8, which can do nothing there
(greyed, they still read as offered, and pressing them said nothing), and the note under the
form, which says what does act (Restore), is a whole sentence in each language."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets._footer import FooterKey

from chatbot.config import Settings
from chatbot.i18n import translations
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.editor import Confirm
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor, problem
from tests.tui.helpers import footer_current, wait_until

NOTE = "{passage} is deleted: Restore brings back the version highlighted."


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


def footer_actions(app: HelpDeskApp) -> set[str]:
    """The actions of the keys the footer shows, greyed ones too."""
    return {key.action for key in app.screen.query(FooterKey)}


async def test_a_deleted_passage_offers_no_save_nor_delete_key(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        editor = await open_editor(pilot)
        await footer_current(pilot)
        assert {"save", "delete"} <= footer_actions(app)
        passage_id = editor.form.passage_id
        await pilot.press("f8")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: editor.form.deleted)
        await footer_current(pilot)
        shown = footer_actions(app)
        assert "save" not in shown and "delete" not in shown, shown
        assert "new" in shown  # What does act there stays.
        assert problem(editor) == NOTE.format(passage=passage_id)

        await pilot.press("ctrl+n")  # A new passage: Save comes back (greyed until filled).
        await wait_until(pilot, lambda: not editor.form.deleted)
        await footer_current(pilot)
        assert {"save", "delete"} <= footer_actions(app)


def test_the_deleted_note_ends_its_sentence_in_every_language() -> None:
    assert translations("en").gettext(NOTE) == NOTE
    chinese = translations("zh").gettext(NOTE)
    assert chinese != NOTE and chinese.endswith("。"), chinese
