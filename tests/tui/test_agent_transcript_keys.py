"""The agent console's keys typed where the focus sits on no text box (the transcript) reach the
reply box in the order they were typed: editing keys too, not only characters."""

from __future__ import annotations

import pytest

from chatbot.desk.service import DeskService
from chatbot.tui.widgets.transcript import Transcript
from tests.tui.conftest import MakeApp
from tests.tui.desk_helpers import claimed, replies, waiting
from tests.tui.helpers import burst, wait_until


@pytest.mark.parametrize("note", [False, True], ids=["reply", "note"])
async def test_editing_keys_typed_on_the_transcript_are_applied_in_turn(
    make_app: MakeApp, other: DeskService, note: bool
) -> None:
    """Ctrl+U, Backspace and Ctrl+W typed on the transcript in a burst with characters: they
    went on to the app's bindings, which ran them where the focus was by then (the box, which
    the first character had moved it to), after every character of the burst: Ctrl+U took out
    all that was typed."""
    app = make_app("agent", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        _conversation, view = await claimed(app, pilot, other)
        if note:
            await pilot.press("ctrl+n")
            await wait_until(pilot, lambda: view.note_mode)
        box = view.reply_input
        box.put("old words")
        transcript = view.query_one(Transcript)
        transcript.focus()
        await wait_until(pilot, lambda: app.focused is transcript)
        await burst(pilot, "ctrl+u", *"helmez", "backspace", *"t? oops", "ctrl+w", *"ok")
        assert app.focused is box
        assert box.value == "helmet? ok"
        assert view.note_mode is note


async def test_editing_keys_typed_on_the_transcript_after_f6_go_to_the_next_conversation(
    make_app: MakeApp, other: DeskService
) -> None:
    """F6, then Ctrl+U and a reply with a Backspace in it, in one burst on the transcript: the
    editing keys wait with the characters for the conversation F6 opens (Ctrl+U must not empty
    the draft left in the one being left)."""
    app = make_app("agent", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        first, view = await claimed(app, pilot, other)
        second = waiting(other)
        view.reply_input.put("keep me")
        transcript = view.query_one(Transcript)
        transcript.focus()
        await wait_until(pilot, lambda: app.focused is transcript)
        await burst(pilot, "f6", "ctrl+u", *"next onz", "backspace", "e")
        await wait_until(pilot, lambda: view.conversation_id == second and view.is_mine)
        await wait_until(pilot, lambda: view.reply_input.value == "next one")
        await pilot.press("enter")
        await wait_until(pilot, lambda: replies(other, second) == ["next one"])
        assert replies(other, first) == []
        await view.show(first)  # Back to the first: its draft is as it was left.
        assert view.reply_input.value == "keep me"
