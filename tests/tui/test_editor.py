"""The knowledge-base editor, driven with Pilot: add, edit, delete, restore, Try it, content gaps,
and the next customer question using a passage saved a moment before."""

from __future__ import annotations

import json
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Button, DataTable, Input, Static, TabbedContent, TextArea

from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from chatbot.engine.models import Candidate, Decision, Reason
from chatbot.knowledge_base import Passage, load_knowledge_base
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.editor import Confirm, EditorScreen
from chatbot.tui.widgets.gap_list import GapList
from chatbot.tui.widgets.passage_form import PassageForm
from chatbot.tui.widgets.passage_list import MAX_ROWS, PassageList
from chatbot.tui.widgets.try_it import TryItPanel
from tests.tui.conftest import Q1, SIZE, MakeApp
from tests.tui.editor_helpers import (
    open_editor,
    open_passage,
    problem,
    settings,
    settle,
    try_question,
    type_into,
)
from tests.tui.helpers import (
    engine_ready,
    flat,
    footer_current,
    palette_ready,
    screen_text,
    type_text,
    wait_until,
)

__all__ = ["settings"]  # A fixture.

LOST = "Where do lost and found items left in a bike basket go?"
LOST_TEXT = "Items left in a bike basket go to our lost and found office and are kept for 30 days."


async def test_add_a_passage_and_the_next_question_uses_it(
    make_app: MakeApp, kb_copy: Path, other: DeskService
) -> None:
    app = make_app("all")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+n")
        await type_into(pilot, "#form-id", "lost-and-found")
        await type_into(pilot, "#form-title", "Lost and found")
        await type_into(pilot, "#form-text", LOST_TEXT)
        assert problem(editor) == ""
        await pilot.press("ctrl+s")
        await settle(pilot)

        saved = json.loads((kb_copy / "lost-and-found.json").read_text(encoding="utf-8"))
        assert saved == {"id": "lost-and-found", "title": "Lost and found", "tags": [],
                         "text": LOST_TEXT}  # fmt: skip
        assert len(app.services.engine.passages) == 11

        # Back in the customer chat, with no restart: the very next question retrieves it.
        await pilot.press("escape")
        await pilot.pause()
        await type_into(pilot, "#question", LOST)
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(other.decisions(1)), timeout=5)
        [judged] = other.decisions(1)  # By the app's bot, on the engine rebuilt after the save.
        assert judged.decision.candidates[0].id == "lost-and-found"


async def test_edit_a_passage(make_app: MakeApp, kb_copy: Path) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        assert editor.query_one("#form-id", Input).value == "helmet"
        assert editor.query_one("#form-id", Input).disabled  # A stored passage's id is fixed.
        await type_into(pilot, "#form-text", "Helmets are free at every station.")
        await pilot.press("ctrl+s")
        await settle(pilot)

        store = PassageStore(kb_copy)
        assert store.get("helmet").passage.text == "Helmets are free at every station."
        [version] = store.history("helmet")
        assert version.passage().text.startswith("Helmets are not included")
        [hit] = [r for r in app.services.engine.retrieve("free helmets station")
                 if r.passage.id == "helmet"]  # fmt: skip
        assert hit.passage.text == "Helmets are free at every station."


async def test_delete_asks_first_and_can_be_undone_from_history(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await type_into(pilot, "#passage-search", "damage fee")
        await pilot.press("enter")
        await pilot.press("f8")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        await pilot.press("escape")  # Cancel: nothing happens.
        await pilot.pause()
        assert (kb_copy / "damage-fee.json").exists()

        await pilot.press("f8")
        await pilot.pause()
        await pilot.click("#confirm-yes")
        await settle(pilot)
        assert not (kb_copy / "damage-fee.json").exists()
        assert "damage-fee" not in {p.id for p in app.services.engine.passages}

        # The deleted passage is still listed; its history restores it.
        assert app.screen_stack[-1] is editor
        await open_passage(pilot, "damage-fee")
        # It opens showing what it last said, read-only, not as a blank form.
        assert editor.query_one("#form-id", Input).value == "damage-fee"
        assert editor.query_one("#form-text", TextArea).text.startswith("Damage fees")
        assert editor.query_one("#form-text", TextArea).read_only
        assert editor.query_one("#form-save", Button).disabled
        assert "is deleted" in problem(editor)
        await pilot.click("#history-restore")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)  # Restoring asks first.
        await pilot.press("tab", "enter")  # Its button: no letter answers a confirmation.
        await settle(pilot)
        assert (kb_copy / "damage-fee.json").exists()
        assert "damage-fee" in {p.id for p in app.services.engine.passages}
        assert editor.query_one("#form-id", Input).value == "damage-fee"


