"""Keys that arrive in bursts (a laggy SSH link, a quick typist): each Enter on the agent's reply
box or the customer's question box sends what the box held when it was pressed, once, in order,
and what was typed after it stays in the box; also while an earlier send still waits on the desk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual import events
from textual.keys import _character_to_key

from chatbot.desk.models import Author
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.send_guard import SendGuard
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.tui.conftest import Q1, Q2, SIZE, MakeApp
from tests.tui.desk_helpers import claimed, notes, replies
from tests.tui.helpers import screen_text, wait_until

ENTER = "\r"


CTRL_N = "\x0e"


def burst(app: HelpDeskApp, *parts: str) -> None:
    """Keys as a laggy link delivers them: all at once, with no wait between them (`ENTER` for
    Enter, `CTRL_N` for Ctrl+N, any other part typed character by character)."""
    for part in parts:
        if part == ENTER:
            app.post_message(events.Key("enter", ENTER))
            continue
        if part == CTRL_N:
            app.post_message(events.Key("ctrl+n", CTRL_N))
            continue
        for char in part:
            app.post_message(events.Key(char if char.isalnum() else _character_to_key(char), char))


async def held(condition: Callable[[], bool], *, timeout: float = 5.0) -> None:
    """Wait for `condition` while a send is held: Pilot's pauses wait for every widget to go
    idle, and the one sending does not until the desk answers."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    while not condition():
        if loop.time() - started > timeout:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(0.02)


class Gate:
    """A desk method held until `open` is set: a send in flight while more keys arrive."""

    def __init__(self, method: Callable[..., Awaitable[Any]]) -> None:
        self.method = method
        self.open = asyncio.Event()
        self.calls = 0

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        await self.open.wait()
        return await self.method(*args, **kwargs)


def questions(desk: DeskService) -> list[str]:
    return [m.text for c in desk.conversations() for m in desk.messages(c.id)
            if m.author is Author.CUSTOMER]  # fmt: skip


# -- the agent's reply box ------------------------------------------------------------------------


async def test_keys_typed_after_enter_stay_in_the_reply_box(
    make_app: MakeApp, other: DeskService
) -> None:
    """Typed in one burst, "first message", Enter, "second" reached the customer as "first
    messagesecond": Enter's words were read once the keys after it were in the box."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation, view = await claimed(app, pilot, other)
        box = view.reply_input
        burst(app, "first message", ENTER, "second")
        await wait_until(
            pilot, lambda: bool(replies(other, conversation)) and box.value == "second"
        )
        await pilot.pause()
        assert replies(other, conversation) == ["first message"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(replies(other, conversation)) == 2)
        assert replies(other, conversation) == ["first message", "second"]
        assert box.value == ""


async def test_replies_in_one_burst_each_go_once_in_order(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation, view = await claimed(app, pilot, other)
        sent = [f"reply {n}" for n in range(1, 7)]
        burst(app, *(part for text in sent for part in (text, ENTER)), "draft")
        await wait_until(pilot, lambda: len(replies(other, conversation)) >= len(sent))
        await pilot.pause()
        assert replies(other, conversation) == sent
        assert view.reply_input.value == "draft"


async def test_replies_sent_while_one_waits_on_the_desk_go_after_it(
    make_app: MakeApp, other: DeskService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sent ~0.15 s apart over a slow desk, 25 replies stored 10: some glued together, some
    lost, and the box ended empty."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation, view = await claimed(app, pilot, other)
        box = view.reply_input
        gate = Gate(app.services.desk.reply)
        monkeypatch.setattr(app.services.desk, "reply", gate)
        burst(app, "one", ENTER)
        await held(lambda: gate.calls == 1)  # In flight.
        for text in ("two", "three"):  # Each reaches the box while "one" waits on the desk.
            burst(app, text, ENTER)
            await held(lambda text=text: box.value.endswith(text))  # type: ignore[misc]
        burst(app, "four", ENTER, ENTER, "fi")  # A double Enter among them: "four" goes once.
        burst(app, "ve")
        await held(lambda: box.value.endswith("five"))
        gate.open.set()
        await wait_until(pilot, lambda: len(replies(other, conversation)) >= 4)
        await pilot.pause()  # Every Enter still queued is handled: none sends again.
        assert replies(other, conversation) == ["one", "two", "three", "four"]
        assert box.value == "five"


async def test_a_burst_of_notes_saves_each_and_tells_the_customer_nothing(
    make_app: MakeApp, other: DeskService
) -> None:
    """The second note of a burst went nowhere, and the box went back to the reply."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation, view = await claimed(app, pilot, other)
        box = view.reply_input
        burst(app, "hello")
        await wait_until(pilot, lambda: box.value == "hello")
        await pilot.press("ctrl+n")
        burst(app, "note one", ENTER, "note two", ENTER)
        await wait_until(pilot, lambda: len(notes(other, conversation)) == 2 and not view.note_mode)
        await pilot.pause()
        assert notes(other, conversation) == ["note one", "note two"]
        assert box.value == "hello"  # The reply's draft, back.
        assert replies(other, conversation) == []


