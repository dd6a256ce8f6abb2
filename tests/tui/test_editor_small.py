"""The editor at 80x24, and the small things a person meets first: the list after a search, where
the cursor starts, spaces around the text, restoring with Enter, the diff, the palette."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Button, Input, OptionList, TextArea

from chatbot.config import Settings
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.editor import Confirm, EditorScreen
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor
from tests.tui.helpers import (
    flat,
    footer_current,
    footer_line,
    footer_offers,
    palette_ready,
    screen_text,
    steady,
    type_text,
    wait_until,
)

SMALL = (80, 24)


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


def fully_visible(app: HelpDeskApp, widget: Widget) -> bool:
    """The widget is laid out whole inside the terminal, not clipped or scrolled away."""
    region = widget.region
    return bool(region.height and region.width) and app.screen.region.contains_region(region)


async def test_at_80x24_save_new_delete_and_the_problem_line_are_on_screen(
    make_app: MakeApp,
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        for selector in ["#form-save", "#form-new", "#form-delete", "#form-text", "#form-id",
                         "#history-options", "#passage-options"]:  # fmt: skip
            assert fully_visible(app, editor.query_one(selector)), selector
        await pilot.press("ctrl+n")
        await type_text(pilot, "Bad Id")
        await pilot.press("ctrl+s")
        await pilot.pause()
        problem = editor.query_one("#form-problem")
        assert fully_visible(app, problem)
        assert "not a safe slug" in flat(screen_text(app, problem))
        assert editor.query_one("#form-save", Button).disabled


def test_the_editor_at_80x24(snap_compare: object, settings: Settings) -> None:
    from chatbot.tui import create_app
    from tests.tui.conftest import FrozenClock

    async def run_before(pilot: Pilot[None]) -> None:
        assert isinstance(pilot.app, HelpDeskApp)
        app = pilot.app
        await pilot.pause()
        await pilot.press("f2")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("ctrl+n")
        await type_text(pilot, "con")  # A Windows device name: refused, and the line says why.
        await pilot.press("ctrl+s")
        problem = app.screen.query_one("#form-problem")
        await wait_until(pilot, lambda: "device name" in flat(screen_text(app, problem)))
        await steady(pilot)

    app = create_app(settings, mode="agent", clock=FrozenClock(), agent="ana", timings=False)
    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)  # type: ignore[operator]


async def test_after_a_search_tab_then_enter_opens_the_first_match(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+f", *"refund")
        await pilot.pause()
        await pilot.press("tab")
        assert isinstance(app.focused, OptionList) and app.focused.id == "passage-options"
        await pilot.press("enter")
        await pilot.pause()
        assert editor.query_one("#form-id", Input).value == "refund-request"


async def test_letters_typed_on_the_list_go_to_its_search(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        search = editor.query_one("#passage-search", Input)
        await pilot.press("ctrl+f", *"refund", "tab")
        assert app.focused is editor.query_one("#passage-options")
        # Key by key, each handled before the next: the search takes them after what it held,
        # though the box selects its text when it takes the focus.
        await pilot.press(*"-ti")
        assert app.focused is search
        assert search.value == "refund-ti"
        # A burst, as a fast typist's keys (or a browser's chunk) come: all of them arrive while
        # the list still has the focus, before it has handled the first.
        await pilot.press("tab")
        assert app.focused is editor.query_one("#passage-options")
        for character in "me":
            app.post_message(events.Key(character, character))
        await wait_until(pilot, lambda: search.value == "refund-time")
        assert app.focused is search
        await pilot.press("enter")
        await pilot.pause()
        assert editor.query_one("#form-id", Input).value == "refund-time"


async def test_an_empty_history_is_no_tab_stop(make_app: MakeApp, kb_copy: Path) -> None:
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        assert "no earlier versions" in flat(screen_text(app, editor.query_one("#history-options")))
        editor.query_one("#form-delete").focus()
        await pilot.pause()
        # Past the empty list and the empty diff beside it, where typed keys were lost.
        await pilot.press("tab")
        history = editor.query_one("#passage-history")
        assert app.focused is not None and history not in (app.focused, *app.focused.ancestors)
        # A passage with an earlier version: its history's Restore, list and diff are stops again.
        await edited_helmet(pilot, kb_copy)
        editor.query_one("#form-delete").focus()
        await pilot.pause()
        await pilot.press("tab")
        assert app.focused is editor.query_one("#history-restore")
        await pilot.press("tab")
        assert app.focused is editor.query_one("#history-options")
        await pilot.press("tab")
        assert app.focused is editor.query_one("#history-diff-scroll")


async def test_the_text_cursor_starts_at_the_end(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        text = editor.query_one("#form-text", TextArea)
        # The editor opens on the list (typing there searches); Enter opens its passage to write.
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.focused is text)
        assert text.cursor_location == text.document.end
        await type_text(pilot, " Ok.")
        assert text.text.endswith("never collected. Ok.")


async def test_spaces_around_title_and_text_are_not_saved(make_app: MakeApp, kb_copy: Path) -> None:
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+n", *"spaced")
        editor.query_one("#form-title", Input).focus()
        app.post_message(events.Paste("   Spaced out   "))
        await pilot.pause()
        editor.query_one("#form-text", TextArea).focus()
        app.post_message(events.Paste("\n\n   Some text.   \n  "))
        await pilot.pause()
        assert editor.query_one("#form-count").render().plain == "10 / 4,000"  # type: ignore[union-attr]
        await pilot.press("ctrl+s")
        await app.workers.wait_for_complete()
    saved = json.loads((kb_copy / "spaced.json").read_text(encoding="utf-8"))
    assert (saved["title"], saved["text"]) == ("Spaced out", "Some text.")


async def edited_helmet(pilot: Pilot[None], kb_copy: Path) -> EditorScreen:
    store = PassageStore(kb_copy)
    seen = store.get("helmet")
    store.save(seen.passage.model_copy(update={"text": "Helmets are free at every station."}),
               based_on=seen.revision)  # fmt: skip
    editor = await open_editor(pilot)
    await pilot.press("ctrl+f", *"helmet", "enter")
    await pilot.pause()
    return editor


async def test_enter_on_a_history_row_asks_before_restoring(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await edited_helmet(pilot, kb_copy)
        editor.query_one("#history-options").focus()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        assert "Restore version 1 of helmet?" in str(app.screen.question)
        line = await footer_line(pilot)  # The dialog's keys, not the editor's beneath it.
        # Escape cancels; no letter answers it (its button, reached by Tab, restores).
        assert "esc Cancel" in line and "y " not in line and "Save" not in line, line
        await pilot.press("escape")
        await pilot.pause()
        assert PassageStore(kb_copy).get("helmet").passage.text.startswith("Helmets are free")
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("tab", "enter")
        await app.workers.wait_for_complete()
        assert PassageStore(kb_copy).get("helmet").passage.text.startswith("Helmets are not")


async def test_a_version_is_shown_as_a_diff_against_the_current_text(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("agent")
    async with app.run_test(size=(120, 36)) as pilot:
        editor = await edited_helmet(pilot, kb_copy)
        diff = flat(screen_text(app, editor.query_one("#history-diff")))
        assert "Restoring v1 would change the text:" in diff
        assert "[-free at every station.-]" in diff
        assert "{+not included with standard bikes." in diff


async def test_restore_is_in_the_command_palette(make_app: MakeApp, kb_copy: Path) -> None:
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        await edited_helmet(pilot, kb_copy)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await type_text(pilot, "restore version")
        await palette_ready(pilot, "restore version")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        await pilot.press("tab", "enter")
        await app.workers.wait_for_complete()
        assert PassageStore(kb_copy).get("helmet").passage.text.startswith("Helmets are not")


async def test_the_footer_greys_save_and_delete_as_their_buttons_are(make_app: MakeApp) -> None:
    """On a deleted passage, and for F8 on a new one, the footer showed `^s Save` and `f8 Delete`
    at full brightness while the buttons were greyed; the keys did nothing and said nothing."""
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        save, delete = editor.query_one("#form-save", Button), editor.query_one("#form-delete")

        def agree() -> bool:
            return (footer_offers(app, "save"), footer_offers(app, "delete")) == (
                not save.disabled,
                not delete.disabled,
            )

        await footer_current(pilot)
        assert footer_offers(app, "save") and footer_offers(app, "delete") and agree()

        await pilot.press("f8")  # Delete the open passage: it stays open, read-only.
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: editor.form.deleted)
        await footer_current(pilot)
        assert save.disabled and delete.disabled
        assert not footer_offers(app, "save") and not footer_offers(app, "delete")

        await pilot.press("ctrl+n")  # A new passage: nothing to delete, no id to save under.
        await wait_until(pilot, lambda: not editor.form.deleted)
        await footer_current(pilot)
        assert not footer_offers(app, "delete") and not footer_offers(app, "save") and agree()
        await pilot.press("f8")
        await pilot.pause()
        assert app.screen is editor  # F8 asked nothing.

        await type_text(pilot, "fresh")
        editor.query_one("#form-text").focus()
        await type_text(pilot, "Fresh text.")
        await footer_current(pilot)
        assert footer_offers(app, "save") and not footer_offers(app, "delete") and agree()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not editor.form.is_new)
        await footer_current(pilot)
        assert footer_offers(app, "save") and footer_offers(app, "delete") and agree()


async def test_ctrl_s_is_greyed_on_the_synonyms_tab_while_a_line_is_bad(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+n")  # An empty passage, which cannot be saved...
        await pilot.press("ctrl+o")
        await footer_current(pilot)
        assert footer_offers(app, "save")  # ...but Ctrl+S saves the synonyms here.
        await type_text(pilot, "bike")  # One word: not a group.
        await wait_until(pilot, lambda: bool(editor.synonyms.problems))
        await footer_current(pilot)
        assert not footer_offers(app, "save")
        await type_text(pilot, " = bicycle")
        await wait_until(pilot, lambda: not editor.synonyms.problems)
        await footer_current(pilot)
        assert footer_offers(app, "save")


def list_rows(app: HelpDeskApp, options: OptionList) -> list[str]:
    """The passage list's rows as drawn, without its scrollbar."""
    region = options.scrollable_content_region
    lines = screen_text(app).splitlines()
    return [lines[y][region.x : region.right].strip() for y in range(region.y, region.bottom)]


