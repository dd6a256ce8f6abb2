"""F3 on a long conversation. Each press froze the console a little longer than the
last (over a second with ~3,000 messages shown): the transcript rendered everything shown again
to put one page above it. Now each press renders only the page it adds, and the earlier messages
still come in order, the line the agent was reading stays where it was, and a reply sent after
lands at the end. (How long a press takes is measured in `bench/transcript_f3.py`.)"""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.strip import Strip

from chatbot.desk.models import ChatMessage
from chatbot.desk.service import DeskService
from chatbot.tui.widgets.transcript import PAGE, Transcript, earlier_line
from tests.tui.conftest import Q1, MakeApp
from tests.tui.desk_helpers import long_conversation, unjudged
from tests.tui.helpers import flat, type_text, wait_until, written

MESSAGES = 4 * PAGE + 30
SIZES = [(120, 40), (80, 24)]
"""The console as the tester had it, and one where the earlier-messages line wraps to two rows."""


def message_texts(desk: DeskService, conversation: int) -> list[str]:
    return [entry.text for entry in desk.entries(conversation) if isinstance(entry, ChatMessage)]


def shown_messages(transcript: Transcript) -> list[str]:
    """The messages' lines the transcript holds, in order (each is one short line)."""
    return [line for line in written(transcript) if line.startswith("Message ")]


def below_the_earlier_line(transcript: Transcript) -> list[Strip]:
    """The transcript's lines under the earlier-messages line and the blank line after it."""
    lines = [line.text.rstrip() for line in transcript.lines]
    return transcript.lines[lines.index("") + 1 :] if transcript.hidden else transcript.lines[:]


async def press_f3(pilot: Pilot[None], transcript: Transcript) -> None:
    """F3, then wait until the page before is written (its count of earlier messages stays at
    1,000 beyond that many: the first entry shown tells)."""
    first = transcript.first_id
    await pilot.press("f3")
    await wait_until(pilot, lambda: transcript.first_id != first)


@pytest.mark.parametrize("size", SIZES, ids=["120x40", "80x24"])
async def test_each_f3_renders_only_the_page_it_adds_and_keeps_the_order(
    make_app: MakeApp, other: DeskService, size: tuple[int, int]
) -> None:
    conversation = long_conversation(other, MESSAGES)
    texts = message_texts(other, conversation)
    app = make_app("agent")
    async with app.run_test(size=size) as pilot:
        view = await app.open_conversation(conversation)
        transcript = view.transcript
        await wait_until(pilot, lambda: bool(transcript.hidden and transcript.lines))
        if size == (80, 24):  # The case the rows it takes are counted for.
            assert not written(transcript)[1], "the earlier-messages line fits on one row"
        presses = 0
        while transcript.hidden:
            hidden, kept = transcript.hidden, below_the_earlier_line(transcript)
            await press_f3(pilot, transcript)
            presses += 1
            # Every line shown before is the very line it was, not rendered again: only the
            # page added (and the earlier-messages line) is new, however much is shown.
            lines = transcript.lines
            assert len(lines) > len(kept)
            assert all(new is old for new, old in zip(lines[-len(kept) :], kept, strict=True))
            assert shown_messages(transcript) == texts[-len(shown_messages(transcript)) :]
            # The earlier-messages line is at the top, said once, and the one before is gone.
            every = flat(" ".join(written(transcript)))
            assert flat(earlier_line(hidden)) not in every
            if transcript.hidden:
                first = earlier_line(transcript.hidden)
                assert flat(" ".join(written(transcript)[:3])).startswith(flat(first))
                assert every.count(flat(first)) == 1
        assert presses == (MESSAGES - 1) // PAGE
        assert shown_messages(transcript) == texts
        assert written(transcript)[:3] == ["— The customer asked for a person.", "Customer  09:00",
                                           "Message 1: my bike will not unlock."]  # fmt: skip
        assert not [line for line in written(transcript) if "earlier message" in line]


@pytest.mark.parametrize("size", SIZES, ids=["120x40", "80x24"])
async def test_f3_keeps_the_line_being_read_where_it_was(
    make_app: MakeApp, other: DeskService, size: tuple[int, int]
) -> None:
    conversation = long_conversation(other, MESSAGES)
    app = make_app("agent")
    async with app.run_test(size=size) as pilot:
        view = await app.open_conversation(conversation)
        transcript = view.transcript
        await wait_until(pilot, lambda: bool(transcript.hidden and transcript.lines))
        # Opened on its newest lines (then scrolled by the agent, as below).
        await wait_until(pilot, lambda: 0 < transcript.max_scroll_y == transcript.scroll_y)
        await pilot.pause()
        height = transcript.scrollable_content_region.height
        for y in (40, 3, 0):  # Mid-page, just under the earlier-messages line, on it.
            transcript.scroll_to(y=y, animate=False, immediate=True)
            await pilot.pause()
            assert transcript.scroll_offset.y == y
            # What is in view under the earlier-messages line (replaced by the next one).
            skip = max(0, len(transcript.lines) - len(below_the_earlier_line(transcript)) - y)
            reading = written(transcript)[y + skip : y + height]
            await press_f3(pilot, transcript)
            await pilot.pause()
            top = transcript.scroll_offset.y
            assert top > y
            assert written(transcript)[top + skip : top + height] == reading


async def test_a_reply_after_f3_lands_at_the_end_once(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = long_conversation(other, MESSAGES)
    texts = message_texts(other, conversation)
    app = make_app("agent")
    async with app.run_test(size=(120, 40)) as pilot:
        view = await app.open_conversation(conversation)
        transcript = view.transcript
        await wait_until(pilot, lambda: bool(transcript.hidden and transcript.lines))
        for _ in range(2):
            await press_f3(pilot, transcript)
        before = transcript.lines[:]
        view.reply_input.focus()
        await type_text(pilot, "Message 999: dock 7 is free now.")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Message 999: dock 7 is free now." in written(transcript))
        await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        lines = written(transcript)
        assert lines[-2:] == ["ana (agent)  09:00", "Message 999: dock 7 is free now."]
        assert shown_messages(transcript) == [*texts[-3 * PAGE :], lines[-1]]
        # The reply was written under what was shown, which stayed as it was.
        assert all(new is old for new, old in zip(transcript.lines, before, strict=False))
        assert transcript.hidden == MESSAGES - 3 * PAGE


async def test_an_unjudged_question_on_an_earlier_page_is_said_by_its_cause(
    make_app: MakeApp, other: DeskService
) -> None:
    """The first page read the decisions a `not-judged` escalation is said from; F3 did not, and
    one on an earlier page said "replay mode" of a question Valen had declined to judge."""
    conversation = other.ask(None, Q1).conversation.id
    [pending] = other.lease("bot-1", limit=1, lease_s=60)
    other.record_decision("bot-1", pending, unjudged(Q1, "refused"))
    other.claim(conversation, agent="ana")
    for number in range(2 * PAGE):
        other.reply(conversation, agent="ana", text=f"Message {number}: still looking.")
    app = make_app("agent")
    async with app.run_test(size=(120, 40)) as pilot:
        view = await app.open_conversation(conversation)
        transcript = view.transcript
        await wait_until(pilot, lambda: bool(transcript.hidden and transcript.lines))
        while transcript.hidden:
            await press_f3(pilot, transcript)
        said = flat(" ".join(written(transcript)))
        assert "could not check every help-center passage" in said
        assert "replay mode" not in said
