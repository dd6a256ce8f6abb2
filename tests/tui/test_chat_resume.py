"""A terminal customer (`helpdesk chat --no-bot`) asked a question, asked for a person, typed more
and pressed Ctrl+Q: the app quit at once and said nothing; `helpdesk chat` again opened a fresh
chat, the waiting conversation was found only with `--conversation 1`, the chat never showed its
number, and the words were gone even then. A browser reload brings back both.

The terminal's customer chat (`helpdesk chat`, and beside the queue) now keeps, per database, in
the user's state directory, the conversation it was in and the words typed in it: the next run
opens the conversation again while it is still open (saying so, with its number) with the words
in the box; a resolved or gone one is not opened again. Quitting says on the terminal what is
open and how to open it again. A browser session keeps nothing of this (it has its cookie)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from chatbot.cli.main import build_parser
from chatbot.desk.models import Author, State
from chatbot.desk.service import DeskService
from chatbot.drafts import drafts_for, read_draft, save_draft
from chatbot.tui.screens.chat import TERMINAL_CHAT, ResumedNote
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.tui.conftest import Q1, MakeApp
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
from tests.tui.terminal_helpers import after_the_app, command_in_a_terminal

__all__ = ["state"]  # A fixture.

WORDS = "unsent draft text"


async def test_helpdesk_chat_reopens_the_waiting_conversation_with_its_unsent_words(
    db_path: Path, state: Path, other: DeskService
) -> None:
    app = terminal_app("chat", db=db_path)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, app)
        await next_in_line(pilot, panel)
        await type_text(pilot, WORDS)
        await pilot.press("ctrl+q")  # No question asked: nothing is lost by quitting.
        await wait_until(pilot, lambda: not app.is_running, timeout=START_S)
    command = f"helpdesk chat --db {db_path} --no-bot"
    assert app.farewell == (
        f"Conversation #1 is still open, with what you typed: `{command}` opens it again."
    )
    assert other.conversation(1).state is State.WAITING
    assert read_draft(drafts_for(str(db_path)), 1) == WORDS

    again = terminal_app("chat", db=db_path)
    async with again.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, again)
        await wait_until(pilot, lambda: panel.question.value == WORDS, timeout=START_S)
        assert panel.conversation_id == 1
        await wait_until(pilot, lambda: "You are next" in status(panel), timeout=START_S)
        back = "Welcome back: this is your conversation #1 from before."
        await wait_until(pilot, lambda: back in flat(screen_text(again)), timeout=START_S)
        await wait_until(pilot, lambda: Q1[:20] in flat(screen_text(again)), timeout=START_S)
        # Sent: the words go out in the same conversation, and are no longer kept.
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: read_draft(drafts_for(str(db_path)), 1) == "", timeout=START_S
        )
        customer = [m.text for m in other.messages(1) if m.author is Author.CUSTOMER]
        assert customer == [Q1, WORDS]
        await pilot.press("ctrl+q")
    assert again.farewell == f"Conversation #1 is still open: `{command}` opens it again."

    # `--conversation` still wins, and finds the words kept with its conversation.
    second = other.ask(None, "Another question").conversation.id
    save_draft(drafts_for(str(db_path)), second, "more words")
    named = terminal_app("chat", "--conversation", str(second), db=db_path)
    async with named.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, named)
        await wait_until(pilot, lambda: panel.question.value == "more words", timeout=START_S)
        assert panel.conversation_id == second
        assert not panel.query(ResumedNote)  # Asked for, not brought back.


async def test_a_resolved_conversation_is_not_reopened_and_its_words_start_the_new_chat(
    db_path: Path, state: Path, other: DeskService
) -> None:
    app = terminal_app("chat", db=db_path)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, app)
        await next_in_line(pilot, panel)
        await type_text(pilot, WORDS)
        await pilot.press("ctrl+q")
    other.claim(1, agent="ana")
    other.resolve(1, agent="ana")

    again = terminal_app("chat", db=db_path)
    async with again.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, again)
        await wait_until(pilot, lambda: panel.question.value == WORDS, timeout=START_S)
        assert panel.conversation_id is None  # A new chat, as before.
        assert not panel.query(ResumedNote)
        await pilot.press("ctrl+q")
    # Kept with the new chat now, not twice.
    assert read_draft(drafts_for(str(db_path)), 1) == ""
    assert again.farewell == (
        f"What you typed is kept: `helpdesk chat --db {db_path} --no-bot` puts it back."
    )
    kept = json.loads((drafts_for(str(db_path)) / TERMINAL_CHAT).read_text())
    assert kept == {"conversation": None, "words": WORDS}
    # Private to the user, as the drafts beside it are.
    assert (drafts_for(str(db_path)) / TERMINAL_CHAT).stat().st_mode & 0o777 == 0o600

    # Sent in the new chat: a new conversation, remembered; nothing is kept of the words.
    third = terminal_app("chat", db=db_path)
    async with third.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, third)
        await wait_until(pilot, lambda: panel.question.value == WORDS, timeout=START_S)
        panel.question.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: panel.conversation_id == 2, timeout=START_S)
        await pilot.press("ctrl+q")
    assert third.farewell == (
        f"Conversation #2 is still open: `helpdesk chat --db {db_path} --no-bot` opens it again."
    )
    kept = json.loads((drafts_for(str(db_path)) / TERMINAL_CHAT).read_text())
    assert kept == {"conversation": 2, "words": ""}


async def test_a_conversation_with_nothing_for_anyone_to_answer_or_gone_is_not_reopened(
    db_path: Path, state: Path, other: DeskService
) -> None:
    folder = drafts_for(str(db_path))
    idle = other.start_conversation().id  # With the bot, nothing pending: nobody will answer.
    folder.mkdir(parents=True)
    for remembered in (idle, 99):  # 99: pruned, or never there.
        (folder / TERMINAL_CHAT).write_text(json.dumps({"conversation": remembered}))
        app = terminal_app("chat", db=db_path)
        async with app.run_test(size=SIZE) as pilot:
            panel = await chat_ready(pilot, app)
            await pilot.pause()
            assert panel.conversation_id is None
            await pilot.press("ctrl+q")
        assert app.farewell is None
        assert not (folder / TERMINAL_CHAT).exists()  # Nothing left to open again.


async def test_the_line_and_the_farewell_follow_the_chats_language(
    db_path: Path, state: Path, other: DeskService
) -> None:
    conversation = other.ask(None, Q1).conversation.id
    other.talk_to_person(conversation)
    folder = drafts_for(str(db_path))
    folder.mkdir(parents=True)
    (folder / TERMINAL_CHAT).write_text(json.dumps({"conversation": conversation}))
    app = terminal_app("chat", db=db_path)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, app)
        await wait_until(pilot, lambda: bool(panel.query(ResumedNote)), timeout=START_S)
        note = panel.query_one(ResumedNote)
        await wait_until(
            pilot, lambda: "conversation #1 from" in flat(screen_text(app, note)), timeout=START_S
        )
        await pilot.press("f9")
        await wait_until(pilot, lambda: panel.locale == "zh", timeout=START_S)
        await wait_until(
            pilot, lambda: "之前的对话 #1" in flat(screen_text(app, note)), timeout=START_S
        )
        await pilot.press("ctrl+q")
    assert app.farewell == (
        f"对话 #1 仍未结束：运行 `helpdesk chat --db {db_path} --no-bot` 即可再次打开。"
    )


async def test_beside_the_queue_the_customers_words_are_kept_too(
    db_path: Path, state: Path, other: DeskService
) -> None:
    """Plain `helpdesk`: the customer's side keeps its words and conversation the same way."""
    app = terminal_app(db=db_path)
    async with app.run_test(size=(120, 36)) as pilot:
        panel = await chat_ready(pilot, app)
        panel.question.focus()
        await type_text(pilot, "half a question")
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: not app.is_running, timeout=START_S)
    assert (
        app.farewell == f"What you typed is kept: `helpdesk --db {db_path} --no-bot` puts it back."
    )

    again = terminal_app(db=db_path)
    async with again.run_test(size=(120, 36)) as pilot:
        panel = await chat_ready(pilot, again)
        await wait_until(pilot, lambda: panel.question.value == "half a question", timeout=START_S)


