"""The note above a new chat whose memory (`terminal-chat.json`) could not be read says why in
the note's language, and again in the other one after F9.

In Chinese it read `上次对话留下的内容无法读取（not valid JSON）：这是一个新的对话。`: the app's own
reasons were not in the catalog. The system's (`strerror`) stay as the system says them."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.drafts import drafts_for
from chatbot.tui.screens.chat import TERMINAL_CHAT, UnreadNote
from tests.tui.helpers import flat, screen_text, wait_until
from tests.tui.resume_helpers import START_S, chat_ready, state, terminal_app

__all__ = ["state"]  # A fixture.

SIZE = (100, 24)
"""Wide enough for the note on one line in both languages."""


@pytest.mark.parametrize(
    ("kept", "english", "chinese"),
    [
        ('{"conversation": 1, "wor', "not valid JSON", "不是有效的 JSON"),
        ('{"conversation": "1"}', "not a conversation number and words", "不是对话编号和文字"),
        (None, "is a directory, not a regular file", "是一个文件夹，不是普通文件"),
    ],
)
async def test_the_reason_a_memory_could_not_be_read_follows_the_chats_language(
    kept: str | None, english: str, chinese: str, db_path: Path, state: Path
) -> None:
    memory = drafts_for(str(db_path)) / TERMINAL_CHAT
    if kept is None:
        memory.mkdir(parents=True)
    else:
        memory.parent.mkdir(parents=True)
        memory.write_text(kept)
    app = terminal_app("chat", db=db_path)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, app)
        await wait_until(pilot, lambda: bool(panel.query(UnreadNote)), timeout=START_S)
        note = panel.query_one(UnreadNote)

        def said() -> str:
            return flat(screen_text(app, note))

        english_note = (
            f"What your last chat left could not be read ({english}): this is a new chat."
        )
        await wait_until(pilot, lambda: said() == english_note, timeout=START_S)
        await pilot.press("f9")
        chinese_note = f"上次对话留下的内容无法读取（{chinese}）：这是一个新的对话。"
        await wait_until(pilot, lambda: said() == chinese_note, timeout=START_S)
        await pilot.press("f9")
        await wait_until(pilot, lambda: said() == english_note, timeout=START_S)
        await pilot.press("ctrl+q")


async def test_a_systems_reason_is_said_as_the_system_says_it(db_path: Path, state: Path) -> None:
    memory = drafts_for(str(db_path)) / TERMINAL_CHAT
    memory.parent.mkdir(parents=True)
    # A file that cannot be opened: the system's words, untranslated, in both languages.
    memory.symlink_to(memory)  # A link to itself: "Too many levels of symbolic links".
    app = terminal_app("chat", db=db_path)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, app)
        await wait_until(pilot, lambda: bool(panel.query(UnreadNote)), timeout=START_S)
        note = panel.query_one(UnreadNote)
        reason = "Too many levels of symbolic links"
        await wait_until(
            pilot, lambda: f"({reason})" in flat(screen_text(app, note)), timeout=START_S
        )
        await pilot.press("f9")
        await wait_until(
            pilot,
            lambda: f"上次对话留下的内容无法读取（{reason}）" in flat(screen_text(app, note)),
            timeout=START_S,
        )
        await pilot.press("ctrl+q")
