"""Where typing goes in the editor and on the queue: opening the editor puts the focus on the
passage search, not in the first passage's text (a search typed there was written into it, and Tab,
Enter saved it); spaces typed in a burst on the list or the queue stay in the search they join;
and Try it shows no earlier question's results under a refusal."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, OptionList, Static, TextArea

from chatbot.config import Settings
from chatbot.tui.screens.find import FindScreen
from tests.tui.conftest import Q1, SIZE, MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor, settle, try_question, type_into
from tests.tui.helpers import flat, screen_text, type_text, wait_until


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


async def test_a_search_typed_as_the_editor_opens_changes_no_passage(
    make_app: MakeApp, kb_copy: Path
) -> None:
    before = (kb_copy / "card-charged-twice.json").read_text(encoding="utf-8")
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        form_id = editor.query_one("#form-id", Input)
        await wait_until(pilot, lambda: form_id.value == "card-charged-twice")
        # Shown on opening, but the search has the focus: typing is a search (nothing
        # matches `lost`: Tab and Enter then open nothing, and save nothing).
        await type_text(pilot, "lost")
        await pilot.press("tab", "enter")
        await settle(pilot)
        assert "lost" not in editor.query_one("#form-text", TextArea).text
        assert not editor.form.dirty
        assert editor.query_one("#passage-search", Input).value == "lost"
        assert app.focused is editor.query_one("#passage-options")
        # A match this time: Tab then Enter opens it, and the cursor goes into its text.
        await type_into(pilot, "#passage-search", "student")
        await pilot.press("tab")
        assert app.focused is editor.query_one("#passage-options")
        await pilot.press("enter")
        await wait_until(pilot, lambda: form_id.value == "student-pass")
        assert app.focused is editor.query_one("#form-text", TextArea)
    assert (kb_copy / "card-charged-twice.json").read_text(encoding="utf-8") == before


async def test_enter_on_the_passage_shown_first_puts_the_cursor_in_its_text(
    make_app: MakeApp,
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await wait_until(pilot, lambda: editor.form.passage_id == "card-charged-twice")
        await pilot.press("enter")  # Opened by the editor: now for writing.
        text = editor.query_one("#form-text", TextArea)
        await wait_until(pilot, lambda: app.focused is text)
        assert text.cursor_location == text.document.end


async def test_spaces_in_a_burst_typed_on_the_passage_list_stay_in_the_search(
    make_app: MakeApp,
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        options = editor.query_one("#passage-options", OptionList)
        search = editor.query_one("#passage-search", Input)
        await pilot.press("ctrl+f", "tab")
        assert options.has_focus
        # Every key sent before the list handles the first, as a fast typist's keys come.
        await type_text(pilot, "late fee")
        await wait_until(pilot, lambda: search.value == "late fee")
        assert search.has_focus
        assert [options.get_option_at_index(i).id for i in range(options.option_count)] == [
            "late-return"
        ]
        # A space on the list with no search typed there stays the list's.
        await pilot.press("tab")
        assert options.has_focus
        await pilot.press("space")
        assert options.has_focus and search.value == "late fee"


async def test_spaces_in_a_burst_typed_on_the_queue_stay_in_the_search(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        queue = app.focused
        assert queue is not None and queue.id in ("queue-empty", "queue-table")
        await pilot.press("space")  # No search started by a space.
        assert not isinstance(app.screen, FindScreen)
        await type_text(pilot, "Do you sell gift cards?")
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        field = app.screen.query_one("#find-input", Input)
        await wait_until(pilot, lambda: field.value == "Do you sell gift cards?")


@pytest.mark.parametrize("refused", ["   ", "x" * 2001], ids=["blank", "too-long"])
async def test_try_it_clears_the_results_of_the_question_before_a_refused_one(
    make_app: MakeApp, refused: str
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await try_question(pilot, Q1)
        table = editor.query_one("#try-candidates", DataTable)
        answer = editor.query_one("#try-answer")
        decision = editor.query_one("#try-decision", Static)
        assert table.row_count and "card-charged-twice" in str(decision.render())
        await type_into(pilot, "#try-question", refused)
        await pilot.press("enter")
        await settle(pilot)
        said = str(decision.render())
        assert "Type a question first." in said or "2,001 characters; the limit is 2,000" in said
        assert table.row_count == 0
        assert not flat(screen_text(app, answer)).strip()
        assert "card-charged-twice" not in flat(screen_text(app))