async def test_a_browsers_chat_keeps_nothing_of_this(
    make_app: MakeApp, state: Path, db_path: Path, other: DeskService
) -> None:
    """As a browser session's app is made (no `keep_chat`): it neither reopens the terminal's
    conversation nor remembers its own."""
    conversation = other.start_conversation().id
    other.talk_to_person(conversation)
    folder = drafts_for(str(db_path))
    folder.mkdir(parents=True)
    (folder / TERMINAL_CHAT).write_text(json.dumps({"conversation": conversation}))
    app = make_app("chat", bot=False, fixed_conversation=True)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.screen.query_one(ChatPanel)
        panel.question.focus()
        await type_text(pilot, Q1)
        await pilot.press("enter")
        await wait_until(pilot, lambda: panel.conversation_id is not None, timeout=START_S)
        assert panel.conversation_id != conversation
        await type_text(pilot, WORDS)
    assert app.farewell is None
    assert json.loads((folder / TERMINAL_CHAT).read_text()) == {"conversation": conversation}
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == [TERMINAL_CHAT]


# -- the real command, in a terminal -------------------------------------------------------------


def test_quitting_helpdesk_chat_says_which_conversation_waits_and_how_to_open_it(
    tmp_path: Path, other: DeskService, db_path: Path
) -> None:
    def state_of() -> State | None:
        with contextlib.suppress(Exception):
            return other.conversation(1).state
        return None

    command = ["chat", "--no-bot", "--db", str(db_path)]
    with command_in_a_terminal(tmp_path, *command, size=(60, 20)) as chat:
        chat.until(lambda: b"Type your question" in chat.output)  # The first screen is up.
        chat.type(b"Where is my refund?\r")
        chat.until(lambda: state_of() is State.BOT)
        chat.type(b"\x14")  # Ctrl+T
        chat.until(lambda: state_of() is State.WAITING)
        chat.type(WORDS.encode() + b"\x11")  # Ctrl+Q
        code = chat.ended()
    assert code == 0
    left = after_the_app(chat.output.decode("utf-8", "replace")).strip()
    # The line, once the terminal is back (beside whatever Python itself may warn of at exit).
    assert (
        f"Conversation #1 is still open, with what you typed: "
        f"`helpdesk chat --db {db_path} --no-bot` opens it again."
    ) in left.splitlines()
    assert "Traceback" not in left


def test_the_command_said_keeps_the_options_that_change_the_answers() -> None:
    """`helpdesk chat --no-bot --kb K --replay off` quit with a conversation open said only
    `helpdesk chat --db …`: run as said, a bot of its own answered from the default knowledge
    base. The options that change the answers come along; `--base-url` does not, as a URL may
    hold the key, and a password in `--kb`'s URL is hidden as in `--db`'s."""
    from chatbot.cli.app import reopening_command

    argv = ["--kb", "postgresql://ed:s3cret@db/kb", "--replay", "off", "--no-bot", "-k", "3",
            "--base-url", "https://valen.test/sk-abcdef", "--db", "/tmp/x y.db"]  # fmt: skip
    said = reopening_command(build_parser("chat").parse_args(["chat", *argv]))
    assert said == (
        "helpdesk chat --db '/tmp/x y.db' --kb postgresql://ed@db/kb --replay off -k 3 --no-bot"
    )
    assert reopening_command(build_parser("").parse_args(["--db", "d.db"])) == "helpdesk --db d.db"
