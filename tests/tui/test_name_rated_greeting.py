"""A tester's findings:

- The first claim's name dialog came filled with the OS login (`root`): an agent who pressed Enter
  showed customers "root (support agent) is helping you". The box is empty now; Enter on it says
  what is needed and keeps asking.
- A lone number typed once the conversation was rated emptied the box and showed nothing: a line
  above the box now says the rating given, until the customer types on.
- `helpdesk` at 80x24 opened with its chat scrolled to the greeting's end ("cannot."): before
  anything is written the chat shows its start; once messages come, it follows the newest."""

from __future__ import annotations

import getpass
from pathlib import Path

import httpx
import pytest
from textual.widgets import Input

from chatbot.config import load_settings
from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.screens.dialogs import NameDialog
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.tui.conftest import Q1, FrozenClock, MakeApp
from tests.tui.desk_helpers import customer_words, resolved_by_another_agent, waiting
from tests.tui.helpers import (
    ask,
    chat_panel_ready,
    flat,
    footer_offers,
    screen_text,
    type_text,
    wait_until,
)

GREETING_START = "Hi! Ask anything about"
GREETING_START_ZH = "您好！关于租车"

# -- 1. the first claim's name dialog ---------------------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_the_name_box_starts_empty_and_an_empty_name_is_refused_in_place(
    tmp_path: Path,
    http: httpx.AsyncClient,
    clock: FrozenClock,
    other: DeskService,
    size: tuple[int, int],
) -> None:
    settings = load_settings(store={"db": tmp_path / "helpdesk.sqlite3"})
    assert settings.agent.name is None
    app = create_app(settings, mode="agent", http=http, clock=clock, timings=False)
    async with app.run_test(size=size) as pilot:
        conversation = waiting(other)
        await app.open_conversation(conversation)
        await wait_until(pilot, lambda: footer_offers(app, "claim"))
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, NameDialog))
        dialog = app.screen
        await wait_until(pilot, lambda: bool(dialog.query("#name-input")))
        name_box = dialog.query_one("#name-input", Input)
        await wait_until(pilot, lambda: "e.g. Ana" in screen_text(app))
        # Not the login (`root` in a container): Enter took it as the name customers see.
        assert name_box.value == ""
        login = getpass.getuser()
        assert login not in name_box.value
        for typed in ("", "   "):
            name_box.value = typed
            await pilot.press("enter")
            await wait_until(
                pilot, lambda: "Type the name customers will see." in flat(screen_text(app))
            )
            assert app.screen is dialog and dialog.is_active
            assert other.conversation(conversation).state is State.WAITING
            assert app.services.agent is None
        name_box.clear()
        await type_text(pilot, "Ana Lima")
        await pilot.press("enter")
        await wait_until(pilot, lambda: other.conversation(conversation).agent == "Ana Lima")
        assert app.services.agent == "Ana Lima"


# -- 2. a lone number once rated --------------------------------------------------------------


def error_line(app: HelpDeskApp, panel: ChatPanel) -> str:
    return flat(screen_text(app, panel.error)) if panel.error.display else ""


@pytest.mark.parametrize(
    ("mode", "size"), [("chat", (80, 24)), ("all", (80, 24)), ("chat", (40, 30))]
)
async def test_a_lone_number_once_rated_says_the_rating_given_and_is_not_sent(
    make_app: MakeApp, other: DeskService, mode: str, size: tuple[int, int]
) -> None:
    app = make_app(mode, bot=False)
    async with app.run_test(size=size) as pilot:
        panel = await chat_panel_ready(pilot)
        cid = await resolved_by_another_agent(pilot, panel, other)
        panel.question.focus()
        panel.question.value = "4"
        await pilot.press("enter")
        await wait_until(pilot, lambda: not panel.rating.display)
        assert not panel.error.display
        panel.question.value = "5"
        await pilot.press("enter")
        said = "You already rated this conversation 4 out of 5."
        await wait_until(pilot, lambda: error_line(app, panel) == said)
        # Not sent: it would reopen the conversation for a person. Kept in the box, to correct.
        assert panel.question.value == "5"
        assert other.conversation(cid).state is State.RESOLVED
        assert customer_words(other, cid) == ["Where is my bike?"]
        # Typing on takes the line away.
        await type_text(pilot, "Th")
        await wait_until(pilot, lambda: not panel.error.display)
        # Said again for another lone number, and gone with something else sent.
        panel.question.value = "３"
        await pilot.press("enter")
        await wait_until(pilot, lambda: error_line(app, panel) == said)
        panel.question.value = "Thanks, one more thing"
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(customer_words(other, cid)) == 2)
        await wait_until(pilot, lambda: not panel.error.display)


