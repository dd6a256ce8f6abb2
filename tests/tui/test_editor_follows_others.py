"""The editor and someone else's change to the open passage, deleted passages in the list,
the Restore question for a deleted passage, a long title at 80 columns, and a one-word change in a
long repetitive passage."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Static

from chatbot.config import Settings
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui.screens.editor import Confirm
from chatbot.tui.widgets.passage_history import word_diff
from tests.tui.conftest import SIZE, MakeApp, editor_settings
from tests.tui.editor_follows_helpers import (
    open_editor,
    open_passage,
    problem,
    save_elsewhere,
    text,
)
from tests.tui.helpers import flat, footer_offers, screen_text, type_text, wait_until

THEIRS = "Helmets are free at every station; theirs."


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


def notified(pilot: Pilot[None], words: str) -> bool:
    return any(words in str(n.message) for n in pilot.app._notifications)


async def test_a_form_without_changes_follows_someone_elses_save(
    make_app: MakeApp, kb_copy: Path
) -> None:
    """The form kept the old text for ever while History compared with the new one."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        assert text(editor).startswith("Helmets are not included")
        save_elsewhere(kb_copy, "helmet", THEIRS)
        await wait_until(pilot, lambda: text(editor) == THEIRS, timeout=15)
        assert not editor.form.dirty
        await wait_until(pilot, lambda: notified(pilot, "helmet was changed by someone else"))
        # History agrees with the form: restoring v1 would replace their text.
        diff = editor.query_one("#history-diff")
        await wait_until(pilot, lambda: "[-free at every station; theirs.-]" in flat(
            screen_text(app, diff)))  # fmt: skip
        # A save from the form now is based on their version, not refused as a conflict.
        editor.form.text_area.focus()
        await type_text(pilot, " Mine.")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert PassageStore(kb_copy).get("helmet").passage.text == THEIRS + " Mine."


