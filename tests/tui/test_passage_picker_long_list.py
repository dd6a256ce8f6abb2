"""Ctrl+O's passage picker over a knowledge base of 3,010 passages draws the first 100 rows, the
bot's candidates first, and a last line saying how many more there are, as the editor's list
does; typing narrows the list to the passage meant, Enter picks it.

It drew a row for every passage: with 3,010 it took seconds to open and over a second a key
typed (the list measured every row's wrapped height at each key)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from chatbot.assembly import open_service
from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.engine.models import Candidate, Decision, Reason
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.store import passage_file_text
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.passage_picker import PassagePicker, PickerItem
from tests.tui.conftest import FrozenClock, editor_settings
from tests.tui.helpers import agent_app, claim_and_pick, screen_text, type_text, wait_until

SPARE_PARTS = 3_000
SHIPPED = 10
QUESTION = "My bike's chain came off, is there a spare part?"


def spare_part(number: int) -> Passage:
    return Passage(
        id=f"spare-part-{number:04d}",
        title=f"Spare part {number}",
        text="Ask at the counter for this spare part; we fit it while you wait.",
    )


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    """The shipped knowledge base and 3,000 spare parts' passages."""
    for number in range(SPARE_PARTS):
        passage = spare_part(number)
        (kb_copy / f"{passage.id}.json").write_text(passage_file_text(passage))
    return editor_settings(db_path, kb_copy)


def escalated(desk: DeskService, candidates: tuple[Candidate, ...]) -> int:
    """A conversation whose question the bot judged and escalated, with these candidates."""
    conversation = desk.ask(None, QUESTION).conversation.id
    [pending] = desk.lease("bot-1", limit=1, lease_s=60)
    decision = Decision(question=QUESTION, answer=None, reason=Reason.LOW_SCORE,
                        candidates=candidates, threshold=0.7)  # fmt: skip
    desk.record_decision("bot-1", pending, decision)
    return conversation


async def open_picker(pilot: Pilot[None], app: HelpDeskApp, conversation: int) -> PassagePicker:
    """Open the conversation, claim it (Ctrl+L) and press Ctrl+O, as the agent does."""
    await app.services.live.wait_ready()
    view = await app.open_conversation(conversation)
    await wait_until(pilot, lambda: view.conversation is not None)
    return await claim_and_pick(pilot, view)


def matching(picker: PassagePicker, *words: str) -> list[str]:
    """The passages offered that have every one of `words` in their id, title or text."""
    return [item.passage.id for item in picker.items if all(w in item.searched for w in words)]


def ids(items: list[PickerItem]) -> list[str]:
    return [item.passage.id for item in items]


def rows(picker: PassagePicker) -> list[str]:
    """The list's rows as drawn (every one, not only those in view): a passage's id, or the
    line saying how many more there are."""
    options = picker.query_one("#passages", OptionList)
    drawn = [options.get_option_at_index(index) for index in range(options.option_count)]
    return [
        str(option.prompt) if option.disabled else ids(picker.shown)[index]
        for index, option in enumerate(drawn)
    ]


async def test_the_first_100_are_drawn_with_how_many_more_and_typing_finds_the_one(
    settings: Settings, http: object, clock: FrozenClock
) -> None:
    desk: DeskService = open_service(settings, clock=clock)
    try:
        conversation = escalated(desk, (
            Candidate(id="spare-part-2718", title="Spare part 2718", text="…", bm25=5.0,
                      probability=0.52),
            Candidate(id="damage-fee", title="Damage fees", text="…", bm25=3.0, probability=0.31),
        ))  # fmt: skip
        app = agent_app(settings, http, clock)
        async with app.run_test(size=(100, 30)) as pilot:
            picker = await open_picker(pilot, app, conversation)
            assert len(picker.items) == SHIPPED + SPARE_PARTS
            assert ids(picker.items)[:2] == ["spare-part-2718", "damage-fee"]
            # 100 rows, the bot's first, then the line: nothing typed, every passage is "more".
            more = (
                "2,910 more passages not listed, only the first 100: type words from an id, "
                "title or text to find them."
            )
            await wait_until(pilot, lambda: len(rows(picker)) == 101)
            assert rows(picker) == [*ids(picker.items)[:100], more]
            options = picker.query_one("#passages", OptionList)
            assert options.highlighted == 0

            # The line is there to read at the end of the list.
            options.focus()
            await pilot.press("end")
            await wait_until(pilot, lambda: options.highlighted == 99)
            # (The line wraps beside the scrollbar.)
            await wait_until(pilot, lambda: more[:60] in screen_text(app, options))
            assert "or text to find them." in screen_text(app, options)

            # Typing on the list goes to the filter, which still matches all 3,000 parts.
            await type_text(pilot, "part")
            assert app.focused is picker.query_one("#picker-filter", Input)
            await wait_until(pilot, lambda: len(picker.shown) == SPARE_PARTS)
            more = (
                "2,900 more matches not listed, only the first 100: type more words to narrow "
                "the list."
            )
            await wait_until(pilot, lambda: rows(picker)[-1] == more)
            assert rows(picker)[:-1] == ids(picker.shown)[:100]
            assert ids(picker.shown)[0] == "spare-part-2718"  # The bot's, first still.

            # Down to the one meant: every list of the way is the whole match, in order.
            await type_text(pilot, " 123")
            expected = matching(picker, "part", "123")
            assert {"spare-part-0123", "spare-part-1123", "spare-part-1239"} < set(expected)
            assert len(expected) < 100
            await wait_until(pilot, lambda: ids(picker.shown) == expected)
            assert rows(picker) == expected  # All drawn: no line.
            await type_text(pilot, "4")
            await wait_until(pilot, lambda: ids(picker.shown) == ["spare-part-1234"])
            # Deleting widens it again, to every passage the words left match.
            await pilot.press("backspace", "backspace", "backspace")
            wider = matching(picker, "part", "1")
            assert len(wider) > 100
            await wait_until(pilot, lambda: ids(picker.shown) == wider)
            await wait_until(pilot, lambda: rows(picker)[:-1] == wider[:100])
            await type_text(pilot, "234")
            await wait_until(pilot, lambda: rows(picker) == ["spare-part-1234"])

            await pilot.press("enter")
            await wait_until(pilot, lambda: not isinstance(app.screen, PassagePicker))
            reply = app.screen.query_one("#reply", Input)
            await wait_until(pilot, lambda: reply.value == spare_part(1234).text)
    finally:
        desk.close()
