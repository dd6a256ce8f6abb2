"""The knowledge-base editor: a restore's diff names the title and the
tags too; after a save conflict, Ctrl+S again saves over the other version (kept in History); the
footer offers only keys that act on the tab shown; the Synonyms tab takes the typing; empty states
say so; Try it names judgments only when some were made; an empty tag is said; the list and
History use a wide window."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, Input, OptionList, Static, TabbedContent, TextArea

from chatbot.config import Settings
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.editor import Confirm, EditorScreen
from tests.tui.conftest import Q1, MakeApp, editor_settings
from tests.tui.editor_follows_helpers import (
    open_editor,
    open_passage,
    problem,
    save_elsewhere,
    text,
)
from tests.tui.helpers import (
    flat,
    footer_line,
    footer_offers,
    screen_text,
    type_text,
    wait_until,
)

SMALL = (80, 24)
WIDE = (120, 40)
THEIRS = "Helmets are free at every station; theirs."


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


def diff_shown(editor: EditorScreen) -> str:
    app = editor.app
    assert isinstance(app, HelpDeskApp)
    return flat(screen_text(app, editor.query_one("#history-diff")))


# 1. History diffs name the title and the tags ---------------------------------------------------


@pytest.mark.parametrize("size", [SMALL, WIDE], ids=["80x24", "120x40"])
async def test_a_version_differing_in_its_tags_says_so(
    make_app: MakeApp, kb_copy: Path, size: tuple[int, int]
) -> None:
    """After `kb edit helmet --add-tag safety`, History said restoring v1 would change nothing,
    though it would take the tag away."""
    store = PassageStore(kb_copy)
    seen = store.get("helmet")
    tags = (*seen.passage.tags, "safety")
    store.save(seen.passage.model_copy(update={"tags": tags}), based_on=seen.revision)
    app = make_app("agent")
    async with app.run_test(size=size) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        await wait_until(pilot, lambda: "Restoring v1" in diff_shown(editor))
        shown = diff_shown(editor)
        assert "nothing" not in shown, shown
        assert "Restoring v1 would change the tags: equipment, [-safety-]" in shown, shown


async def test_a_version_differing_in_title_and_text_names_both(
    make_app: MakeApp, kb_copy: Path
) -> None:
    store = PassageStore(kb_copy)
    seen = store.get("helmet")
    changed = {"title": "Helmets and more", "text": "Helmets are free at every station."}
    store.save(seen.passage.model_copy(update=changed), based_on=seen.revision)
    app = make_app("agent")
    async with app.run_test(size=WIDE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        await wait_until(pilot, lambda: "Restoring v1" in diff_shown(editor))
        shown = diff_shown(editor)
        assert "Restoring v1 would change the text: Helmets are [-free at every station.-]" in (
            shown
        ), shown
        assert "It would also change the title: Helmets[- and more-]" in shown, shown
        assert "tags" not in shown  # Unchanged: not mentioned.


async def test_a_version_the_same_as_the_current_passage_says_nothing_changes(
    make_app: MakeApp, kb_copy: Path
) -> None:
    store = PassageStore(kb_copy)
    seen = store.get("helmet")
    saved = store.save(seen.passage.model_copy(update={"text": "Other."}), based_on=seen.revision)
    store.save(seen.passage, based_on=saved.revision)  # Back as it was: v1 says the same.
    app = make_app("agent")
    async with app.run_test(size=WIDE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        options = editor.history.query_one("#history-options")
        await wait_until(pilot, lambda: "v2" in screen_text(app, options))
        editor.history.query_one("#history-options", OptionList).highlighted = 1  # v1
        await wait_until(pilot, lambda: "Restoring v1" in diff_shown(editor))
        assert "would change nothing: it is the same as the current passage" in diff_shown(editor)


# 2. After a save conflict, Ctrl+S again saves over the other version --------------------------


def question(pilot: Pilot[None]) -> str:
    assert isinstance(pilot.app.screen, Confirm)
    return flat(str(pilot.app.screen.query_one("#confirm-text", Static).render()))


async def test_ctrl_s_again_after_a_conflict_saves_over_theirs_which_history_keeps(
    make_app: MakeApp, kb_copy: Path
) -> None:
    """The only ways out of a conflict (Reload, New) threw the editor's text away."""
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        editor.form.text_area.focus()
        await type_text(pilot, " Mine.")
        mine = text(editor)
        save_elsewhere(kb_copy, "helmet", THEIRS)
        await pilot.press("ctrl+s")  # Refused as before, saying how to go on.
        await pilot.pause()
        assert problem(editor).startswith(
            "passage 'helmet' was changed by someone else since you opened it"
        )
        assert "Ctrl+S saves yours over it" in flat(problem(editor))
        assert PassageStore(kb_copy).get("helmet").passage.text == THEIRS
        await pilot.press("ctrl+s")
        await pilot.pause()
        asked = question(pilot)
        assert "Replace their version of 'helmet' with yours?" in asked
        assert "Theirs stays in its history" in asked
        await pilot.press("tab", "enter")  # Its button: no letter answers it.
        await wait_until(pilot, lambda: not editor.form.dirty)
        store = PassageStore(kb_copy)
        assert store.get("helmet").passage.text == mine
        assert text(editor) == mine and problem(editor) == ""
        assert store.history("helmet")[-1].passage().text == THEIRS  # Restorable.
        rows = editor.query_one("#history-options")
        await wait_until(pilot, lambda: "v2" in screen_text(app, rows))