async def test_unsaved_changes_stay_and_the_form_says_the_passage_changed(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        editor.form.text_area.focus()
        await type_text(pilot, " Mine.")
        assert editor.form.dirty
        assert not footer_offers(app, "reload")  # Offered only when it applies.
        save_elsewhere(kb_copy, "helmet", THEIRS)
        await wait_until(pilot, lambda: "changed by someone else meanwhile" in problem(editor),
                         timeout=15)  # fmt: skip
        assert text(editor).endswith(" Mine.")  # The typing stays.
        # It stays said as the editor types on, not only until the next key.
        await type_text(pilot, "!")
        assert "changed by someone else meanwhile" in problem(editor)
        await wait_until(pilot, lambda: footer_offers(app, "reload"))
        # Ctrl+R shows their version, after asking before the typing goes.
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        await pilot.press("tab", "enter")
        await pilot.pause()
        assert text(editor) == THEIRS and not editor.form.dirty
        assert problem(editor) == ""
        await wait_until(pilot, lambda: not footer_offers(app, "reload"))


async def test_an_open_passage_deleted_or_restored_elsewhere_is_shown_as_it_is(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        PassageStore(kb_copy).delete("helmet")
        await wait_until(pilot, lambda: editor.form.deleted, timeout=15)
        await wait_until(pilot, lambda: notified(pilot, "helmet was deleted by someone else"))
        assert text(editor).startswith("Helmets are not included")  # What it last said.
        PassageStore(kb_copy).restore("helmet")
        await wait_until(pilot, lambda: not editor.form.deleted, timeout=15)
        await wait_until(pilot, lambda: notified(pilot, "helmet was restored by someone else"))
        assert editor.form.revision == PassageStore(kb_copy).get("helmet").revision


async def test_a_save_refused_as_a_conflict_offers_their_version(
    make_app: MakeApp, kb_copy: Path
) -> None:
    """Saved before the app noticed the other change: the refusal keeps the typing and Ctrl+R
    shows the other version."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        editor.form.text_area.focus()
        await type_text(pilot, " Mine.")
        save_elsewhere(kb_copy, "helmet", THEIRS)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert problem(editor).startswith(
            "passage 'helmet' was changed by someone else since you opened it: Ctrl+R"
        )
        assert footer_offers(app, "reload")
        assert text(editor).endswith(" Mine.")
        # The app then notices the same change: the refusal stays said, not replaced.
        rows = editor.query_one("#history-options")
        await wait_until(pilot, lambda: "replaced by edit" in flat(screen_text(app, rows)),
                         timeout=15)  # fmt: skip
        await pilot.pause()
        assert problem(editor).startswith("passage 'helmet' was changed by someone else since")
        assert not notified(pilot, "meanwhile")
        await type_text(pilot, "!")  # Typing on, it says what Ctrl+R does.
        assert "Ctrl+R shows it as it is now" in problem(editor)


async def test_a_deleted_passage_is_found_by_its_title_and_shown_with_it(
    make_app: MakeApp, kb_copy: Path
) -> None:
    """After `kb rm`, searching its title found nothing, and its row had no title."""
    PassageStore(kb_copy).delete("station-full")
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        options = editor.query_one("#passage-options", OptionList)
        search = editor.query_one("#passage-search", Input)
        search.focus()
        await type_text(pilot, "Return station is full")
        rows = flat(screen_text(app, options))
        assert "station-full (deleted) Return station is full" in rows, rows
        options.highlighted = options.get_option_index("deleted:station-full")
        options.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert editor.form.deleted and editor.form.passage_id == "station-full"
        # Found by its last text too.
        search.value = "docks station full"
        await pilot.pause()
        assert "station-full (deleted)" in flat(screen_text(app, options))


async def test_restoring_a_deleted_passage_does_not_speak_of_its_current_text(
    make_app: MakeApp, kb_copy: Path
) -> None:
    """The question said "The current text is kept in its history": a deleted one has none."""
    PassageStore(kb_copy).delete("station-full")
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "station-full")
        assert editor.form.deleted and editor.form.passage_id == "station-full"
        await pilot.click("#history-restore")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        question = flat(str(app.screen.query_one("#confirm-text", Static).render()))
        assert "current text" not in question
        assert "comes back with that version's text" in question


async def test_a_long_title_opens_at_its_start_at_80_columns(
    make_app: MakeApp, kb_copy: Path
) -> None:
    title = "[bold]Bold[/bold] claims about helmets, and a title far longer than its field is"
    store = PassageStore(kb_copy)
    seen = store.get("helmet")
    store.save(seen.passage.model_copy(update={"title": title}), based_on=seen.revision)
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        field = editor.query_one("#form-title", Input)
        assert field.value == title
        shown = screen_text(app, field)
        assert shown.startswith("[bold]Bold[/bold] claims"), shown


def test_a_one_word_change_in_a_long_repetitive_passage_is_one_word_in_the_diff() -> None:
    sentence = "Report a stolen bike at once. "
    current = (sentence * 200)[:3666]
    at = current.index("stolen", 519)
    version = current[:at] + "STOLEN-OR-LOST" + current[at + len("stolen") :]
    for old, new in ((current, version), (version, current)):
        shown = word_diff(old, new).plain
        assert len(shown) < 200, len(shown)
        removed, added = ("stolen", "STOLEN-OR-LOST") if old is current else (
            "STOLEN-OR-LOST", "stolen")  # fmt: skip
        assert f"[-{removed}-]{{+{added}+}}" in shown, shown


async def test_unsaved_changes_to_a_passage_deleted_elsewhere_stay_and_it_is_said(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        editor.form.text_area.focus()
        await type_text(pilot, " Mine.")
        PassageStore(kb_copy).delete("helmet")
        await wait_until(pilot, lambda: "deleted by someone else meanwhile" in problem(editor),
                         timeout=15)  # fmt: skip
        assert text(editor).endswith(" Mine.") and not editor.form.deleted
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        await pilot.press("tab", "enter")
        await pilot.pause()
        assert editor.form.deleted and text(editor).startswith("Helmets are not included")


async def test_a_long_deleted_id_gives_way_to_its_mark_on_one_line(
    make_app: MakeApp, kb_copy: Path
) -> None:
    """A long id deleted put its mark on a line of its own (in Chinese, "（已" at the end of
    one and "删除）" on the next, once Chinese broke between characters): the id is cut with …
    and the mark stays whole beside it."""
    PassageStore(kb_copy).delete("card-charged-twice")
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        editor = await open_editor(pilot)
        options = editor.query_one("#passage-options", OptionList)
        editor.query_one("#passage-search", Input).focus()
        await type_text(pilot, "card-charged")
        await wait_until(pilot, lambda: "(deleted)" in screen_text(app, options))
        lines = [line.strip(" ▊▎") for line in screen_text(app, options).splitlines()]
        marked = next(line for line in lines if "(deleted)" in line)
        assert marked.startswith("card-charged") and marked.endswith("  (deleted)"), lines
        assert "…" in marked, lines  # 30 cells; the row had fewer.
