"""The form "Write a passage from this gap" opens has the cursor at the end of its text: the id
and title come filled in from the gap, and the answer is what is left to write. The cursor was
at the start of Id, and the answer typed went in front of the id
(`You can borrow one…do-i-need-a-helmet`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from chatbot.config import Settings
from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui.screens.editor import Confirm, EditorScreen
from chatbot.tui.widgets.gap_list import GapList
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor, settle, writing_card_charged
from tests.tui.helpers import type_text, wait_until

HELMET = "Do I need a helmet? 🚴‍♀️"
DOG = "Can I take my dog with me on the bike?"
DOG_REPLY = "Small dogs may ride in a closed carrier in the front basket, up to 8 kg."
ANSWER = "You can borrow one at any station, free of charge."


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


async def escalate(
    pilot: Pilot[None], desk: DeskService, question: str, *, reply: str | None = None
) -> None:
    """A customer's question the app's bot escalates, answered by an agent if `reply`."""
    conversation = desk.ask(None, question).conversation.id
    await wait_until(pilot, lambda: desk.conversation(conversation).pending == 0)
    assert desk.conversation(conversation).state is State.WAITING
    if reply is not None:
        desk.claim(conversation, agent="ana")
        desk.reply(conversation, agent="ana", text=reply)


async def write_from_gap(pilot: Pilot[None], question: str) -> EditorScreen:
    """F2, Ctrl+G, Down to the gap asking `question`, Tab, Enter on "Write a passage from this
    gap", as the tester pressed them."""
    editor = await open_editor(pilot)
    await pilot.press("ctrl+g")
    gaps = editor.query_one(GapList)
    await wait_until(pilot, lambda: len(gaps.gaps) == 2)
    table = gaps.query_one("#gap-table")
    await wait_until(pilot, lambda: pilot.app.focused is table)
    rows = [gap.question for gap in gaps.gaps]  # Newest first.
    for _ in range(rows.index(question)):
        await pilot.press("down")
    await pilot.press("tab")
    assert pilot.app.focused is gaps.query_one("#gap-write")
    await pilot.press("enter")
    await wait_until(pilot, lambda: editor.form.gap_id is not None)
    await pilot.pause()
    return editor


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
async def test_the_answer_typed_after_write_a_passage_goes_into_its_text(
    make_app: MakeApp, other: DeskService, kb_copy: Path, size: tuple[int, int]
) -> None:
    app = make_app("agent")
    async with app.run_test(size=size) as pilot:
        await escalate(pilot, other, HELMET)
        await escalate(pilot, other, DOG, reply=DOG_REPLY)
        editor = await write_from_gap(pilot, HELMET)  # Down to it, below the newer one.
        form = editor.form
        text = form.query_one("#form-text", TextArea)
        passage_id = form.query_one("#form-id", Input).value
        assert passage_id.startswith("do-i-need-a-helmet")
        await type_text(pilot, ANSWER)
        await pilot.pause()
        assert form.query_one("#form-id", Input).value == passage_id
        assert form.query_one("#form-title", Input).value == HELMET
        assert text.text == ANSWER
        assert app.focused is text
        await pilot.press("ctrl+s")
        await settle(pilot)
        saved = PassageStore(kb_copy).get(passage_id).passage
        assert (saved.title, saved.text) == (HELMET, ANSWER)
        assert other.content_gaps(include_handled=False)[0].question == DOG


async def test_a_gap_with_a_reply_opens_with_the_cursor_at_its_end(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        await escalate(pilot, other, DOG, reply=DOG_REPLY)
        await escalate(pilot, other, HELMET)
        editor = await write_from_gap(pilot, DOG)  # Down to it, below the newer one.
        text = editor.form.query_one("#form-text", TextArea)
        assert app.focused is text
        assert text.cursor_location == text.document.end
        await type_text(pilot, " Ask at the desk.")
        await wait_until(pilot, lambda: text.text.endswith("desk."))
        assert text.text == DOG_REPLY + " Ask at the desk."
        assert editor.form.query_one("#form-id", Input).value == "can-i-take-my-dog-with"


async def test_after_discarding_unsaved_changes_the_cursor_is_in_the_gaps_text(
    make_app: MakeApp, other: DeskService
) -> None:
    """The form held unsaved changes: Discard is asked first, and the cursor then lands in the
    draft's text all the same (the dialog gives the focus back before the draft opens)."""
    app = make_app("agent")
    async with app.run_test(size=(120, 36)) as pilot:
        await escalate(pilot, other, DOG, reply=DOG_REPLY)
        await escalate(pilot, other, HELMET)
        editor, text = await writing_card_charged(pilot)
        await type_text(pilot, " Mine.")
        await wait_until(pilot, lambda: editor.form.dirty)
        await pilot.press("ctrl+g")
        gaps = editor.query_one(GapList)
        await wait_until(pilot, lambda: len(gaps.gaps) == 2)
        await wait_until(pilot, lambda: app.focused is gaps.query_one("#gap-table"))
        await pilot.press("tab", "enter")  # The newest gap: the helmet.
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("tab", "enter")  # Discard.
        await wait_until(pilot, lambda: editor.form.gap_id is not None)
        await pilot.pause()
        await type_text(pilot, ANSWER)
        await pilot.pause()
        assert editor.form.query_one("#form-id", Input).value.startswith("do-i-need-a-helmet")
        assert text.text == ANSWER
        assert app.focused is text
