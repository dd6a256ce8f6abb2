"""The knowledge-base editor in an editor's language: with `--locale zh` at 80x24 the passage list,
the form, its history, the confirmations and the Try it, Content gaps and Synonyms tabs say what
they say in Chinese; passages, ids, reason codes and the knowledge base's own (core) messages
stay as written."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from chatbot.config import Settings
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.editor import Confirm
from chatbot.tui.widgets.try_it import TryItPanel
from tests.tui.conftest import Q1, FrozenClock, editor_settings
from tests.tui.editor_helpers import open_editor
from tests.tui.helpers import agent_app, engine_ready, screen_text, squashed, type_text, wait_until

SMALL = (80, 24)


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy, ui={"locale": "zh"})


def shows(app: HelpDeskApp, *sentences: str) -> bool:
    shown = squashed(app)
    return all("".join(sentence.split()) in shown for sentence in sentences)


def notices(app: HelpDeskApp) -> list[str]:
    return [notification.message for notification in app._notifications]


def assert_english_gone(app: HelpDeskApp, *sentences: str) -> None:
    shown = screen_text(app)
    for sentence in sentences:
        assert sentence not in shown, sentence


async def test_passages_history_and_confirmations_in_the_editors_language(
    settings: Settings, http: object, clock: FrozenClock
) -> None:
    app = agent_app(settings, http, clock)
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        assert shows(app, "搜索段落", "标识", "标题", "标签", "保存", "新建", "删除")
        assert shows(app, "历史", "恢复", "没有更早的版本")
        assert shows(app, "Charged twice for one ride")  # Passages as written.
        assert_english_gone(app, "Search passages", "Title", "Tags", "Save", "New", "Delete",
                            "History", "Restore", "no earlier versions")  # fmt: skip

        # A new passage: the placeholders say what goes where; the model's own message (a core
        # error) stays English.
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: shows(app, "作为回答的来源显示"))
        assert shows(app, "小写短名，如 a-safe-slug", "用逗号分隔", "机器人告诉客户的内容")
        assert shows(app, "id is empty")
        assert_english_gone(app, "shown as the answer's source", "comma, separated",
                            "What the bot tells the customer")  # fmt: skip
        # An id already taken is the form's own check: said in Chinese.
        editor.query_one("#form-id", Input).focus()
        await type_text(pilot, "helmet")
        await wait_until(pilot, lambda: shows(app, "段落 'helmet' 已存在"))
        assert_english_gone(app, "already exists")

        # Leaving the typed form asks first, in Chinese.
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        assert shows(app, "放弃对 helmet 的未保存修改吗？", "放弃", "取消")
        assert_english_gone(app, "Discard your unsaved changes", "Cancel")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is editor)

        # Deleting asks first; the passage id is quoted as it is.
        editor.open_passage("helmet")
        await pilot.pause()
        await pilot.press("f8")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        assert shows(
            app, "删除段落 'helmet' 吗？", "机器人会立即停止用它回答。您可以从它的历史中恢复。"
        )
        assert shows(app, "删除", "取消")
        assert_english_gone(app, "Delete passage", "The bot stops answering", "Cancel")
        keys = {b.description for bs in app.screen._bindings.key_to_bindings.values() for b in bs}
        # Escape cancels, in Chinese; no key says yes (its button does).
        assert "取消" in keys and not {"删除", "Yes", "Delete", "Cancel"} & keys
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is editor)

        # A saved edit: the notice, and the earlier version in the history with its diff.
        editor.query_one("#form-text").focus()
        await type_text(pilot, " Ask at the desk.")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: shows(app, "因编辑被替换"))  # The change in Chinese.
        assert "已保存 helmet。" in notices(app)
        assert shows(app, "恢复 v1 会这样改动文本：")
        assert_english_gone(app, "Saved helmet", "replaced by", "would change the text")

        # The command palette's entries.
        titles = {command.title: command.help for command in editor.palette_commands()}
        assert titles["知识库：保存段落"] == "保存当前打开的段落"
        assert titles["知识库：恢复版本"] == "恢复“历史”中高亮的版本（会先确认）"
        assert not [title for title in titles if "Knowledge base" in title]


async def test_try_it_gaps_and_synonyms_in_the_editors_language(
    settings: Settings, http: object, clock: FrozenClock
) -> None:
    app = agent_app(settings, http, clock)
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)

        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: bool(editor.query(TryItPanel)))
        await pilot.pause()
        assert shows(app, "像客户那样提问，然后按回车", "试试")
        assert_english_gone(app, "Ask as a customer would")
        await pilot.press("enter")  # Nothing typed yet.
        await wait_until(pilot, lambda: shows(app, "请先输入问题。"))
        await engine_ready(app)
        editor.query_one("#try-question", Input).value = Q1
        await pilot.press("enter")
        decision = editor.query_one("#try-decision", Static)
        await wait_until(pilot, lambda: "回放录制的回答" in str(decision.render()))
        await pilot.pause()
        assert shows(app, "判断：回放录制的回答", "0.899 能回答", "不能回答")
        assert shows(app, "段落", "BM25", "概率", "判断")  # The table's headings.
        assert_english_gone(app, "probability", "judgment")
        assert shows(app, "未判断：replay-miss")  # The engine's error itself is a code.
        assert_english_gone(app, "judgments", "replayed from recorded answers", "can answer",
                            "not judged")  # fmt: skip

        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: shows(app, "没有待处理的内容缺口。"))
        assert shows(
            app, "机器人转人工的问题，最新的在前。根据其中一个编写段落后，它会被标记为已处理。"
        )
        assert shows(app, "时间", "原因", "最高概率", "问题", "客服回复", "根据这个缺口编写段落")
        assert_english_gone(app, "Questions the bot escalated", "No open content gaps", "when",
                            "agent replied", "Write a passage")  # fmt: skip

        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: shows(app, "按 Ctrl+S 保存。"))
        assert shows(app, "每行一组：word = synonym, synonym。", "以 # 开头的行会被跳过。")
        assert_english_gone(app, "One group a line", "are skipped", "Save")
        await type_text(pilot, "zzyzx = qwxq")
        await wait_until(pilot, lambda: shows(app, "找不到任何内容（没有段落包含其中的词）：zzyzx"))
        assert_english_gone(app, "Finds nothing")
        # Leaving with the synonyms unsaved asks first.
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        assert shows(app, "放弃对同义词的未保存修改吗？", "放弃", "取消")
        assert_english_gone(app, "Discard your unsaved changes", "Cancel")
