"""The editor's layout in small windows (80x24, and 60x20): the history's diff on screen however
many versions a passage has, messages whole with the buttons below them, the passage list giving
way to the form, and the gaps table giving its room to the question."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widget import Widget
from textual.widgets import DataTable

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.editor import EditorScreen
from chatbot.tui.widgets.gap_list import QUESTION_COMFORT, GapList
from chatbot.tui.widgets.passage_form import PassageForm
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor
from tests.tui.helpers import flat, screen_text, type_text, wait_until

SIZES = [(80, 24), (60, 20)]


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


def on_screen(app: HelpDeskApp, widget: Widget) -> bool:
    """The widget is laid out whole inside the terminal, not clipped or below its edge."""
    region = widget.region
    return bool(region.height and region.width) and app.screen.region.contains_region(region)


def many_versions(kb_copy: Path, count: int) -> None:
    """`count` saves of the helmet passage, each changing its numbers: as many versions."""
    store = PassageStore(kb_copy)
    for number in range(count):
        seen = store.get("helmet")
        text = " ".join(f"Helmets are free at station {number}." for _ in range(12))
        store.save(seen.passage.model_copy(update={"text": text}), based_on=seen.revision)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "60x20"])
async def test_the_diff_of_a_version_is_on_screen_however_many_versions(
    make_app: MakeApp, kb_copy: Path, size: tuple[int, int]
) -> None:
    """From five versions on, the version list took all the history had at 80x24 and the diff was
    laid out under the footer: a restore was confirmed without seeing what it would change."""
    many_versions(kb_copy, 6)
    app = make_app("agent")
    async with app.run_test(size=size) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+f", *"helmet", "enter")
        await wait_until(pilot, lambda: "Restoring v6" in flat(screen_text(app)))
        scroll = editor.query_one("#history-diff-scroll")
        options = editor.query_one("#history-options")
        assert on_screen(app, scroll) and on_screen(app, options)
        assert scroll.region.height >= 3  # A few lines of the diff, not its first words.
        shown = flat(screen_text(app, scroll))
        assert shown.startswith("Restoring v6 would change the text:") and "[-5.-]" in shown
        # A version is a line of its own (cut with …), so the list shows more than one.
        assert options.region.height >= 2
        assert all(f"v{n} " in screen_text(app, options) for n in (6, 5))
        # The rest of the diff is a Page Down away, on screen too.
        scroll.focus()
        await pilot.press("pagedown")
        await wait_until(pilot, lambda: scroll.scroll_y > 0)
        assert "[-5.-]{+4.+}" in flat(screen_text(app, scroll))


def message_whole_above_the_buttons(
    app: HelpDeskApp, editor: EditorScreen, form: PassageForm
) -> None:
    """The form's message is on screen, whole, and the buttons below it are too."""
    problem = editor.query_one("#form-problem")
    assert on_screen(app, problem)
    assert flat(screen_text(app, problem)) == flat(form.problem)
    for button in ("#form-save", "#form-new", "#form-delete"):
        assert on_screen(app, editor.query_one(button)), button
    # The buttons are below the message, not drawn over it.
    assert editor.query_one("#form-buttons").region.y >= problem.region.bottom
    # Nothing beside it: the character count read as part of the sentence ("was changed by
    # 164 / 4,000 someone else").
    count = editor.query_one("#form-count")
    assert not count.display or not count.region.overlaps(
        problem.region.expand((count.region.width + 2, 0))
    )


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "60x20"])
async def test_a_long_message_wraps_whole_above_the_buttons(
    make_app: MakeApp, size: tuple[int, int]
) -> None:
    """At 60x20 the slug message was cut after its second line and Save, New and Delete were
    pushed off the screen while it showed."""
    app = make_app("agent")
    async with app.run_test(size=size) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+n")
        await type_text(pilot, "Bad_ID")
        form = editor.query_one(PassageForm)
        await wait_until(pilot, lambda: "not a safe slug" in form.problem)
        await pilot.pause()
        message_whole_above_the_buttons(app, editor, form)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "60x20"])
async def test_a_refused_save_says_why_whole_above_the_buttons(
    make_app: MakeApp, kb_copy: Path, size: tuple[int, int]
) -> None:
    app = make_app("agent")
    async with app.run_test(size=size) as pilot:
        editor = await open_editor(pilot)
        form = editor.query_one(PassageForm)
        await wait_until(pilot, lambda: form.passage_id == "card-charged-twice")
        form.text_area.focus()
        await type_text(pilot, " Mine.")
        store = PassageStore(kb_copy)  # Someone else saves it meanwhile.
        seen = store.get("card-charged-twice")
        store.save(seen.passage.model_copy(update={"title": "Theirs"}), based_on=seen.revision)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "changed by someone else" in form.problem)
        await pilot.pause()
        message_whole_above_the_buttons(app, editor, form)


async def test_in_a_narrow_window_the_list_gives_way_to_the_text(make_app: MakeApp) -> None:
    """At 60 columns the list kept 29 and the text box showed lines of 24 characters."""
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        editor = await open_editor(pilot)
        assert editor.query_one("#passage-list").region.width == 30  # As it was.
        await pilot.resize_terminal(60, 20)
        await pilot.pause()
        await wait_until(pilot, lambda: editor.query_one("#passage-list").region.width < 30)
        text = editor.query_one("#form-text")
        assert text.content_region.width >= 30 and on_screen(app, text)
        # An id of the shipped knowledge base still fits its row.
        assert "card-charged-twice" in screen_text(app, editor.query_one("#passage-options"))


async def test_in_a_narrow_window_the_gap_question_keeps_the_room(
    make_app: MakeApp, other: DeskService
) -> None:
    """At 60 columns the question got 10 cells, behind a sideways scrollbar, while the date's
    time and the "agent replied" heading kept their full width."""
    long = "There were no free docks at the station so I kept riding. Will I pay a late fee?"
    # More than the table has rows for (it shows a scrollbar), the long one newest: shown first.
    questions = [*(f"Do you sell gift cards, {n}?" for n in range(6)), long]
    app = make_app("agent")
    async with app.run_test(size=(60, 20)) as pilot:
        asked = [other.ask(None, q).conversation.id for q in questions]
        await wait_until(pilot, lambda: all(other.conversation(c).pending == 0 for c in asked))
        editor = await open_editor(pilot)
        await pilot.press("ctrl+g")
        gaps = editor.query_one(GapList)
        await wait_until(pilot, lambda: len(gaps.gaps) == len(questions))
        table = gaps.query_one("#gap-table", DataTable)

        def rows() -> list[str]:
            return [line for line in screen_text(app, table).splitlines() if line.strip()]

        await wait_until(pilot, lambda: any("There were no free" in line for line in rows()))
        question = table.ordered_columns[-1]
        assert question.width >= QUESTION_COMFORT
        assert table.max_scroll_x == 0  # All of every row is on screen.
        header, *lines = rows()
        assert header.split() == ["when", "reason", "top", "replied", "question"]
        [docks] = [line for line in lines if "There were no free" in line]
        assert docks.endswith("…")
        assert max(len(line) for line in rows()) <= table.size.width