async def test_restore_an_earlier_version(make_app: MakeApp, kb_copy: Path) -> None:
    store = PassageStore(kb_copy)
    original = store.get("student-pass")
    store.save(original.passage.model_copy(update={"text": "Students ride free."}),
               based_on=original.revision)  # fmt: skip
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "student")
        assert editor.query_one("#form-text", TextArea).text == "Students ride free."
        await pilot.click("#history-restore")  # The newest earlier version is highlighted.
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        await pilot.press("tab", "enter")
        await settle(pilot)
        assert store.get("student-pass").passage == original.passage
        assert editor.query_one("#form-text", TextArea).text == original.passage.text
        assert [v.reason for v in store.history("student-pass")] == ["edit", "restore"]


async def test_leaving_unsaved_changes_asks_first(make_app: MakeApp, kb_copy: Path) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await type_into(pilot, "#form-text", "Unsaved words.")
        await open_passage(pilot, "helmet")
        assert isinstance(app.screen, Confirm)
        await pilot.press("escape")  # Keep editing: the form still holds the words.
        await pilot.pause()
        assert editor.query_one("#form-id", Input).value == "card-charged-twice"
        assert editor.query_one("#form-text", TextArea).text == "Unsaved words."

        await pilot.press("escape")  # Leaving the editor asks too; this time, discard.
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        # No letter answers it (the `y` of a word typed on discarded): Escape cancels, and the
        # Discard button, reached by Tab, discards.
        await footer_current(pilot)
        footer = screen_text(app).splitlines()[-1]
        assert "esc Cancel" in footer and "y " not in footer, footer
        await pilot.press("tab", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, EditorScreen | Confirm)
    assert "Unsaved words." not in (kb_copy / "card-charged-twice.json").read_text()


async def test_try_it_shows_scores_judgments_and_the_decision(make_app: MakeApp) -> None:
    app = make_app("agent")
    answered: list[Decision] = []
    async with app.run_test(size=SIZE, message_hook=lambda m: answered.append(m.decision)
                            if isinstance(m, TryItPanel.Answered) else None) as pilot:  # fmt: skip
        editor = await open_editor(pilot)
        await try_question(pilot, Q1)
        # The hook sees the message at every node it bubbles through: one decision, many sightings.
        [decision] = {id(d): d for d in answered}.values()
        assert decision.answer is not None and decision.answer.id == "card-charged-twice"
        line = str(editor.query_one("#try-decision", Static).render())
        assert "Answered from card-charged-twice" in line and "replayed" in line
        table = editor.query_one("#try-candidates")
        rows = [table.get_row_at(i) for i in range(table.row_count)]  # type: ignore[attr-defined]
        top = next(r for r in rows if str(r[0]) == "card-charged-twice")
        assert top[2] == "0.899" and str(top[3]) == "can answer"
        assert float(top[1]) > 0  # The BM25 score.
        assert any(str(r[3]).startswith("not judged") for r in rows)  # A replay miss.


