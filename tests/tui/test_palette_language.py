"""The command palette speaks the screen's language: its search box and Textual's own entries
too, which said "Search for commands…", "Theme", "Quit" in English over a Chinese chat."""

from __future__ import annotations

from textual.command import CommandInput, CommandPalette

from chatbot.config import Settings
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.tui.conftest import SIZE, FrozenClock, MakeApp
from tests.tui.helpers import agent_app, in_chinese, screen_text, wait_until

ZH_PLACEHOLDER = "搜索命令…"


async def test_the_palette_searches_in_chinese_over_a_chinese_chat(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        panel = app.screen.query_one(ChatPanel)
        await pilot.press("f9")
        await wait_until(pilot, lambda: panel.locale == "zh")
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        field = app.screen.query_one(CommandInput)
        assert field.placeholder == ZH_PLACEHOLDER
        await wait_until(pilot, lambda: ZH_PLACEHOLDER in screen_text(app))
        assert "Search for commands" not in screen_text(app)
        # Textual's own entries too (the chat's were already), as the footer's keys are.
        system = {command.title for command in app.get_system_commands(app.screen)}
        assert {"主题", "退出", "按键"} <= system and not {"Theme", "Quit", "Keys"} & system
        # Back in English, the palette is too.
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, CommandPalette))
        await pilot.press("f9")
        await wait_until(pilot, lambda: panel.locale == "en")
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        assert app.screen.query_one(CommandInput).placeholder == "Search for commands…"


async def test_an_agents_palette_searches_in_their_language(
    settings: Settings, http: object, clock: FrozenClock
) -> None:
    app = agent_app(in_chinese(settings), http, clock)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.started)
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        assert app.screen.query_one(CommandInput).placeholder == ZH_PLACEHOLDER
