"""Three things a keyboard tester saw, each read off the screen at a fixed size:

- Beside the queue in a 60x20 terminal the chat's status line had two lines of 15 columns, seven
  Chinese characters each: "下一位就是您：客服人员会在这里回复您。" ended "客服人员会在这…" (and the
  English "You are next: a person will reply…"). It takes three lines there now.
- The command palette said "No matches found" in English over a Chinese chat.
- A toast stopped two columns short of the screen's right edge (the toast rack's hidden vertical
  scrollbar kept them), where the queue row beneath it showed through ("r…").
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest
from textual.command import CommandInput, CommandPalette
from textual.pilot import Pilot
from textual.widgets._toast import Toast

from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from chatbot.i18n import Locale
from chatbot.notices import status_line
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.chat_panel import ChatPanel, StatusLine
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.helpers import flat, queue_rows, screen_text, wait_until

# -- the status line beside the queue at 60x20 --------------------------------------------------


LONG = "Alexandra Wilhelmina"


def status_shown(panel: ChatPanel) -> str:
    """The status line as drawn, without whitespace: a Chinese character takes two cells, which
    the screenshot's text runs do not show as two characters, and lines break anywhere in it."""
    app = panel.app
    assert isinstance(app, HelpDeskApp)
    return "".join(screen_text(app, panel.query_one("#chat-status", StatusLine)).split())


def whole(panel: ChatPanel, sentence: str) -> bool:
    return status_shown(panel) == "".join(sentence.split())


def waiting_customer(other: DeskService, question: str) -> int:
    conversation = other.start_conversation()
    other.ask(conversation.id, question)
    other.talk_to_person(conversation.id)
    return conversation.id


@pytest.mark.parametrize("locale", ["zh", "en"])
async def test_beside_the_queue_at_60x20_every_status_is_whole(
    make_app: MakeApp, other: DeskService, locale: Locale
) -> None:
    ahead = [waiting_customer(other, f"Where is bike {n}?") for n in (1, 2)]
    app = make_app("all", bot=False)
    async with app.run_test(size=(60, 20)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: bool(screen.query(StatusLine)), timeout=30)
        panel = screen.query_one(ChatPanel)
        panel.question.focus()
        if locale == "zh":
            await pilot.press("f9")
            await wait_until(pilot, lambda: panel.locale == "zh")
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: panel.conversation_id is not None)
        cid = panel.conversation_id
        assert cid is not None
        status = panel.query_one("#chat-status", StatusLine)

        def say(state: State, agent: str | None = None, count: int | None = None) -> str:
            return status_line(state, agent, ahead=count, locale=locale)

        steps: list[tuple[str, Callable[[], object]]] = [
            (say(State.WAITING, count=2), lambda: None),
            (say(State.WAITING, count=0), lambda: [other.claim(c, agent="ben") for c in ahead]),
            # A tester's 20-character name was cut at three lines ("(support agent) i…").
            (say(State.CLAIMED, LONG), lambda: other.claim(cid, agent=LONG)),
            (say(State.RESOLVED), lambda: other.resolve(cid, agent=LONG)),
        ]
        if locale == "zh":
            assert steps[1][0] == "下一位就是您：客服人员会在这里回复您。"
            assert steps[3][0] == "已解决。如还有其他需要，请再次来信。"
        for sentence, move in steps:
            move()
            try:
                await wait_until(pilot, partial(whole, panel, sentence))
            except AssertionError:
                raise AssertionError((sentence, screen_text(app, status))) from None
            assert "…" not in screen_text(app, status)


# -- the command palette's "No matches found" ---------------------------------------------------


async def palette_finds_nothing(app: HelpDeskApp, pilot: Pilot[None], said: str) -> str:
    """Open the palette, search for what no command is called, and return the screen once the
    palette says it found nothing (in `said`)."""
    await pilot.press("ctrl+p")
    await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
    app.screen.query_one(CommandInput).value = "qqxzzy"
    await wait_until(pilot, lambda: said in flat(screen_text(app)))
    return screen_text(app)


async def test_the_palette_says_it_found_nothing_in_the_chats_language(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        panel = app.screen.query_one(ChatPanel)
        await pilot.press("f9")
        await wait_until(pilot, lambda: panel.locale == "zh")
        shown = await palette_finds_nothing(app, pilot, "没有找到匹配的命令")
        assert "No matches found" not in shown
        # Back in English, so is the palette.
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, CommandPalette))
        await pilot.press("f9")
        await wait_until(pilot, lambda: panel.locale == "en")
        shown = await palette_finds_nothing(app, pilot, "No matches found")
        assert "没有找到匹配的命令" not in shown


# -- a toast covers its whole width, to the screen's edge ---------------------------------------

TOAST = "The desk saved your settings: this toast covers the queue's rows."


async def test_nothing_of_the_queue_shows_beside_a_toast(
    make_app: MakeApp, other: DeskService
) -> None:
    for n in range(6):
        waiting_customer(other, f"Question {n} about my bike and the docking station by the river")
    app = make_app("agent", bot=False)
    width, height = 100, 24
    async with app.run_test(size=(width, height), notifications=True) as pilot:
        await wait_until(pilot, lambda: len(queue_rows(app)) == 6)
        # The rows reach the screen's right edge, cut there ("…").
        rows = screen_text(app).splitlines()
        assert all(row.endswith("…") for row in rows[3:9]), rows
        app.notify(TOAST, timeout=600)
        await wait_until(pilot, lambda: bool(app.screen.query(Toast)))
        toast = app.screen.query_one(Toast)

        def beside() -> str:
            """From the toast's left column to the screen's right edge, on each of its rows,
            without the toast's border ("▌", its left edge)."""
            region = toast.region
            lines = screen_text(app).splitlines()
            rows = [lines[row][region.x :] for row in range(region.y, region.bottom)]
            return flat(" ".join(rows).replace("▌", " "))

        await wait_until(pilot, lambda: "covers the queue" in beside())
        # The toast's words only, nothing of the rows beneath.
        assert beside() == TOAST
        assert toast.region.right == width, toast.region  # To the edge, as the rows beneath.
