"""A customer whose first message was English, then asking a whole question in Chinese
(`电动车电池能骑多远？`), had it searched in the English passages only: "The bot could not
answer this from the help center", though the Chinese e-bike passage answers it. The question
now switches the conversation to Chinese: it is searched in the Chinese passages, and the chat
turns Chinese with it (no Valen answer is recorded for Chinese, so in replay mode the customer
is told, in Chinese, that it could not be checked). A mixed question leaves the chat English."""

from __future__ import annotations

from chatbot.desk.service import DeskService
from chatbot.engine.models import Reason
from chatbot.i18n import detect_locale
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.tui.conftest import Q1, MakeApp
from tests.tui.helpers import ask, chat_text, wait_until

BATTERY_ZH = "电动车电池能骑多远？"
MIXED = "我的 e-bike battery 没电了 what should I do now"
SIZE = (100, 32)


def locale(app: HelpDeskApp) -> str:
    return app.screen.query_one(ChatPanel).locale


async def test_a_question_in_chinese_turns_an_english_chat_chinese(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)
        assert "Source: Charged twice for one ride" in chat_text(app)
        await ask(pilot, BATTERY_ZH)
        await wait_until(pilot, lambda: "没有录制好的判断" in chat_text(app))
        shown = chat_text(app)
        assert BATTERY_ZH in shown and locale(app) == "zh"
        assert "The bot could not answer this" not in shown and "机器人无法根据" not in shown
        assert "下一位就是您：客服人员会在这里回复您。" in shown  # The status line.
        # The English answer is shown as written, everything around it in Chinese.
        assert "Charged twice for one ride? The first charge" in shown and "来源：" in shown
        conversation = other.conversation(1)
        assert conversation.locale == "zh"
        # Searched in the Chinese passages, the e-bike one among them.
        _, decided = other.decisions(1)
        assert decided.decision.reason is Reason.NOT_JUDGED
        assert "e-bike-battery" in [c.id for c in decided.decision.candidates]
        assert all(detect_locale(c.text) == "zh" for c in decided.decision.candidates)


async def test_a_mixed_question_leaves_the_chat_english(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)
        await ask(pilot, MIXED)
        assert locale(app) == "en" and other.conversation(1).locale is None
        assert "Source: Charged twice for one ride" in chat_text(app)
