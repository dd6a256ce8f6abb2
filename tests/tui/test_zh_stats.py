"""The analytics screen (F5) in an agent's language: with `--locale zh` the scripted day's figures
are told in Chinese (numbers, units, reason codes, passage ids and questions as they are), at
80x24 as the English fits there, and the empty period says so in Chinese."""

from __future__ import annotations

import pytest

from chatbot.config import Settings
from tests.desk.helpers import DOCKS
from tests.tui.conftest import FrozenClock
from tests.tui.helpers import agent_app, in_chinese, open_stats, squashed, wait_until

SMALL = (80, 24)


@pytest.mark.usefixtures("day")
async def test_the_figures_in_the_agents_language(
    settings: Settings, http: object, clock: FrozenClock
) -> None:
    app = agent_app(in_chinese(settings), http, clock)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_stats(pilot)
        shown = squashed(app)
        assert "helpdesk—统计分析" in shown  # The sub-title.
        for sentence in [
            "最近7天·9个对话·机器人解决率22.2%（2/9）·4个等待中，最久已等待29m59s",
            "首次回复p503m00sp9011m00s·解决p508m00sp9021m00s",
            "判断耗时p5012msp9040ms·9个问题，4个回答",
            "转人工原因（7）",
            "customer-asked████████████████1",  # Reason codes stay codes.
            "最高得分（8次判断，2次无得分）",
            "回答数",
            "阈值0.704◀",
            "每日对话数：12月30日至1月5日，最多9，今天9",
            "各段落的反馈（绿色为有帮助，红色为没帮助）",
            "card-charged-twice████████████████████1✓1✗",
        ]:
            assert sentence in shown, sentence
        for english in ["analytics", "Last 7 days", "conversations", "bot resolved", "waiting",
                        "oldest", "First reply", "Judgment", "questions", "Escalations",
                        "Top scores", "answers", "at0.70", "Conversations per day", "Dec",
                        "Feedback per passage"]:  # fmt: skip
            assert english not in shown, english
        # The keys, in the footer and their tooltips.
        keys = {b.description: b.tooltip for bs in screen._bindings.key_to_bindings.values()
                for b in bs}  # fmt: skip
        assert {"返回", "时段", "刷新"} <= keys.keys()
        assert keys["时段"] == "最近 7 天、30 天、24 小时、全部"
        assert "返回" in shown and "时段" in shown and "刷新" in shown
        assert "Back" not in shown and "Period" not in shown and "Refresh" not in shown

        # Below the fold: Valen's errors, the content gaps and the hours.
        screen.query_one("#stats-body").scroll_end(animate=False)
        await pilot.pause()
        shown = squashed(app)
        for sentence in [
            "Valen错误：replay-miss5,timeout1",
            "主要内容缺口（被问次数）",
            "2" + "".join(DOCKS.split()),  # The customer's question as asked.
            "每小时问题数（UTC，00至23时）：最忙09:00，9个",
        ]:
            assert sentence in shown, sentence
        assert "errors" not in shown and "Top content gaps" not in shown
        assert "Questions by hour" not in shown and "busiest" not in shown


@pytest.mark.usefixtures("day")
async def test_an_empty_period_in_the_agents_language(
    settings: Settings, http: object, clock: FrozenClock
) -> None:
    app = agent_app(in_chinese(settings), http, clock)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_stats(pilot)
        # A day and a half later, "last 24 hours" holds nothing.
        clock.advance(36 * 3600)
        await pilot.press("p", "p")
        await wait_until(pilot, lambda: screen.period == 2 and screen.stats is not None
                         and screen.stats.conversations == 0)  # fmt: skip
        await wait_until(pilot, lambda: "最近24小时·0个对话" in squashed(app))
        shown = squashed(app)
        assert "最近24小时·0个对话·机器人解决率–（0/0）·4个等待中，最久已等待1d12h" in shown
        assert "各段落的反馈（绿色为有帮助，红色为没帮助）无" in shown  # The empty chart says so.
        assert "none" not in shown and "Last 24 hours" not in shown
        await pilot.press("p")
        await wait_until(pilot, lambda: "全部记录·9个对话" in squashed(app))