async def test_save_and_delete_are_offered_only_where_they_apply(make_app: MakeApp) -> None:
    """F8 on Try it asked to delete the passage last opened on the other tab, and a deleted
    passage offered Save and Delete again."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        form = editor.query_one(PassageForm)
        await wait_until(pilot, lambda: form.passage_id == "card-charged-twice")
        assert editor.check_action("delete", ()) is True
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: editor.query_one(TabbedContent).active == "try")
        assert editor.check_action("delete", ()) is False  # Not offered on this tab.
        assert editor.check_action("save", ()) is False
        await pilot.press("f8")
        await pilot.pause()
        assert editor.query_one(TabbedContent).active == "try"  # Nothing asked, nothing moved.
        assert not isinstance(app.screen, Confirm)


async def test_try_it_asks_a_chinese_question_of_the_chinese_passages(make_app: MakeApp) -> None:
    """The bot answers a conversation in Chinese from the `zh/` passages; Try it searched the
    English ones and said no passage shared a word with the question."""
    app = make_app("agent")
    answered: list[Decision] = []
    async with app.run_test(size=SIZE, message_hook=lambda m: answered.append(m.decision)
                            if isinstance(m, TryItPanel.Answered) else None) as pilot:  # fmt: skip
        await wait_until(pilot, lambda: "zh" in app.services.translated)
        await open_editor(pilot)
        await try_question(pilot, "我的车坏了，怎么办？")
        await wait_until(pilot, lambda: bool(answered))
        decision = answered[-1]
        assert decision.candidates  # Retrieved from the Chinese passages, as the bot does.
        assert decision.reason is None or decision.reason.value != "no-passages"
        english = await app.services.engine.answer("我的车坏了，怎么办？")
        assert not english.candidates  # What Try it asked before.


async def test_try_it_at_80_columns_names_a_miss_in_the_table_and_explains_it_below(
    make_app: MakeApp,
) -> None:
    """The judgment cell held the engine's whole reason ("not judged: replay-miss: no recorded
    answer for this question and passage"): the table ran past 80 columns and cut it, and an
    editor new to replay mode read the red as a failure."""
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        editor = await open_editor(pilot)
        await try_question(pilot, Q1)
        table = editor.query_one("#try-candidates", DataTable)
        miss = table.get_row("refund-time")
        assert str(miss[3]) == "not judged: replay-miss"
        assert table.virtual_size.width <= table.size.width  # Nothing off to the side.
        below = flat(screen_text(app, editor.query_one("#try-answer")))
        assert "replay-miss is not a failure: in replay mode the bot uses only recorded" in below


def test_try_it_says_other_reasons_whole_under_the_table() -> None:
    def candidate(id: str, error: str | None = None, kind: str | None = None) -> Candidate:
        probability = None if error else 0.2
        return Candidate(id=id, text="t", bm25=1.0, probability=probability, error=error,
                         error_kind=kind)  # fmt: skip

    decision = Decision(question="q", answer=None, reason=Reason.NOT_JUDGED, threshold=0.7,
                        candidates=(candidate("a"), candidate("b", "timeout: no reply in 10 s",
                                                                "timeout")))  # fmt: skip
    panel = TryItPanel(engine=lambda question: None)  # type: ignore[arg-type,return-value]
    notes = [note.plain for note in panel.notes(decision)]
    assert notes == ["b: timeout: no reply in 10 s"]  # No replay miss: nothing to explain.


async def test_try_it_uses_a_passage_saved_a_moment_before(make_app: MakeApp) -> None:
    app = make_app("agent")
    answered: list[Decision] = []
    async with app.run_test(size=SIZE, message_hook=lambda m: answered.append(m.decision)
                            if isinstance(m, TryItPanel.Answered) else None) as pilot:  # fmt: skip
        await open_editor(pilot)
        await pilot.press("ctrl+n")
        await type_into(pilot, "#form-id", "lost-and-found")
        await type_into(pilot, "#form-text", LOST_TEXT)
        await pilot.press("ctrl+s")
        await settle(pilot)
        await try_question(pilot, LOST)
        assert answered[-1].candidates[0].id == "lost-and-found"


async def test_inline_validation_blocks_bad_ids_duplicates_and_oversized_text(
    make_app: MakeApp, kb_copy: Path
) -> None:
    before = sorted(p.name for p in kb_copy.iterdir())
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        save = editor.query_one("#form-save", Button)
        await pilot.press("ctrl+n")
        assert problem(editor) == "id is empty" and save.disabled
        for bad in ["../x", "a/b", "Upper"]:
            await type_into(pilot, "#form-id", bad)
            assert "not a safe slug" in problem(editor) and save.disabled
        await type_into(pilot, "#form-id", "x" * 65)
        assert problem(editor) == "id has 65 characters; the limit is 64"
        await type_into(pilot, "#form-id", "helmet")
        assert problem(editor) == "passage 'helmet' already exists"
        await type_into(pilot, "#form-id", "fine-id")
        assert problem(editor) == "text: text is empty"
        editor.query_one("#form-text", TextArea).load_text("a" * 4001)
        await pilot.pause()
        assert "4,001 characters; the limit is 4,000" in problem(editor)
        assert editor.query_one("#form-count").has_class("over")
        await pilot.press("ctrl+s")  # Refused: nothing is written.
        await pilot.pause()
    assert sorted(p.name for p in kb_copy.iterdir()) == before


async def test_a_concurrent_change_is_refused_not_overwritten(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await type_into(pilot, "#passage-search", "helmet")
        await pilot.press("enter")
        # Meanwhile another editor (another process, or `helpdesk kb edit`) saves the passage.
        other = PassageStore(kb_copy)
        seen = other.get("helmet")
        other.save(seen.passage.model_copy(update={"text": "Theirs."}), based_on=seen.revision)
        await type_into(pilot, "#form-text", "Mine.")
        await pilot.press("ctrl+s")
        await pilot.pause()
        if isinstance(app.screen, Confirm):  # The app noticed first: it asks to save over it.
            await pilot.press("escape")
            await pilot.pause()
        assert "changed by someone else" in problem(editor)
        assert other.get("helmet").passage.text == "Theirs."
        assert editor.query_one("#form-text", TextArea).text == "Mine."  # Not thrown away.


async def test_the_history_follows_another_process_save_and_the_typing_stays(
    make_app: MakeApp, kb_copy: Path
) -> None:
    """Another app saved the open passage: this app's save was refused, rightly, but its History
    still said `no earlier versions` where the other's listed `v1 … replaced by edit`."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        rows = editor.query_one("#history-options")
        assert "no earlier versions" in flat(screen_text(app, rows))
        await type_into(pilot, "#form-text", "Mine.")
        other = PassageStore(kb_copy)  # Another process: the app learns of it by its poll.
        seen = other.get("helmet")
        other.save(seen.passage.model_copy(update={"text": "Theirs."}), based_on=seen.revision)
        await wait_until(pilot, lambda: "replaced by edit" in flat(screen_text(app, rows)))
        # Restoring v1 would replace what is stored now, their text.
        diff = editor.query_one("#history-diff")
        await wait_until(pilot, lambda: "[-Theirs.-]" in flat(screen_text(app, diff)))
        assert editor.query_one("#form-text", TextArea).text == "Mine."  # The typing stays.
        assert editor.form.dirty
        # Saving asks whether theirs is to be replaced (their version stays in History).
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        await pilot.press("escape")
        await pilot.pause()
        assert "changed by someone else meanwhile" in problem(editor)
        assert other.get("helmet").passage.text == "Theirs."
        assert editor.query_one("#form-text", TextArea).text == "Mine."


