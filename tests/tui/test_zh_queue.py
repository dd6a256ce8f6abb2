"""The agent console in an agent's own language (`--locale zh`): the handoff queue, its palette
entries, the find and team screens and the name dialog speak Chinese; what customers wrote, names,
reason and state codes stay as they are."""

from __future__ import annotations

from textual.dom import DOMNode
from textual.widgets import Input

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.dialogs import NameDialog
from chatbot.tui.screens.editor_home import EditorHomeScreen
from chatbot.tui.screens.find import FindScreen
from chatbot.tui.screens.team import TeamScreen
from chatbot.tui.widgets.agent_console import AgentConsole
from tests.tui.conftest import SIZE, FrozenClock
from tests.tui.desk_helpers import waiting
from tests.tui.helpers import (
    agent_app,
    flat,
    in_chinese,
    queue_rows,
    screen_text,
    type_text,
    wait_until,
)


def text(app: HelpDeskApp) -> str:
    return flat(screen_text(app))


def keys(node: DOMNode) -> set[str]:
    return {b.description for bs in node._bindings.key_to_bindings.values() for b in bs}


async def test_the_queue_in_the_agents_language(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    app = agent_app(in_chinese(settings), http, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: "转人工队列 · 0 个等待中" in text(app))
        assert "没有人在等待。转人工的问题会显示在这里。" in text(app)
        assert "Nobody is waiting" not in text(app) and "Handoff queue" not in text(app)

        first = waiting(other, "Where is my helmet?")
        mine = other.start_conversation().id  # Asked for a person before asking anything.
        other.talk_to_person(mine)
        other.claim(mine, agent="ana")
        clock.advance(180)
        await wait_until(
            pilot, lambda: len(queue_rows(app)) == 2 and "转人工队列 · 1 个等待中" in text(app)
        )
        shown = text(app)
        assert "转人工队列 · 1 个等待中 · 1 个由您接手" in shown
        assert "# 状态" in shown and "原因" in shown and "得分" in shown and "问题" in shown
        waiting_row, claimed_row = queue_rows(app)
        assert waiting_row[1:] == (str(first), "已等待 3m 00s", "customer-asked", "–",
                                   "Where is my helmet?")  # fmt: skip
        assert claimed_row[2:] == ("由 ana 接手 3m", "customer-asked", "–", "（还没有问题）")
        for english in ("Handoff queue", "waiting", "yours", "Status", "Reason", "Top",
                        "Question", "claimed by", "(no question yet)"):  # fmt: skip
            assert english not in shown, english
        assert {"上移", "下一页", "第一项"} <= keys(app.screen.query_one("QueueTable"))

        # Narrow: the statuses take their short form under a short heading.
        await pilot.resize_terminal(60, 24)
        await wait_until(pilot, lambda: "# 等待" in text(app))
        assert "Wait" not in text(app)

        # The command palette: the console's entries and the app's own.
        console = app.screen.query_one(AgentConsole)
        entries = {(c.title, c.help) for c in console.palette_commands()}
        assert ("查找对话", "搜索对话内容，可重新打开已解决的对话") in entries
        assert ("团队：每位客服接手的对话", "谁在处理哪个对话") in entries
        # The state in Chinese, as the header says it; the reason a code.
        assert (f"打开对话 #{first}", "等待中，customer-asked") in entries
        system = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert system["知识库"] == "编辑段落、试问问题、填补内容缺口"
        assert system["统计分析"].startswith("客服台的运行情况：解决率")
        assert system["主题"] == "更换当前主题" and "按键" in system and "退出" in system
        assert not {"Theme", "Keys", "Knowledge base", "Analytics"} & set(system)


async def test_find_team_and_the_name_dialog_in_the_agents_language(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    app = agent_app(in_chinese(settings), http, clock)
    async with app.run_test(size=SIZE) as pilot:
        helmet = waiting(other, "Where is my helmet?")
        other.claim(helmet, agent="ben")
        waiting(other, "Something else entirely")
        clock.advance(300)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)

        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        find = app.screen
        assert isinstance(find, FindScreen)
        assert "关闭" in keys(find)
        assert find.query_one("#find-input", Input).placeholder == "例如：头盔，或 #12"
        await type_text(pilot, "helmet")
        await wait_until(pilot, lambda: len(find.hits) == 1 and "找到 1 个" in text(app))
        shown = text(app)
        assert "查找对话：输入其中的词语或对话编号" in shown
        assert "找到 1 个。回车打开；按 ↓ 选择。" in shown
        # The state in Chinese, what the customer wrote as written.
        assert f"#{helmet} 已接手（客服 ben） · 2026-01-05 09:00" in shown
        assert "Where is my helmet?" in shown  # On the line under it.
        assert "Find a conversation" not in shown and "found" not in shown
        await type_text(pilot, "zzzz")
        await wait_until(pilot, lambda: "没有找到。" in text(app))
        await pilot.press("escape")

        await pilot.press("f4")
        await wait_until(pilot, lambda: isinstance(app.screen, TeamScreen))
        team = app.screen
        assert isinstance(team, TeamScreen)
        await wait_until(pilot, lambda: len(team.claims) == 1)
        await pilot.pause()
        shown = text(app)
        assert "各客服接手的对话（回车打开，Esc 关闭）" in shown
        assert f"#{helmet} 由 ben 接手 5m · Where is my helmet?" in shown
        assert "Claims by agent" not in shown and "claimed by" not in shown
        other.release(helmet, agent="ben")
        await wait_until(pilot, lambda: "目前没有已接手的对话。" in text(app))
        assert "Nobody holds a claim" not in text(app)
        await pilot.press("escape")

        # The name dialog, as the console asks it on a first claim.
        app.run_worker(app.ask_agent_name())
        await wait_until(pilot, lambda: isinstance(app.screen, NameDialog))
        await pilot.pause()
        shown = text(app)
        assert "您的名字（客户会看到）" in shown
        assert "在您加入对话时以及您的回复上方显示。" in shown
        assert "Your name" not in shown and "Shown when you join" not in shown
        assert "取消" in keys(app.screen)
        app.screen.query_one("#name-input", Input).value = "  "
        await pilot.press("enter")
        await wait_until(pilot, lambda: "请输入客户将看到的名字。" in text(app))
        assert "Type the name" not in text(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, NameDialog))
        assert app.services.agent == "ana"  # Cancelled: nothing changed.

        # The screen behind a closed editor (`helpdesk editor`).
        await app.push_screen(EditorHomeScreen(app.services))
        await pilot.pause()
        assert "知识库编辑器已关闭。按 F2 重新打开，或按 Ctrl+Q 结束本次会话。" in text(app)
        assert "is closed" not in text(app)
