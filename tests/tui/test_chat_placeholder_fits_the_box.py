"""The customer's question box says its placeholder in the box's width, at any terminal size and
in either language, and fits it again when the terminal is resized.

Beside the queue at 60x20 the box holds 23 cells: it wrapped the placeholder at a word and
showed its first line, "Write to Maximiliana" (", press Enter" and the rest of the name gone),
"Rate 1 to 5, or write", "Type your question,". Now the name is cut with …, or a shorter form
is said."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from chatbot.i18n import Locale
from chatbot.text import cells
from chatbot.tui.app import HelpDeskApp
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.tui.conftest import MakeApp
from tests.tui.helpers import burst, chat_panel_ready, flat, screen_text, wait_until

AGENT = "Maximiliana Montgomery-Smythe"
WIDE = (120, 40)
FULL = {
    "en": {
        "bot": "Type your question, press Enter",
        "agent": f"Write to {AGENT}, press Enter",
        "rating": "Rate 1 to 5, or write again",
    },
    "zh": {
        "bot": "输入您的问题，按回车发送",
        "agent": f"写给 {AGENT}，按回车发送",
        "rating": "输入 1 到 5 评分，或再次来信",
    },
}
"""What the box says where it has room (`WIDE`)."""
FITTED: dict[tuple[str, tuple[int, int], Locale], dict[str, str]] = {
    ("all", (60, 20), "en"): {
        "bot": "Type your question",
        "agent": "Write to Maximiliana…",
        "rating": "Rate 1–5, or write",
    },
    ("all", (80, 24), "en"): {
        "bot": "Type your question, press Enter",
        "agent": "Write to Maximilian…, press Enter",
        "rating": "Rate 1 to 5, or write again",
    },
    ("all", WIDE, "en"): FULL["en"],
    ("chat", (60, 20), "en"): FULL["en"],  # The chat alone: room for the whole.
    ("all", (60, 20), "zh"): {
        "bot": "输入您的问题",
        "agent": "写给 Maxim…，按回车发送",
        "rating": "评分 1–5，或来信",
    },
    ("all", (80, 24), "zh"): {
        "bot": "输入您的问题，按回车发送",
        "agent": "写给 Maximiliana Mon…，按回车发送",
        "rating": "输入 1 到 5 评分，或再次来信",
    },
}


def shown(app: HelpDeskApp, panel: ChatPanel) -> str:
    return flat(screen_text(app, panel.question))


async def says(pilot: Pilot[None], panel: ChatPanel, placeholder: str) -> None:
    """Wait until the empty box shows `placeholder`, whole, within the box."""
    app = pilot.app
    assert isinstance(app, HelpDeskApp)
    await wait_until(pilot, lambda: shown(app, panel) == placeholder)
    assert panel.question.value == ""
    assert cells(placeholder) <= panel.question.scrollable_content_region.width


async def claimed_by_the_agent(pilot: Pilot[None], panel: ChatPanel, other: DeskService) -> int:
    """A question asked in the chat, a person asked for, and `AGENT` has it."""
    panel.question.focus()
    await burst(pilot, *"Where is my bike?", "enter")
    await wait_until(pilot, lambda: panel.conversation_id is not None)
    conversation = panel.conversation_id
    assert conversation is not None
    await pilot.press("ctrl+t")
    await wait_until(pilot, lambda: other.conversation(conversation).state is State.WAITING)
    other.claim(conversation, agent=AGENT)
    await wait_until(pilot, lambda: panel.conversation is not None and (
        panel.conversation.state is State.CLAIMED))  # fmt: skip
    return conversation


@pytest.mark.parametrize(("mode", "size", "locale"), list(FITTED))
async def test_the_placeholder_fits_the_box(
    make_app: MakeApp, other: DeskService, mode: str, size: tuple[int, int], locale: Locale
) -> None:
    said = FITTED[mode, size, locale]
    app = make_app(mode, bot=False)
    async with app.run_test(size=size) as pilot:
        panel = await chat_panel_ready(pilot)
        if locale != "en":
            panel.question.focus()
            await pilot.press("f9")
            await wait_until(pilot, lambda: panel.locale == locale)
        await says(pilot, panel, said["bot"])
        conversation = await claimed_by_the_agent(pilot, panel, other)
        await says(pilot, panel, said["agent"])
        other.resolve(conversation, agent=AGENT)
        await wait_until(pilot, lambda: panel.rating.display)
        await says(pilot, panel, said["rating"])


async def test_the_placeholder_is_fitted_again_when_the_terminal_is_resized(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("all", bot=False)
    async with app.run_test(size=WIDE) as pilot:
        panel = await chat_panel_ready(pilot)
        await says(pilot, panel, FULL["en"]["bot"])
        await pilot.resize_terminal(60, 20)
        await says(pilot, panel, "Type your question")
        await claimed_by_the_agent(pilot, panel, other)
        await says(pilot, panel, "Write to Maximiliana…")
        await pilot.resize_terminal(80, 24)
        await says(pilot, panel, "Write to Maximilian…, press Enter")
        await pilot.resize_terminal(*WIDE)
        await says(pilot, panel, FULL["en"]["agent"])
