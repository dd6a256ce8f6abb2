"""A terminal's customer chat whose memory (the drafts folder in the user's state directory)
cannot be written, or holds something unreadable, says so.

On a read-only state directory, quitting with words typed said "Conversation #1 is still open,
with what you typed: `helpdesk chat --db …` opens it again."; that command opened a new, empty
chat: the words and the way back to #1 were gone, and nothing had said so. A corrupt or
wrong-typed `terminal-chat.json` (or a folder by that name) started a new chat silently, the
words kept in `1.txt` out of reach; a FIFO named `1.txt` left the chat half-loaded and hung it on
quit."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from chatbot.drafts import drafts_for, read_draft, save_draft
from chatbot.tui.screens.chat import TERMINAL_CHAT, ResumedNote, UnreadNote
from tests.readonly import read_only
from tests.tui.conftest import Q1
from tests.tui.helpers import flat, screen_text, type_text, wait_until
from tests.tui.resume_helpers import (
    SIZE,
    START_S,
    chat_ready,
    next_in_line,
    state,
    status,
    terminal_app,
)

__all__ = ["state"]  # A fixture.

WORDS = "words I typed ro-marker"


def waiting_conversation(other: DeskService) -> int:
    conversation = other.ask(None, Q1).conversation.id
    other.talk_to_person(conversation)
    return conversation


async def test_words_that_cannot_be_kept_are_said_at_quit_with_a_command_that_still_works(
    db_path: Path, state: Path, other: DeskService
) -> None:
    state.mkdir()
    command = f"helpdesk chat --db {db_path} --no-bot"
    reason = "Read-only file system" if os.geteuid() == 0 else "Permission denied"
    with read_only(state):
        app = terminal_app("chat", db=db_path)
        async with app.run_test(size=SIZE) as pilot:
            panel = await chat_ready(pilot, app)
            await next_in_line(pilot, panel)
            await type_text(pilot, WORDS)
            await pilot.press("ctrl+q")
            await wait_until(pilot, lambda: not app.is_running, timeout=START_S)
    assert app.farewell == (
        f"Conversation #1 is still open, but what you typed could not be kept ({reason}):"
        f" `{command} --conversation 1` opens it again."
    )
    assert other.conversation(1).state is State.WAITING
    # The command said opens it.
    again = terminal_app("chat", "--conversation", "1", db=db_path)
    async with again.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, again)
        await wait_until(pilot, lambda: panel.conversation_id == 1, timeout=START_S)
        await wait_until(pilot, lambda: "You are next" in status(panel), timeout=START_S)


async def test_words_typed_before_any_conversation_that_cannot_be_kept_are_said(
    db_path: Path, state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The state directory under a regular file: nothing can be made there, even by root.
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "file" / "state"))
    app = terminal_app("chat", db=db_path)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, app)
        panel.question.focus()
        await type_text(pilot, "half a question")
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: not app.is_running, timeout=START_S)
    assert app.farewell == "What you typed could not be kept (Not a directory)."


async def test_a_memory_that_is_a_folder_is_said_and_the_words_are_reached_all_the_same(
    db_path: Path, state: Path, other: DeskService
) -> None:
    folder = drafts_for(str(db_path))
    (folder / TERMINAL_CHAT).mkdir(parents=True)
    app = terminal_app("chat", db=db_path)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, app)
        await wait_until(pilot, lambda: bool(panel.query(UnreadNote)), timeout=START_S)
        note = panel.query_one(UnreadNote)
        said = "What your last chat left could not be read (is a directory, not a regular file):"
        await wait_until(pilot, lambda: said in flat(screen_text(app, note)), timeout=START_S)
        await next_in_line(pilot, panel)
        await type_text(pilot, WORDS)
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: not app.is_running, timeout=START_S)
    # The words are kept with their conversation; which conversation it was could not be noted.
    assert read_draft(folder, 1) == WORDS
    assert app.farewell == (
        "Conversation #1 is still open, but it could not be noted for next time (Is a directory):"
        f" `helpdesk chat --db {db_path} --no-bot --conversation 1` opens it again."
    )
    again = terminal_app("chat", "--conversation", "1", db=db_path)
    async with again.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, again)
        await wait_until(pilot, lambda: panel.question.value == WORDS, timeout=START_S)
        assert not panel.query(UnreadNote)  # Not a new chat: nothing to say of the memory.


@pytest.mark.parametrize(
    ("kept", "reason"),
    [
        ('{"conversation": 1, "wor', "not valid JSON"),
        ('{"conversation": "1", "words": ""}', "not a conversation number and words"),
        ('[1, "words"]', "not a conversation number and words"),
    ],
)
async def test_an_unreadable_memory_is_said_above_the_new_chat(
    kept: str, reason: str, db_path: Path, state: Path, other: DeskService
) -> None:
    conversation = waiting_conversation(other)
    folder = drafts_for(str(db_path))
    save_draft(folder, conversation, WORDS)
    (folder / TERMINAL_CHAT).write_text(kept)
    app = terminal_app("chat", db=db_path)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, app)
        await wait_until(pilot, lambda: bool(panel.query(UnreadNote)), timeout=START_S)
        note = panel.query_one(UnreadNote)
        said = f"What your last chat left could not be read ({reason}): this is a new chat."
        await wait_until(pilot, lambda: said == flat(screen_text(app, note)), timeout=START_S)
        assert panel.conversation_id is None
        await pilot.press("ctrl+q")
    # The kept words are left where `--conversation` finds them.
    assert read_draft(folder, conversation) == WORDS


@contextlib.contextmanager
def released(fifo: Path) -> Iterator[list[bool]]:
    """Whatever waits on opening `fifo` is given a writer after 10 s, so that it ends (and the
    test fails, the list yielded then holding True) rather than hanging."""
    done, waited = threading.Event(), [False]

    def release() -> None:
        if done.wait(10):
            return
        while not done.is_set():
            with contextlib.suppress(OSError):  # ENXIO: no reader waits.
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                waited[0] = True
            done.wait(0.2)

    watchdog = threading.Thread(target=release, daemon=True)
    watchdog.start()
    try:
        yield waited
    finally:
        done.set()
        watchdog.join()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
async def test_a_fifo_where_the_words_are_kept_is_never_waited_on(
    db_path: Path, state: Path, other: DeskService
) -> None:
    conversation = waiting_conversation(other)
    folder = drafts_for(str(db_path))
    folder.mkdir(parents=True)
    (folder / TERMINAL_CHAT).write_text(json.dumps({"conversation": conversation}))
    fifo = folder / f"{conversation}.txt"
    os.mkfifo(fifo)
    with released(fifo) as waited:
        app = terminal_app("chat", db=db_path)
        async with app.run_test(size=SIZE) as pilot:
            panel = await chat_ready(pilot, app)
            await wait_until(pilot, lambda: bool(panel.query(ResumedNote)), timeout=START_S)
            assert panel.conversation_id == conversation
            panel.question.focus()
            await type_text(pilot, WORDS)
            await pilot.press("ctrl+q")
            await wait_until(pilot, lambda: not app.is_running, timeout=START_S)
    assert waited == [False]
    assert app.farewell == (
        f"Conversation #{conversation} is still open, with what you typed:"
        f" `helpdesk chat --db {db_path} --no-bot` opens it again."
    )
    assert read_draft(folder, conversation) == WORDS  # A file of its own now.