async def test_a_title_too_long_for_the_list_is_cut_with_an_ellipsis(
    make_app: MakeApp, kb_copy: Path
) -> None:
    """With the list's scrollbar showing (80x24), `Reporting a damaged bike` was drawn as
    `Reporting a damaged`, and after scrolling `bike` showed as a row of its own."""
    titles = {p.id: p.title for p in PassageStore(kb_copy).passages()}
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        options = editor.query_one("#passage-options", OptionList)
        assert options.show_vertical_scrollbar

        def shows(title: str, whole: str) -> bool:
            return title == whole or (title.endswith("…") and whole.startswith(title[:-1]))

        def pairs_whole() -> bool:
            """Every row is an id followed by its title on one line, whole or cut with …"""
            rows = [row for row in list_rows(app, options) if row]
            if rows and any(shows(rows[0], whole) for whole in titles.values()):
                rows = rows[1:]  # Scrolled to a row's second line.
            for passage_id, title in zip(rows[::2], rows[1::2], strict=False):
                if passage_id not in titles or not shows(title, titles[passage_id]):
                    raise AssertionError(f"{passage_id!r} shown with {title!r}: {rows}")
            return True

        assert pairs_whole()
        rows = list_rows(app, options)
        assert rows[rows.index("damage-report") + 1] == "Reporting a damaged bike"
        cut = rows[rows.index("card-charged-twice") + 1]
        assert cut.startswith("Charged twice for one") and cut.endswith("…")
        options.focus()
        await pilot.press("end")
        await wait_until(pilot, lambda: "Student pass" in list_rows(app, options))
        assert pairs_whole()
        await pilot.press("home")
        await wait_until(pilot, lambda: "card-charged-twice" in list_rows(app, options))
        assert pairs_whole()