async def test_cancel_keeps_both_versions_and_the_typing(make_app: MakeApp, kb_copy: Path) -> None:
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        editor.form.text_area.focus()
        await type_text(pilot, " Mine.")
        save_elsewhere(kb_copy, "helmet", THEIRS)
        # Noticed by the app before any save: Ctrl+S asks at once.
        await wait_until(pilot, lambda: "meanwhile" in problem(editor), timeout=15)
        assert "Ctrl+S saves yours over it" in flat(problem(editor))
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "Replace their version" in question(pilot)
        await pilot.press("escape")
        await pilot.pause()
        assert PassageStore(kb_copy).get("helmet").passage.text == THEIRS
        assert text(editor).endswith(" Mine.") and editor.form.dirty


async def test_a_passage_deleted_meanwhile_is_saved_again_after_asking(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        editor.form.text_area.focus()
        await type_text(pilot, " Mine.")
        mine = text(editor)
        PassageStore(kb_copy).delete("helmet")
        await wait_until(pilot, lambda: "deleted by someone else meanwhile" in problem(editor),
                         timeout=15)  # fmt: skip
        assert "Ctrl+S saves yours as it again" in flat(problem(editor))
        await pilot.press("ctrl+s")
        await pilot.pause()
        asked = question(pilot)
        assert "was deleted by someone else. Save yours as 'helmet' again?" in asked
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: PassageStore(kb_copy).exists("helmet"))
        assert PassageStore(kb_copy).get("helmet").passage.text == mine
        assert not editor.form.deleted and not editor.form.dirty


# 4. The Synonyms tab takes the typing; an unchanged save says so -------------------------------


def notes(pilot: Pilot[None], words: str) -> int:
    return sum(words in str(n.message) for n in pilot.app._notifications)


@pytest.mark.parametrize("size", [SMALL, WIDE], ids=["80x24", "120x40"])
async def test_the_synonyms_box_takes_the_typing_and_an_unchanged_save_says_so(
    make_app: MakeApp, kb_copy: Path, size: tuple[int, int]
) -> None:
    """Typing went into the first group's line; Enter on Save, with nothing changed, said "Saved
    5 synonym groups." each time."""
    (kb_copy / "synonyms.toml").write_text('helmet = "headgear"\nbike = "bicycle"\n')
    app = make_app("agent")
    async with app.run_test(size=size, notifications=True) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause()
        box = editor.query_one("#synonyms-text", TextArea)
        assert editor.focused is box
        await type_text(pilot, "dock = rack")
        assert box.text == "helmet = headgear\nbike = bicycle\ndock = rack"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: notes(pilot, "Saved 3 synonym groups.") == 1)
        await pilot.press("ctrl+s")  # Nothing changed since.
        await wait_until(pilot, lambda: notes(pilot, "Nothing to save") == 1)
        editor.query_one("#synonyms-save").focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: notes(pilot, "Nothing to save") == 2)
        assert notes(pilot, "Saved") == 1


async def test_a_click_on_the_synonyms_tab_leaves_the_tab_strip_to_its_arrows(
    make_app: MakeApp,
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        await pilot.click("#--content-tab-synonyms")
        await wait_until(pilot, lambda: bool(editor.query("#synonyms-text")))
        assert editor.query_one(TabbedContent).active == "synonyms"
        await pilot.press("tab")  # From the tab strip, the next stop is the box.
        assert editor.focused is editor.query_one("#synonyms-text")


# 3. The footer offers the keys that act on the tab shown -----------------------------------------


async def test_each_tab_offers_only_its_own_keys_and_back_keeps_its_place(
    make_app: MakeApp, kb_copy: Path
) -> None:
    """Save, New and Delete were offered on Try it, the gaps and the synonyms (F8 doing nothing
    there), and after a conflict Reload pushed Back out of an 80-column footer."""
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: editor.query_one(TabbedContent).active == "try")
        line = await footer_line(pilot)
        for absent in ("Save", "New", "Delete", "Try it", "Reload"):
            assert absent not in line, line
        assert "^f Passages" in line and "esc Back" in line, line
        await pilot.press("ctrl+g")
        line = await footer_line(pilot)
        assert "Gaps" not in line and "Save" not in line and "esc Back" in line, line
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: editor.query_one(TabbedContent).active == "synonyms")
        line = await footer_line(pilot)
        assert "^s Save" in line and "New" not in line and "Delete" not in line, line
        await pilot.press("ctrl+f")  # Back to the passages...
        await wait_until(pilot, lambda: editor.query_one(TabbedContent).active == "passages")
        line = await footer_line(pilot)
        assert "Passages" not in line and "^n New" in line and "f8 Delete" in line, line
        await pilot.press("ctrl+f")  # ...where it searches, as before.
        await pilot.pause()
        assert editor.focused is editor.query_one("#passage-search")

        await open_passage(pilot, "helmet")
        editor.form.text_area.focus()
        await type_text(pilot, " Mine.")
        save_elsewhere(kb_copy, "helmet", THEIRS)
        await pilot.press("ctrl+s")  # Refused: Reload is offered, and Back stays.
        await pilot.pause()
        await wait_until(pilot, lambda: footer_offers(app, "reload"))
        line = await footer_line(pilot)
        assert "^r Reload" in line and "esc Back" in line and "Delete" not in line, line


