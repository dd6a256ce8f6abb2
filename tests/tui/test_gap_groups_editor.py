"""The editor's Content gaps tab lists a question once, as `helpdesk stats` counts it, at 80x24
on both desk backends; a passage written from its row takes it off the tab and the figures.

What a tester found: a customer message escalated twice (an agent claimed the conversation and
handed it back, Ctrl+G twice, and the bot escalated it again) was two rows, 17:17 and 17:27, and
the passage written from the 17:27 row left the 17:17 one in the tab and in `stats --json`; one
question asked in two conversations in other case and spacing was two rows (one gap, asked
twice, in the figures), and the passage written from one row left the other in both."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, TextArea

from chatbot.config import Settings
from chatbot.desk.models import ChatEvent, Escalated, State
from chatbot.desk.service import DeskService
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.editor import EditorScreen
from chatbot.tui.widgets.gap_list import GapList
from tests.backends import Backend
from tests.tui.conftest import FrozenClock, MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor, settle
from tests.tui.helpers import flat, screen_text, type_text, wait_until

SIZE = (80, 24)
PLUGH = "xyzzy qwerty plugh"
GIFT = "do you sell gift cards"
GIFT_AGAIN = "  Do You Sell Gift Cards "
ANSWER = "Yes, at every station."


@pytest.fixture
def settings(backend: Backend, kb_copy: Path) -> Settings:
    return editor_settings(backend.location, kb_copy)  # type: ignore[arg-type]


def escalations(desk: DeskService, conversation: int) -> int:
    return sum(
        isinstance(entry, ChatEvent) and isinstance(entry.event, Escalated)
        for entry in desk.entries(conversation)
    )


async def escalated(pilot: Pilot[None], desk: DeskService, conversation: int, times: int) -> None:
    """The app's bot has escalated the conversation's question `times` times."""
    await wait_until(
        pilot,
        lambda: (
            desk.conversation(conversation).pending == 0
            and desk.conversation(conversation).state is State.WAITING
            and escalations(desk, conversation) == times
        ),
        timeout=15,
    )


async def gap_tab(pilot: Pilot[None]) -> tuple[EditorScreen, GapList]:
    """F2, Ctrl+G: the gaps, read."""
    editor = await open_editor(pilot)
    await pilot.press("ctrl+g")
    gaps = editor.query_one(GapList)
    await wait_until(pilot, lambda: bool(gaps.gaps))
    await settle(pilot)
    return editor, gaps


def row(gaps: GapList) -> list[str]:
    """The table's only row, as its cells."""
    table = gaps.query_one("#gap-table", DataTable)
    assert table.row_count == 1
    return [str(cell) for cell in table.get_row_at(0)]


def headers(gaps: GapList) -> list[str]:
    table = gaps.query_one("#gap-table", DataTable)
    return [str(column.label) for column in table.ordered_columns]


async def write_passage(pilot: Pilot[None], editor: EditorScreen, gaps: GapList) -> str:
    """Tab, Enter on "Write a passage from this gap", the answer typed, Ctrl+S; the passage id."""
    await wait_until(pilot, lambda: pilot.app.focused is gaps.query_one("#gap-table"))
    await pilot.press("tab", "enter")
    await wait_until(pilot, lambda: editor.form.gap_id is not None)
    text = editor.form.query_one("#form-text", TextArea)
    await wait_until(pilot, lambda: pilot.app.focused is text)
    await type_text(pilot, ANSWER)
    await wait_until(pilot, lambda: text.text.endswith(ANSWER))
    passage_id = editor.form.query_one("#form-id", Input).value
    await pilot.press("ctrl+s")
    await settle(pilot)
    return passage_id


async def gone(pilot: Pilot[None], app: HelpDeskApp, desk: DeskService, gaps: GapList) -> None:
    """No gap in the tab, the store or the figures."""
    await pilot.press("ctrl+g")
    await wait_until(pilot, lambda: not gaps.gaps)
    assert desk.content_gaps(include_handled=False) == []
    assert desk.stats().content_gaps == ()
    assert "No open content gaps." in flat(screen_text(app))


async def test_a_message_escalated_twice_is_one_row_and_one_passage_handles_it(
    make_app: MakeApp, other: DeskService, clock: FrozenClock, kb_copy: Path
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation = other.ask(None, PLUGH).conversation.id
        await escalated(pilot, other, conversation, 1)
        clock.advance(600)
        assert other.claim(conversation, agent="ana").won
        other.hand_back(conversation, agent="ana")
        await escalated(pilot, other, conversation, 2)  # The bot judged it again.
        editor, gaps = await gap_tab(pilot)
        [gap] = gaps.gaps
        assert (gap.question, gap.count) == (PLUGH, 1)
        # Its latest time; asked once, so no "asked" column (every question was asked once).
        assert headers(gaps) == ["when", "reason", "top", "agent replied", "question"]
        when, reason, *_, question = row(gaps)
        assert (reason, question) == ("no-passages", PLUGH)
        assert when.endswith(gap.created_at.astimezone().strftime("%H:%M"))
        assert [(g.question, g.count) for g in other.stats().content_gaps] == [(PLUGH, 1)]
        passage_id = await write_passage(pilot, editor, gaps)
        await gone(pilot, app, other, gaps)
    assert PassageStore(kb_copy).get(passage_id).passage.text == ANSWER


async def test_one_question_in_two_wordings_is_one_row_asked_twice(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        first = other.ask(None, GIFT).conversation.id
        await escalated(pilot, other, first, 1)
        clock.advance(600)
        second = other.ask(None, GIFT_AGAIN).conversation.id
        await escalated(pilot, other, second, 1)
        editor, gaps = await gap_tab(pilot)
        [gap] = gaps.gaps
        # Shown as it was last asked (the desk keeps a message without its outer spaces).
        assert (gap.question, gap.count, gap.conversation_id) == (GIFT_AGAIN.strip(), 2, second)
        assert headers(gaps)[:2] == ["when", "asked"]
        _, asked, *_, question = row(gaps)
        assert (asked, question) == ("2", GIFT_AGAIN.strip())
        assert "Do You Sell Gift Cards" in screen_text(app)
        assert [g.count for g in other.stats().content_gaps] == [2]
        await write_passage(pilot, editor, gaps)
        await gone(pilot, app, other, gaps)
