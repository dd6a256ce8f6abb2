"""Keys typed while `helpdesk chat` starts all reach the question box, in order: the chat's shell
takes typing from the first frame, then the chat panel takes its place with what was typed. A key
that arrived as the shell was read and removed (still queued to its box, or sent to a screen with
nothing focused before the panel's box took the focus) was lost: a tester typing at once lost a
character in about 2 runs of 17."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import pty
import sqlite3
import struct
import subprocess
import sys
import termios
import time
from itertools import cycle, islice
from pathlib import Path

import httpx
from textual import events
from textual.message import Message
from textual.messages import Prune
from textual.widgets import Input

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.tui.conftest import SIZE, FrozenClock
from tests.tui.helpers import GatedLoader, loading_app, wait_until

WORDS = "where can I leave my bike overnight "
ENTER_SCREEN = b"\x1b[?1049h"
"""Textual switches to the alternate screen as it takes the terminal (raw input from then on)."""


def key(char: str) -> events.Key:
    return events.Key("space" if char == " " else char, char)


async def test_keys_typed_as_the_shell_goes_reach_the_panels_box(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock
) -> None:
    """Keys arriving at the very moment the shell is taken off the screen: its box had lost the
    focus and the panel's had not got it yet, so they went to the screen, which drops them."""
    load = GatedLoader(settings)
    app = loading_app(load, http, clock, "chat", bot=False)
    before, during, after = "where can I ", "leave my bike", " overnight?"
    removed = False

    def hook(message: Message) -> None:
        nonlocal removed
        # The first removal once the desk is open is the shell's: its text has been read, its
        # box has lost the focus.
        if isinstance(message, Prune) and app.started and not removed:
            removed = True
            for char in during:
                app.post_message(key(char))

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await wait_until(pilot, load.entered.is_set)
        await pilot.press(*(key(c).key for c in before))
        load.opened.set()
        await wait_until(pilot, lambda: removed and bool(app.screen.query("ChatPanel #question")))
        panel = app.screen.query_one(ChatPanel)
        await wait_until(pilot, lambda: panel.question.has_focus)
        for char in after:
            app.post_message(key(char))
        await wait_until(pilot, lambda: panel.question.value.endswith("?"))
        assert panel.question.value == before + during + after


async def test_questions_sent_in_the_shell_are_asked_apart_from_what_was_typed_after(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    """Enter pressed in the shell, then more typed before the panel came: the shell kept only
    "Enter was pressed", and the panel asked the whole box, "bike?thanks"."""
    load = GatedLoader(settings)
    app = loading_app(load, http, clock, "chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, load.entered.is_set)
        for text in ("How do I unlock a bike?", "\r", "Where do I park?", "\r", "thanks"):
            for char in text:
                app.post_message(events.Key("enter", "\r") if char == "\r" else key(char))
        await wait_until(pilot, lambda: app.screen.query_one("#question", Input).value == "thanks")
        load.opened.set()
        await wait_until(pilot, lambda: len(questions(other)) == 2)
        panel = app.screen.query_one(ChatPanel)
        # Put back once the last question's answer is shown (CI read the box in between).
        await wait_until(pilot, lambda: panel.question.value == "thanks")
        assert questions(other) == ["How do I unlock a bike?", "Where do I park?"]


def questions(desk: DeskService) -> list[str]:
    """The customers' messages stored, oldest first."""
    return [
        message.text
        for conversation in desk.conversations()
        for message in desk.messages(conversation.id)
    ]


async def test_a_burst_typed_all_through_the_start_arrives_whole_and_in_order(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    """A customer typing without pause from the first frame until well after the panel is there,
    then pressing Enter: one key every turn of the event loop, so keys are on their way at every
    step of the swap, and the question asked is every one of them."""
    load = GatedLoader(settings)
    app = loading_app(load, http, clock, "chat", bot=False)
    typed: list[str] = []
    letters = cycle(WORDS)

    def type_one() -> None:
        char = next(letters)
        typed.append(char)
        app.post_message(key(char))

    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, load.entered.is_set)
        load.opened.set()
        # One key per loop turn (a yield, not a wait) until the panel's box has the focus (within
        # the question's length limit)...
        while not app.screen.query("ChatPanel #question:focus"):
            if len(typed) < 1500:
                type_one()
            await asyncio.sleep(0)
        # ...and for as many turns again, while the panel settles in.
        for _ in islice(range(len(typed)), 200):
            type_one()
            await asyncio.sleep(0)
        app.post_message(key("?"))
        app.post_message(events.Key("enter", "\r"))
        await wait_until(pilot, lambda: bool(other.conversations()), timeout=10)
        [question] = other.messages(other.conversations()[0].id)
        assert question.text == ("".join(typed) + "?").strip()


def test_keys_typed_as_helpdesk_chat_is_launched_are_sent_whole(tmp_path: Path) -> None:
    """Typed in the same breath as the command (the terminal holds them until the app reads its
    input): they reached the app before any widget had the focus, and the screen dropped every
    one of them (16 of 16 tries of a tester's). The real command, in a terminal (a pty)."""
    # Enter once the app has the terminal.
    assert questions_typed_at_launch(tmp_path, b"The quick brown fox", then=b"\r") == [
        "The quick brown fox"
    ]


def test_a_question_and_enter_typed_as_helpdesk_chat_is_launched_are_sent(
    tmp_path: Path,
) -> None:
    """Enter typed before the app has the terminal: the terminal's own line editing turns it
    into a line feed, which reaches the app as Ctrl+J, and the question stayed in the box."""
    assert questions_typed_at_launch(tmp_path, b"The quick brown fox\r") == ["The quick brown fox"]


def questions_typed_at_launch(tmp_path: Path, typed: bytes, *, then: bytes = b"") -> list[str]:
    """The customer's messages stored once `helpdesk chat` runs in a terminal (a pty) where
    `typed` was typed before Python had even started, and `then` once the app had the
    terminal."""
    db = tmp_path / "desk.sqlite3"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HELPDESK_", "VALEN_"))}
    env |= {
        "HELPDESK_CONFIG": str(tmp_path / "none.toml"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "TERM": "xterm-256color",
    }
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "chatbot", "chat", "--no-bot", "--db", str(db)],
        stdin=terminal, stdout=terminal, stderr=terminal, env=env, start_new_session=True,
    )  # fmt: skip
    os.close(terminal)
    try:
        os.write(controller, typed)
        os.set_blocking(controller, False)
        deadline = time.monotonic() + 30
        output = b""
        entered = not then
        stored: list[str] = []
        while not stored and time.monotonic() < deadline and process.poll() is None:
            with contextlib.suppress(BlockingIOError, OSError):
                output += os.read(controller, 65536)  # Keep the terminal drained.
            if not entered and ENTER_SCREEN in output:
                os.write(controller, then)
                entered = True
            if db.exists():
                with (
                    contextlib.closing(sqlite3.connect(db)) as conn,
                    contextlib.suppress(sqlite3.Error),
                ):
                    stored = [
                        text
                        for (text,) in conn.execute(
                            "SELECT text FROM entries WHERE author = 'customer'"
                        )
                    ]
            time.sleep(0.05)
        return stored
    finally:
        process.kill()
        process.wait()
        os.close(controller)