async def test_a_note_left_while_a_reply_waits_never_goes_as_a_reply(
    make_app: MakeApp, other: DeskService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent switches to a note while a reply waits on the desk, presses Enter on it, and
    switches back before that Enter is handled: it must not send the note's words as a reply."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation, view = await claimed(app, pilot, other)
        box = view.reply_input
        gate = Gate(app.services.desk.reply)
        monkeypatch.setattr(app.services.desk, "reply", gate)
        burst(app, "on its way", ENTER)
        await held(lambda: gate.calls == 1)
        # As the command palette does: its commands are not held up behind the send.
        await view.action_toggle_note()
        burst(app, "secret", ENTER)
        await held(lambda: box.value == "secret")
        await view.action_toggle_note()
        burst(app, " later")
        await held(lambda: box.value == "on its way later")
        gate.open.set()
        await wait_until(pilot, lambda: replies(other, conversation) == ["on its way"])
        await pilot.pause()  # Every Enter still queued is handled: none sends again.
        assert replies(other, conversation) == ["on its way"]
        assert notes(other, conversation) == []
        assert box.value == " later" and not view.note_mode
        await view.action_toggle_note()
        assert box.value == "secret"  # The note's draft, unsent.


# -- the customer's question box ------------------------------------------------------------------


async def test_keys_typed_after_enter_stay_in_the_question_box(
    make_app: MakeApp, other: DeskService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The question sent stayed in the box with what was typed after it, and Enter sent it
    again."""
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await held(lambda: bool(app.screen.query(ChatPanel)))
        box = app.screen.query_one(ChatPanel).question
        await held(lambda: box.has_focus)
        gate = Gate(app.services.desk.ask)
        monkeypatch.setattr(app.services.desk, "ask", gate)
        burst(app, Q1, ENTER, "And")
        await held(lambda: gate.calls == 1)
        burst(app, " one more")
        await held(lambda: box.value.endswith("more"))
        gate.open.set()
        await wait_until(pilot, lambda: questions(other) == [Q1])
        await wait_until(pilot, lambda: box.value == "And one more")
        burst(app, ENTER, Q2, ENTER)
        await wait_until(pilot, lambda: len(questions(other)) == 3)
        await pilot.pause()
        assert questions(other) == [Q1, "And one more", Q2]
        assert box.value == ""
        assert "Please type a question first." not in screen_text(app)


# -- the rule -------------------------------------------------------------------------------------


def test_an_enter_pressed_before_a_send_loses_only_the_words_sent() -> None:
    guard = SendGuard()
    first, second, third = guard.entered(), guard.entered(), guard.entered()
    assert guard.read("a", first) == "a"
    guard.took("a", emptied=False)
    assert guard.read("a", second) is None  # A double Enter: already sent.
    assert guard.read("ab", third) == "b"
    guard.took("b", emptied=True)
    assert guard.read("", guard.entered()) is None  # On the box a send emptied: no hint.
    guard.edited("x")
    guard.edited("")
    assert guard.read("", guard.entered()) == ""  # Typed in since: Enter asks to type first.


def test_an_enter_pressed_on_words_put_away_sends_nothing() -> None:
    guard = SendGuard()
    note, reply = guard.entered(), guard.entered()
    guard.put()  # The note's box is the reply's again.
    assert guard.read("note", note) is None
    assert guard.read("note", reply) is None
    later = guard.entered()
    assert guard.read("draft", later) == "draft"


@pytest.mark.parametrize("slow_desk", [False, True])
async def test_a_note_typed_in_a_burst_after_a_reply_stays_a_note(
    make_app: MakeApp, other: DeskService, monkeypatch: pytest.MonkeyPatch, slow_desk: bool
) -> None:
    """A tester's keys, "reply one", Enter, Ctrl+N, "SECRET note A", Enter, "reply two", Enter:
    Ctrl+N, a binding, ran after the note's words had reached the reply box, and once the note
    went to the customer as a reply; more often it was left in the reply's draft."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation, view = await claimed(app, pilot, other)
        gate = Gate(app.services.desk.reply)
        if slow_desk:
            monkeypatch.setattr(app.services.desk, "reply", gate)
        else:
            gate.open.set()
        burst(app, "reply one", ENTER, CTRL_N, "SECRET note A", ENTER, "reply two", ENTER)
        if slow_desk:
            await held(lambda: gate.calls == 1)
            gate.open.set()
        # The note a note. What was typed after its Enter, before the box went back to the
        # reply, stays with the note too (as `test_a_burst_of_notes_saves_each…`): words meant
        # for colleagues never go to the customer; a reply saved as a note is only late.
        await wait_until(pilot, lambda: len(notes(other, conversation)) == 2)
        await pilot.pause()
        assert notes(other, conversation) == ["SECRET note A", "reply two"]
        assert replies(other, conversation) == ["reply one"]
        assert not any("SECRET" in text for text in replies(other, conversation))
        assert "SECRET" not in view._drafts[False] and "SECRET" not in view.reply_input.value