async def test_a_content_gap_becomes_a_passage_and_is_marked_handled(
    make_app: MakeApp, kb_copy: Path, other: DeskService
) -> None:
    question = "Can I take my dog with me on the bike?"
    reply = "Small dogs may ride in a closed carrier in the front basket, up to 8 kg."
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        # A conversation the app's bot escalated and an agent answered, in the app's database.
        store = other
        conversation = store.ask(None, question).conversation
        await wait_until(pilot, lambda: store.conversation(conversation.id).pending == 0)
        assert store.conversation(conversation.id).state is State.WAITING
        store.claim(conversation.id, agent="ana")
        store.reply(conversation.id, agent="ana", text=reply)

        editor = await open_editor(pilot)
        await pilot.press("ctrl+g")
        await pilot.pause()
        gaps = editor.query_one(GapList)
        assert [g.question for g in gaps.gaps] == [question]
        await pilot.click("#gap-write")
        await pilot.pause()
        form = editor.query_one(PassageForm)
        assert form.query_one("#form-id", Input).value == "can-i-take-my-dog-with"
        assert form.query_one("#form-text", TextArea).text == reply
        await pilot.press("ctrl+s")
        await settle(pilot)

        assert store.content_gaps(include_handled=False) == []
        await wait_until(pilot, lambda: gaps.gaps == [])
        new = PassageStore(kb_copy).get("can-i-take-my-dog-with").passage
        assert (new.title, new.text) == (question, reply)
        assert app.services.engine.retrieve(question)[0].passage.id == new.id


async def test_the_gaps_table_fits_the_window_and_shortens_only_the_question(
    make_app: MakeApp, other: DeskService
) -> None:
    """At 80 columns the table ran past the window's edge: the question was cut mid-word and
    whether an agent replied was off screen. Now every column shows, and the question alone is
    shortened, with …; a wider window shows it whole."""
    long = "There were no free docks at the station so I kept riding. Will I pay a late fee?"
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        asked = [other.ask(None, q).conversation.id for q in ("Can I bring my dog?", long)]
        await wait_until(pilot, lambda: all(other.conversation(c).pending == 0 for c in asked))
        editor = await open_editor(pilot)
        await pilot.press("ctrl+g")
        gaps = editor.query_one(GapList)
        await wait_until(pilot, lambda: len(gaps.gaps) == 2)
        table = gaps.query_one("#gap-table")

        def rows() -> list[str]:
            return [line for line in screen_text(app, table).splitlines() if line.strip()]

        await wait_until(pilot, lambda: any("…" in line for line in rows()))
        header, *lines = rows()
        assert header.split() == ["when", "reason", "top", "agent", "replied", "question"]
        assert all("not yet" in line for line in lines)
        [dog] = [line for line in lines if "dog" in line]
        [docks] = [line for line in lines if "docks" in line]
        assert dog.endswith("Can I bring my dog?")
        assert docks.endswith("…") and "There were no free docks" in docks
        assert max(len(line) for line in rows()) <= table.size.width
        await pilot.resize_terminal(140, 24)
        await wait_until(pilot, lambda: any(line.endswith(long) for line in rows()))


