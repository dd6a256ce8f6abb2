"""A conversation's state for an agent reading Chinese: the header said `已等待 14s` while it
waited and `对话 #9 · resolved · customer-asked` once resolved, Find's results `#9  waiting ·
…` under a Chinese title, and the command palette `打开对话 #9` over `waiting, customer-asked`.
The state is a Chinese word in each; the reason stays a code."""

from __future__ import annotations

from textual.widgets import Static

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.find import FindScreen
from tests.tui.conftest import FrozenClock
from tests.tui.desk_helpers import waiting
from tests.tui.helpers import (
    agent_app,
    flat,
    in_chinese,
    offered,
    palette_ready,
    screen_text,
    type_text,
    wait_until,
)


def header(app: HelpDeskApp) -> str:
    return str(app.screen.query_one("#conversation-header", Static).render())


async def test_states_are_said_in_chinese_in_the_header_and_find(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    waits = waiting(other, "Where is my helmet?")
    done = waiting(other, "My helmet strap broke")
    other.claim(done, agent="ben")
    other.resolve(done, agent="ben")
    app = agent_app(in_chinese(settings), http, clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        await type_text(pilot, "helmet")
        results = app.screen.query_one("#find-results")
        await wait_until(pilot, lambda: f"#{done}" in screen_text(app, results))
        found = flat(screen_text(app, results))
        assert f"#{waits} 等待中 · " in found, found
        assert f"#{done} 已解决（客服 ben） · " in found, found
        for english in ("waiting", "resolved", "claimed"):
            assert english not in found, english
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, FindScreen))

        await app.open_conversation(done)
        await wait_until(pilot, lambda: header(app).startswith(f"对话 #{done} · "))
        assert header(app) == f"对话 #{done} · 已解决 · customer-asked"
        await app.open_conversation(waits)
        await wait_until(pilot, lambda: header(app).startswith(f"对话 #{waits} · "))
        assert header(app) == f"对话 #{waits} · 已等待 0s · customer-asked"


async def test_the_command_palettes_conversations_say_their_state_in_chinese(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    waits = waiting(other, "Where is my helmet?")
    app = agent_app(in_chinese(settings), http, clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: "Where is my helmet?" in screen_text(app))
        await pilot.press("ctrl+p")
        await type_text(pilot, f"{waits}")
        await palette_ready(pilot, f"{waits}")
        assert offered(app, f"打开对话 #{waits}")
        assert offered(app, "等待中，customer-asked")
        assert not offered(app, "waiting")