async def test_the_rated_line_is_said_in_chinese_too(make_app: MakeApp, other: DeskService) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await chat_panel_ready(pilot)
        cid = await resolved_by_another_agent(pilot, panel, other)
        panel.question.value = "2"
        await pilot.press("enter")
        await wait_until(pilot, lambda: not panel.rating.display)
        panel.question.value = "5"
        await pilot.press("enter")
        said = "You already rated this conversation 2 out of 5."
        await wait_until(pilot, lambda: error_line(app, panel) == said)
        await pilot.press("f9")  # The line follows the switch, with its number.
        said = "您已经给这次对话打了2分（满分5分）。"
        await wait_until(pilot, lambda: "".join(error_line(app, panel).split()) == said)
        assert other.conversation(cid).state is State.RESOLVED


# -- 3. the greeting before anything is written -----------------------------------------------


def first_chat_line(app: HelpDeskApp, panel: ChatPanel) -> str:
    """The first line of the chat's log with words on it, as drawn."""
    lines = screen_text(app, panel.log_view).splitlines()
    return next((line.strip() for line in lines if line.strip()), "")


@pytest.mark.parametrize(
    ("mode", "size", "locale", "start"),
    [
        ("all", (80, 24), "en", GREETING_START),
        ("chat", (60, 20), "en", GREETING_START),
        ("chat", (60, 14), "zh", GREETING_START_ZH),
        ("all", (80, 16), "zh", GREETING_START_ZH),
    ],
)
async def test_the_chat_opens_at_its_greeting_then_follows_the_newest(
    make_app: MakeApp, mode: str, size: tuple[int, int], locale: str, start: str
) -> None:
    app = make_app(mode, customer_locale=locale)
    async with app.run_test(size=size) as pilot:
        panel = await chat_panel_ready(pilot)
        log = panel.log_view
        await wait_until(pilot, lambda: log.max_scroll_y > 0)  # It overflows.
        await wait_until(pilot, lambda: first_chat_line(app, panel).startswith(start))
        await pilot.pause()
        assert log.scroll_y == 0 and not log.is_anchored
        if locale == "zh":
            return
        # A window made smaller keeps the start in view too.
        height = log.size.height
        await pilot.resize_terminal(size[0], size[1] - 2)
        await wait_until(pilot, lambda: log.size.height < height)
        await pilot.pause()
        assert first_chat_line(app, panel).startswith(start)
        # Once the customer writes, the chat follows the newest entry, as before.
        await ask(pilot, Q1)
        await wait_until(pilot, lambda: log.is_anchored and log.scroll_y == log.max_scroll_y)
        assert not first_chat_line(app, panel).startswith(start)
        # A new chat (Ctrl+B) shows the greeting from its start again.
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: panel.conversation_id is None)
        await wait_until(pilot, lambda: first_chat_line(app, panel).startswith(start))
        await pilot.pause()
        assert log.scroll_y == 0 and not log.is_anchored


async def test_the_greeting_stays_at_its_start_after_switching_language(
    make_app: MakeApp,
) -> None:
    app = make_app("all")
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await chat_panel_ready(pilot)
        await wait_until(pilot, lambda: first_chat_line(app, panel).startswith(GREETING_START))
        await pilot.press("f9")
        await wait_until(pilot, lambda: panel.locale == "zh")
        await wait_until(pilot, lambda: first_chat_line(app, panel).startswith(GREETING_START_ZH))
        await pilot.press("f9")
        await wait_until(pilot, lambda: first_chat_line(app, panel).startswith(GREETING_START))
        assert panel.log_view.scroll_y == 0


@pytest.mark.parametrize("typed", ["7", "0", "10", "７"])
async def test_a_number_out_of_range_is_no_message_asked_or_rated(
    make_app: MakeApp, other: DeskService, typed: str
) -> None:
    """`7` (or `0`, `10`) typed where the rating is asked, or after it is given, went out as a
    message: the bot judged it and the conversation went back to a person."""
    app = make_app("chat", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await chat_panel_ready(pilot)
        cid = await resolved_by_another_agent(pilot, panel, other)
        panel.question.focus()
        panel.question.value = typed  # The prompt asks: out of range.
        await pilot.press("enter")
        out_of_range = "A rating is a number from 1 to 5."
        await wait_until(pilot, lambda: error_line(app, panel) == out_of_range)
        assert panel.rating.display and panel.question.value == typed  # Kept, to correct.
        await pilot.press("f9")  # Said again in the other language.
        await wait_until(pilot, lambda: "".join(error_line(app, panel).split())
                         == "评分是1到5之间的数字。")  # fmt: skip
        await pilot.press("f9")
        panel.question.value = "3"
        await pilot.press("enter")
        await wait_until(pilot, lambda: not panel.rating.display)
        panel.question.value = typed  # Rated: no second one.
        await pilot.press("enter")
        said = "You already rated this conversation 3 out of 5."
        await wait_until(pilot, lambda: error_line(app, panel) == said)
        assert other.conversation(cid).state is State.RESOLVED
        assert customer_words(other, cid) == ["Where is my bike?"]