async def test_tabs_are_built_when_first_shown_and_a_click_shows_the_gaps(
    make_app: MakeApp, other: DeskService
) -> None:
    question = "Can I take my dog with me on the bike?"
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation = other.ask(None, question).conversation
        await wait_until(pilot, lambda: other.conversation(conversation.id).pending == 0)
        editor = await open_editor(pilot)
        # Only the passages are built on opening; the other tabs are empty until shown.
        assert editor.query(PassageForm)
        assert not editor.query(TryItPanel) and not editor.query(GapList)
        assert not editor.has_unsaved_work()  # No synonyms typed: their tab was never built.

        await pilot.click("#--content-tab-gaps")  # A click, not Ctrl+G: the tab shows first.
        await wait_until(pilot, lambda: [g.question for g in editor.query_one(GapList).gaps]
                         == [question])  # fmt: skip
        assert not editor.query(TryItPanel)

        # While the gaps are on screen, another escalation shows up there.
        later = other.ask(None, "Do you rent tandems?").conversation
        await wait_until(pilot, lambda: other.conversation(later.id).pending == 0)
        await wait_until(pilot, lambda: len(editor.query_one(GapList).gaps) == 2)


async def test_the_editor_opens_from_the_palette_too(make_app: MakeApp) -> None:
    app = make_app("agent")  # Not `helpdesk chat`'s: a customer's app offers no editor.
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await type_text(pilot, "knowledge")
        await palette_ready(pilot, "knowledge")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, EditorScreen)
        assert isinstance(app.screen.passages, PassageStore)
        assert len(load_knowledge_base(app.screen.passages.directory)) == 10


def test_the_app_names_the_editor_key_in_its_bindings() -> None:
    assert any(b.key == "f2" for b in HelpDeskApp.BINDINGS if not isinstance(b, tuple))


async def test_a_broken_file_is_reported_and_the_rest_stay_editable(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        await engine_ready(app)  # Built after the first screen, from the passages as they were.
        # Broken by hand while the app runs (a broken file at startup stops the app, by design).
        (kb_copy / "broken.json").write_text("{", encoding="utf-8")
        editor = await open_editor(pilot)
        messages = [n.message for n in app._notifications]
        assert any("Not listed:" in m and "broken.json: malformed JSON" in m for m in messages)
        await type_into(pilot, "#passage-search", "helmet")
        await pilot.press("enter")
        await type_into(pilot, "#form-text", "Still editable.")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert PassageStore(kb_copy).get("helmet").passage.text == "Still editable."
        assert editor.form.problem == ""


async def test_f2_never_stacks_a_second_editor_or_opens_over_a_dialog(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        await open_editor(pilot)
        await pilot.press("f8")  # The delete confirmation is open.
        await pilot.pause()
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        await pilot.press("escape")
        await pilot.press("f2")
        await pilot.pause()
        assert sum(isinstance(s, EditorScreen) for s in app.screen_stack) == 1


class ListHarness(App[None]):
    def compose(self) -> ComposeResult:
        yield PassageList(id="passage-list")


async def test_a_long_list_shows_the_first_rows_and_search_narrows_it() -> None:
    passages = [Passage(id=f"p{n:04d}", text=f"text {n}") for n in range(MAX_ROWS + 100)]
    passages.append(Passage(id="zz-helmet", title="Helmets", text="Helmets in the basket."))
    app = ListHarness()
    async with app.run_test() as pilot:
        listing = app.query_one(PassageList)
        listing.show(passages)
        assert listing.options.option_count == MAX_ROWS + 1  # The last row says how many more.
        assert "101 more" in str(listing.options.get_option_at_index(MAX_ROWS).prompt)
        await type_into(pilot, "#passage-search", "HELMETS basket")
        assert listing.options.option_count == 1
        assert listing.options.get_option_at_index(0).id == "zz-helmet"