# 5. Empty states say so ----------------------------------------------------------------------


async def test_a_search_with_no_match_says_so_and_enter_opens_nothing(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        options = editor.query_one("#passage-options")
        await pilot.press("ctrl+f", *"zzqx")
        await wait_until(pilot, lambda: "No passage matches" in flat(screen_text(app, options)))
        opened = editor.form.passage_id
        await pilot.press("enter")
        await pilot.pause()
        assert editor.form.passage_id == opened and app.screen is editor


async def test_no_gaps_is_said_under_the_headings(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: bool(editor.query("#gap-reply")))
        reply, table = editor.query_one("#gap-reply"), editor.query_one("#gap-table")
        await wait_until(pilot, lambda: "No open content gaps." in screen_text(app, reply))
        # Next to the headings, not at the foot of an empty table.
        assert reply.region.y - table.region.y <= 3, (reply.region, table.region)


async def test_try_it_without_a_question_clears_the_last_results(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: bool(editor.query("#try-question")))
        await type_text(pilot, "charged twice")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "card-charged-twice" in screen_text(app))
        question = editor.query_one("#try-question", Input)
        question.value = ""
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Type a question first." in screen_text(app))
        shown = screen_text(app)
        assert "BM25" not in shown and "card-charged-twice" not in shown, shown


# 6. Try it speaks of judgments only when some were made --------------------------------------


async def test_try_it_names_no_judgments_when_none_were_made(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=WIDE) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: bool(editor.query("#try-question")))
        decision = editor.query_one("#try-decision")
        await type_text(pilot, "zorbing quux")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "no-passages" in screen_text(app, decision))
        assert "judgments" not in flat(screen_text(app, decision))
        question = editor.query_one("#try-question", Input)
        question.value = Q1
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Answered" in screen_text(app, decision))
        assert "judgments replayed from recorded answers" in flat(screen_text(app, decision))


# 7. An empty tag is said ---------------------------------------------------------------------


async def test_an_empty_tag_is_said_and_not_saved(make_app: MakeApp, kb_copy: Path) -> None:
    """`rides, , night` was saved as two tags, where `helpdesk kb` refuses `--tag ""`."""
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        tags = editor.query_one("#form-tags", Input)
        tags.focus()
        tags.value = "rides, , night"
        await wait_until(pilot, lambda: "a tag is empty" in problem(editor))
        assert editor.query_one("#form-save", Button).disabled
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert PassageStore(kb_copy).get("helmet").passage.tags == ("equipment",)
        tags.value = "rides, night"
        await wait_until(pilot, lambda: problem(editor) == "")


# 8. A wide window widens the list; History has more room -------------------------------------


async def test_at_120_columns_the_list_shows_whole_titles(make_app: MakeApp) -> None:
    """The list stayed 27 columns wide: "Charged twice for one r…"."""
    app = make_app("agent")
    async with app.run_test(size=WIDE) as pilot:
        editor = await open_editor(pilot)
        options = editor.query_one("#passage-options")
        await wait_until(pilot, lambda: "card-charged-twice" in screen_text(app, options))
        assert "Charged twice for one ride" in screen_text(app, options)


async def test_at_80x24_history_shows_more_of_the_diff(make_app: MakeApp, kb_copy: Path) -> None:
    store = PassageStore(kb_copy)
    for extra in range(3):
        seen = store.get("helmet")
        longer = seen.passage.text + f" Extra {extra}."
        store.save(seen.passage.model_copy(update={"text": longer}), based_on=seen.revision)
    app = make_app("agent")
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        await wait_until(pilot, lambda: "Restoring v3" in diff_shown(editor))
        scroll = editor.query_one("#history-diff-scroll")
        options = editor.query_one("#history-options")
        assert scroll.region.height >= 4 and options.region.height >= 2
        for selector in ("#form-save", "#form-new", "#form-delete", "#history-restore"):
            assert app.screen.region.contains_region(editor.query_one(selector).region)
