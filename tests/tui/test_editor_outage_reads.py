"""The editor's reads while its PostgreSQL database (knowledge base and desk) cannot be reached.

A tester found: opening another passage in an outage said the driver's error as a notice
("postgresql://postgres@…: cannot connect to the knowledge base: connection failed: … FATAL: …"),
and Ctrl+G said "…: database unavailable: …" while the tab read "No open content gaps.", which
was false: the gaps were there, they could not be read.
"""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from chatbot.config import Settings, load_settings
from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.editor import EditorScreen
from chatbot.tui.widgets.gap_list import GapList
from tests.conftest import SHIPPED_CACHE
from tests.kb.backends import pg_url
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.editor_helpers import open_editor, open_passage
from tests.tui.helpers import screen_text, wait_until
from tests.tui.postgres_helpers import (
    NOT_DONE,
    NOT_DONE_BACK,
    Outage,
    kb_url,
    locale,
    notices,
    outage,
)

__all__ = ["kb_url", "locale", "outage", "pg_url"]

UNREADABLE = {
    "en": "The content gaps cannot be read just now: the desk's database cannot be reached. They "
    "show here once it is back.",
    "zh": "暂时无法读取内容缺口：无法连接客服系统的数据库。恢复连接后会在这里显示。",
}
NONE = {"en": "No open content gaps.", "zh": "没有待处理的内容缺口。"}
QUESTION = "Can I take my dog with me on the bike?"


@pytest.fixture
def settings(kb_url: str, locale: str) -> Settings:
    # As the tester ran it: the desk and the knowledge base in the same PostgreSQL database.
    return load_settings(
        store={"db": kb_url},
        knowledge_base={"path": kb_url},
        valen={"cache": SHIPPED_CACHE, "replay": "on"},
        ui={"locale": locale},
    )


def raw(lines: list[str], url: str) -> list[str]:
    """The lines that carry the driver's words."""
    return [
        line
        for line in lines
        if any(word in line for word in ("postgresql://", "FATAL", "connection failed", url))
    ]


def on_screen(app: HelpDeskApp, sentence: str) -> bool:
    """`sentence` on screen, wherever the screen wrapped it (a Chinese one anywhere)."""
    return "".join(sentence.split()) in "".join(screen_text(app).split())


def gap_line(editor: EditorScreen) -> str:
    return str(editor.query_one(GapList).query_one("#gap-reply", Static).render())


async def test_opening_a_passage_in_an_outage_says_so_plainly(
    make_app: MakeApp, kb_url: str, outage: Outage, locale: str
) -> None:
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        assert editor.query_one("#form-id", Input).value == "helmet"
        outage.start()
        await open_passage(pilot, "refund")
        await wait_until(pilot, lambda: NOT_DONE[locale] in notices(editor), timeout=10)
        assert not raw(notices(editor), kb_url), notices(editor)
        assert editor.query_one("#form-id", Input).value == "helmet"  # Stays on the old one.
        outage.end()
        await wait_until(pilot, lambda: NOT_DONE_BACK[locale] in notices(editor), timeout=10)
        await open_passage(pilot, "refund")  # And it opens, as that says.
        await wait_until(pilot, lambda: editor.query_one("#form-id", Input).value != "helmet")


async def gap_escalated(pilot: Pilot[None], other: DeskService) -> None:
    """A question the bot handed to a person: a content gap."""
    conversation = other.ask(None, QUESTION).conversation
    await wait_until(pilot, lambda: other.conversation(conversation.id).pending == 0, timeout=10)
    assert other.conversation(conversation.id).state is State.WAITING


async def test_the_gaps_tab_says_it_cannot_read_them_and_shows_them_once_back(
    make_app: MakeApp, kb_url: str, outage: Outage, locale: str, other: DeskService
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        await gap_escalated(pilot, other)
        editor = await open_editor(pilot)
        outage.start()
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: gap_line(editor) == UNREADABLE[locale], timeout=10)
        assert not on_screen(app, NONE[locale])
        assert on_screen(app, UNREADABLE[locale])  # Wrapped, not cut off.
        assert not raw(notices(editor), kb_url), notices(editor)
        outage.end()  # No key pressed: the desk's feed hears it is back, and they are read.
        gaps = editor.query_one(GapList)
        await wait_until(pilot, lambda: [g.question for g in gaps.gaps] == [QUESTION], timeout=15)
        assert gap_line(editor) != UNREADABLE[locale]


async def test_the_next_ctrl_g_once_it_is_back_shows_them(
    make_app: MakeApp, kb_url: str, outage: Outage, locale: str, other: DeskService
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        await gap_escalated(pilot, other)
        editor = await open_editor(pilot)
        await pilot.press("ctrl+g")
        gaps = editor.query_one(GapList)
        await wait_until(pilot, lambda: len(gaps.gaps) == 1, timeout=10)
        await pilot.press("ctrl+f")  # Back to the passages: the gaps are not on screen.
        outage.start()
        await pilot.press("ctrl+g")  # Shown, they are read again: they cannot be.
        await wait_until(pilot, lambda: gap_line(editor) == UNREADABLE[locale], timeout=10)
        assert gaps.gaps == []
        assert not raw(notices(editor), kb_url), notices(editor)
        await pilot.press("ctrl+f")
        outage.end()
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: [g.question for g in gaps.gaps] == [QUESTION], timeout=10)
        assert gap_line(editor) != UNREADABLE[locale]
