"""A customer's unsent question was kept only as the session ended, and taken (deleted) as it was
put back in the box: a session killed after that (`serve` killed, a crash: no unmount) lost it,
and whatever was typed since. It is now kept as typed (within `SAVE_DRAFT_S`), read back, not
taken, and gone only once sent or cleared, as an agent's reply is."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.desk.models import Author
from chatbot.desk.service import DeskService
from chatbot.drafts import read_draft, save_draft, store_draft
from chatbot.tui.screens import chat
from chatbot.tui.screens.chat import ChatScreen
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.helpers import type_text, wait_until


@pytest.fixture
def kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The chat keeps drafts, as a browser session's does; saved 0.05 s after an edit."""
    folder = tmp_path / "drafts" / "db"
    monkeypatch.setattr(ChatScreen, "drafts", folder)
    monkeypatch.setattr(chat, "SAVE_DRAFT_S", 0.05, raising=False)
    return folder


def on_disk(folder: Path, conversation: int) -> str | None:
    path = folder / f"{conversation}.txt"
    return path.read_text() if path.exists() else None


async def test_a_restored_question_stays_kept_and_follows_the_box(
    make_app: MakeApp, other: DeskService, kept: Path
) -> None:
    conversation = other.start_conversation().id
    other.ask(conversation, "Hello")
    save_draft(kept, conversation, "Where is")
    app = make_app("chat", conversation_id=conversation, bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.screen.query_one(ChatPanel)
        await wait_until(pilot, lambda: panel.question.value == "Where is")
        assert on_disk(kept, conversation) == "Where is"  # Back in the box, and still kept.
        panel.question.focus()
        await type_text(pilot, " my helmet")
        await wait_until(pilot, lambda: on_disk(kept, conversation) == "Where is my helmet")
        await pilot.press("enter")
        await wait_until(pilot, lambda: on_disk(kept, conversation) is None)  # Sent: gone.
        texts = [m.text for m in other.messages(conversation) if m.author is Author.CUSTOMER]
        assert texts == ["Hello", "Where is my helmet"]
        await type_text(pilot, "and")
        await wait_until(pilot, lambda: on_disk(kept, conversation) == "and")
        panel.question.value = ""  # Cleared by hand: no draft any more.
        await wait_until(pilot, lambda: on_disk(kept, conversation) is None)


def test_reading_leaves_the_draft_and_storing_joins_another_tabs(tmp_path: Path) -> None:
    folder = tmp_path / "drafts"
    assert read_draft(folder, 3) == "" and not folder.exists()
    assert store_draft(folder, 3, text="", base="") == "" and not folder.exists()
    base = store_draft(folder, 3, text="refund [b]now[/b]\x1b[2J", base="")
    assert base == "refund [b]now[/b]" == read_draft(folder, 3) == read_draft(folder, 3)
    save_draft(folder, 3, "other tab")  # Another tab's words, unknown to this box.
    # This box's words replaced where they are; the other tab's stay.
    assert store_draft(folder, 3, text="refund now please", base=base) == (
        "refund now please other tab"
    )
    assert store_draft(folder, 3, text="", base=read_draft(folder, 3)) == ""
    assert read_draft(folder, 3) == "" and not (folder / "3.txt").exists()
