"""Languages in the app: a customer who writes Chinese gets the chat in Chinese, can switch it
(F9 or the command palette) and keeps the choice; agents keep their own language (`--locale`)
and read the customer's words as typed."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.dom import DOMNode
from textual.geometry import Region
from textual.message import Message
from textual.widgets import Input, Static
from textual.widgets._footer import FooterKey

from chatbot.cli.app import build_app
from chatbot.cli.main import build_parser
from chatbot.config import Settings, load_settings
from chatbot.desk.models import ChatEvent, LocaleSet, State
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.commands import OffersCommands
from chatbot.tui.screens.dialogs import ClaimsOnQuit
from chatbot.tui.screens.editor import EditorScreen
from chatbot.tui.widgets.agent_console import AgentConsole
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.message_bubble import MessageBubble, NoticeBubble
from chatbot.tui.widgets.queue_list import QueueTable
from tests.tui.conftest import Q1, SIZE, FrozenClock, MakeApp
from tests.tui.helpers import ask, flat, screen_text, wait_until

Q1_ZH = "同一次骑行被扣了两次钱，能把钱退给我吗？"


def chat(app: HelpDeskApp) -> ChatPanel:
    return app.screen.query_one(ChatPanel)


def chat_text(app: HelpDeskApp) -> str:
    return flat(screen_text(app, chat(app)))


def footer_text(app: HelpDeskApp) -> str:
    return " ".join(str(key.description) for key in app.screen.query(FooterKey))


def language_hint(app: HelpDeskApp) -> str:
    return str(app.screen.query_one("#chat-language", Static).render())


def locale_events(desk: DeskService, conversation_id: int) -> list[LocaleSet]:
    return [
        entry.event
        for entry in desk.entries(conversation_id)
        if isinstance(entry, ChatEvent) and isinstance(entry.event, LocaleSet)
    ]


async def test_a_chinese_first_message_turns_the_chat_chinese(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        assert "Hi! Ask anything" in chat_text(app)  # English until they write.
        await ask(pilot, Q1_ZH)
        # No Valen answers are recorded for Chinese: the replay miss goes to a person, and the
        # customer is told why, in Chinese.
        await wait_until(pilot, lambda: "没有录制好的判断" in chat_text(app))
        shown = chat_text(app)
        assert Q1_ZH in shown  # Their own words, as typed.
        assert "您好！关于租车" in shown  # The welcome, said again in Chinese.
        assert "下一位就是您：客服人员会在这里回复您。" in shown  # The status line.
        assert "Hi! Ask anything" not in shown and "A person will reply" not in shown
        assert app.screen.query_one("#question", Input).placeholder == "输入消息，按回车发送"
        # (Not "转人工": while it waits for a person, the footer does not offer one.)
        await wait_until(pilot, lambda: "新对话" in footer_text(app))
        # The switch is offered in the other language's own words, always in sight at the top;
        # the app's keys follow the chat's language.
        assert language_hint(app) == "F9 English" and "退出" in footer_text(app)
        assert app.sub_title == "客户聊天"
        conversation = other.conversation(1)
        assert (conversation.locale, conversation.state) == ("zh", State.WAITING)
        assert locale_events(other, 1) == [LocaleSet(locale="zh")]
        [decision] = other.decisions(1)
        assert decision.decision.reason is not None and decision.decision.reason.value == (
            "not-judged"
        )
        # Judged against the Chinese passages (the app's own bot, wired as `helpdesk bot` is).
        candidates = decision.decision.candidates
        assert candidates and all("欧元" in c.text or "退" in c.text or "骑行" in c.text
                                  for c in candidates)  # fmt: skip


async def test_the_customer_switches_the_chat_and_back(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)
        assert "Source: Charged twice for one ride" in chat_text(app)
        assert language_hint(app) == "F9 中文"
        await pilot.press("f9")
        await wait_until(pilot, lambda: "来源：" in chat_text(app))
        shown = chat_text(app)
        # The answer is the passage as written; everything around it is in Chinese.
        assert "Charged twice for one ride? The first charge" in shown
        assert "机器人" in shown and "有帮助" in shown and "您正在与客服机器人对话" in shown
        assert locale_events(other, 1) == [LocaleSet(locale="zh", chosen_by_customer=True)]
        # The command palette offers the way back, in the language's own name.
        commands = [c.title for c in chat(app).palette_commands()]
        assert "语言：English" in commands and "转人工" in commands
        await wait_until(pilot, lambda: "命令" in footer_text(app))
        await pilot.press("f9")
        await wait_until(pilot, lambda: "Source: Charged twice" in chat_text(app))
        await wait_until(pilot, lambda: "palette" in footer_text(app))
        assert "来源" not in chat_text(app)
        assert other.conversation(1).locale == "en"
        # Each answer is shown once, whatever the switching.
        assert chat_text(app).count("The first charge is a temporary hold") == 1


async def test_a_language_picked_before_writing_is_kept_and_reopens_so(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f9")
        await wait_until(pilot, lambda: "您好！关于租车" in chat_text(app))
        await ask(pilot, Q1)  # English words, Chinese chosen: the choice wins.
        assert other.conversation(1).locale == "zh"
        # A Chinese conversation is answered from the Chinese passages, which an English
        # question does not match: it goes to a person, and the customer is told in Chinese.
        await wait_until(pilot, lambda: "机器人无法根据帮助中心的内容回答" in chat_text(app))
        [decision] = other.decisions(1)
        assert decision.decision.reason is not None and decision.decision.reason.value == (
            "no-passages"
        )
    reopened = make_app("chat", conversation_id=1)
    async with reopened.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "机器人无法根据帮助中心的内容回答" in chat_text(reopened))
        assert Q1 in chat_text(reopened)
        # The title follows once the panel has said which language it shows.
        await wait_until(pilot, lambda: reopened.sub_title == "客户聊天")


async def test_a_browsers_language_shows_until_the_first_message_decides(
    make_app: MakeApp, other: DeskService
) -> None:
    """`helpdesk serve` passes a Chinese browser's language: the empty conversation its page made
    is shown in Chinese, and stays unmarked, so an English first message turns it English."""
    empty = other.start_conversation().id
    app = make_app("chat", conversation_id=empty, fixed_conversation=True, customer_locale="zh")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "退出" in footer_text(app))
        assert "您好！关于租车" in chat_text(app) and "Hi! Ask anything" not in chat_text(app)
        assert language_hint(app) == "F9 English" and app.sub_title == "客户聊天"
        assert other.conversation(empty).locale is None  # Shown, not decided.
        await ask(pilot, Q1)
        await wait_until(pilot, lambda: "Source: Charged twice" in chat_text(app))
        assert "您好" not in chat_text(app) and language_hint(app) == "F9 中文"
        await wait_until(pilot, lambda: "Quit" in footer_text(app))
        assert app.sub_title == "customer chat" and locale_events(other, empty) == []


async def test_a_browsers_language_is_kept_when_the_customer_asks_for_a_person_first(
    make_app: MakeApp, other: DeskService
) -> None:
    empty = other.start_conversation().id
    app = make_app("chat", conversation_id=empty, fixed_conversation=True, customer_locale="zh")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "转人工" in footer_text(app))
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: other.conversation(empty).state is State.WAITING)
        assert other.conversation(empty).locale == "zh"
        # The browser's, not picked: agents read "writes 中文", not "switched the chat to 中文".
        assert locale_events(other, empty) == [LocaleSet(locale="zh", chosen_by_customer=False)]
        await wait_until(pilot, lambda: "下一位就是您" in chat_text(app))
        assert "您好！关于租车" in chat_text(app)


@pytest.mark.parametrize("given", ["zh", "zh_CN"])
async def test_chat_locale_names_the_language_a_customers_chat_starts_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, given: str
) -> None:
    """`helpdesk chat --locale zh` in an English terminal: the chat starts in Chinese (the
    option was taken as the agent console's language, which `chat` has none of). `zh_CN` and
    the like read as `zh`, as the console's `--locale` reads them."""
    monkeypatch.setenv("HELPDESK_DB", str(tmp_path / "helpdesk.sqlite3"))
    app = build_app(build_parser("chat").parse_args(["chat", "--locale", given]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(app.screen.query("ChatPanel #chat-welcome")))
        await wait_until(pilot, lambda: "您好！关于租车" in chat_text(app))


async def test_a_terminals_language_starts_the_chat_and_the_agents_console(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`helpdesk chat` in a terminal whose LANG is Chinese: the chat starts in Chinese, and an
    English first message still turns it English. Beside the queue the terminal is an agent's:
    the console is in its language, the customer's chat starts in English. `--locale` (like
    `ui.locale` in the settings file) names the agent's language over the terminal's."""
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    monkeypatch.setenv("HELPDESK_DB", str(tmp_path / "helpdesk.sqlite3"))
    app = build_app(build_parser("chat").parse_args(["chat"]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(app.screen.query("ChatPanel #chat-welcome")))
        await wait_until(pilot, lambda: "您好！关于租车" in chat_text(app))
        await wait_until(pilot, lambda: app.sub_title == "客户聊天")
        await ask(pilot, Q1)
        await wait_until(pilot, lambda: "Source: Charged twice" in chat_text(app))
        assert "您好" not in chat_text(app)
    desk = build_app(build_parser("").parse_args([]))
    async with desk.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(desk.screen.query("ChatPanel #chat-welcome")))
        await wait_until(
            pilot, lambda: "Ask anything" in chat_text(desk) or "您好" in chat_text(desk)
        )
        assert "Hi! Ask anything" in chat_text(desk)
        await wait_until(pilot, lambda: "转人工队列" in flat(screen_text(desk)))
        assert "Handoff queue" not in flat(screen_text(desk))
        await wait_until(pilot, lambda: "退出" in footer_text(desk))
    named = build_app(build_parser("agent").parse_args(["agent", "--locale", "en"]))
    async with named.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Handoff queue" in flat(screen_text(named)))
        assert named.sub_title == "agent console"
        await wait_until(pilot, lambda: "Quit" in footer_text(named))  # Rebuilt a frame later.


async def test_a_reopened_conversation_is_drawn_in_its_own_language_from_the_first_frame(
    make_app: MakeApp,
    other: DeskService,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A browser asking for Chinese reopens a conversation written in English: the chat is
    English from its first frame, and a Chinese one opened from an English terminal (through
    the settings loader, as `helpdesk chat --conversation` does) is Chinese from its first.
    Neither is drawn in the offered language first and then switched."""
    switches: list[Message] = []

    def hook(message: Message) -> None:
        if isinstance(message, ChatPanel.LocaleChanged):
            switches.append(message)

    english = other.ask(None, Q1).conversation.id
    app = make_app("chat", conversation_id=english, fixed_conversation=True, customer_locale="zh")
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        assert chat(app).locale == "en" and app.sub_title == "customer chat"
        assert "Hi! Ask anything" in chat_text(app) and language_hint(app) == "F9 中文"
        await wait_until(pilot, lambda: Q1 in chat_text(app))
        assert "您好" not in chat_text(app)
    assert switches == []

    chinese = other.ask(None, Q1_ZH).conversation.id
    monkeypatch.setenv("HELPDESK_DB", str(settings.store.db))  # LANG is C.UTF-8 (conftest).
    terminal = build_app(build_parser("chat").parse_args(["chat", "--conversation", str(chinese)]))
    async with terminal.run_test(size=SIZE, message_hook=hook) as pilot:
        await wait_until(pilot, lambda: bool(terminal.screen.query("ChatPanel #chat-welcome")))
        assert chat(terminal).locale == "zh" and terminal.sub_title == "客户聊天"
        await wait_until(pilot, lambda: Q1_ZH in chat_text(terminal))
        assert "您好！关于租车" in chat_text(terminal) and "Hi! Ask" not in chat_text(terminal)
    assert switches == []


async def test_agents_keep_their_own_language(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    chinese = other.ask(None, Q1_ZH).conversation.id
    other.talk_to_person(chinese)
    zh_settings = load_settings(store={"db": settings.store.db}, ui={"locale": "zh_CN"})
    app = create_app(zh_settings, mode="agent", http=http, clock=clock, agent="ana",  # type: ignore[arg-type]
                     timings=False, bot=False)  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        assert app.sub_title == "客服控制台"
        view: ConversationView = await app.open_conversation(chinese)
        # The footer is redrawn after the view mounts: wait for the view's own key.
        await wait_until(pilot, lambda: "接手" in footer_text(app) and "返回" in footer_text(app))
        text = flat(screen_text(app))
        assert Q1_ZH in text  # The customer's words, as typed.
        assert "客户要求转人工。" in text  # Their escalation, said in the agent's language.
        assert "The customer writes" not in text  # Chinese is this agent's own language.
        assert "退出" in footer_text(app) and "返回" in footer_text(app)
        # The palette's key too, which Textual's app adds to itself when it is built.
        assert "命令" in footer_text(app)
        assert view.conversation_id == chinese

    english = create_app(settings, mode="agent", http=http, clock=clock, agent="ben",  # type: ignore[arg-type]
                         timings=False, bot=False)  # fmt: skip
    async with english.run_test(size=SIZE) as pilot:
        await english.open_conversation(chinese)
        await wait_until(pilot, lambda: "Claim" in footer_text(english))
        text = flat(screen_text(english))
        assert Q1_ZH in text
        assert "The customer writes 中文; their chat is in it." in text
        assert "The customer asked for a person." in text


async def test_the_desk_keeps_the_agents_language_beside_a_customers(
    settings: Settings, http: object, clock: FrozenClock
) -> None:
    zh_settings = load_settings(store={"db": settings.store.db}, ui={"locale": "zh"})
    app = create_app(zh_settings, mode="all", http=http, clock=clock, agent="ana",  # type: ignore[arg-type]
                     timings=False)  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        # The customer's chat starts in English (the default) whatever the agent reads.
        assert "Hi! Ask anything" in chat_text(app)
        await ask(pilot, Q1)
        assert "Source: Charged twice" in chat_text(app)
        assert app.sub_title == "客户聊天与转人工队列"
        assert isinstance(chat(app), OffersCommands)


async def test_chinese_lines_are_laid_out_two_cells_a_character(make_app: MakeApp) -> None:
    """Wrapping counts a Chinese character as two cells, as terminals draw it: each line fills
    the panel and none runs past it. (In SVG snapshots Rich squeezes each such character into
    one cell's width, Textualize/rich#2742; the layout, which this checks, is the terminal's.)"""
    app = make_app("chat")
    async with app.run_test(size=(80, 24)) as pilot:
        await ask(pilot, Q1_ZH)
        welcome = app.screen.query_one("#chat-welcome", Static)
        await wait_until(pilot, lambda: "您好" in str(welcome.render()))
        width, height = welcome.size
        lines = [
            "".join(segment.text for segment in strip).rstrip()
            for strip in welcome.render_lines(Region(0, 0, width, height))
        ]
        assert len(lines) >= 2 and all(cell_len(line) <= width for line in lines)
        assert width - 2 <= cell_len(lines[0]) and len(lines[0]) <= width // 2 + 1


async def test_the_editor_in_the_editors_language(
    settings: Settings, http: object, clock: FrozenClock
) -> None:
    zh_settings = load_settings(store={"db": settings.store.db}, ui={"locale": "zh"})
    app = create_app(zh_settings, mode="editor", http=http, clock=clock, agent="ana",  # type: ignore[arg-type]
                     timings=False, bot=False)  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "保存" in footer_text(app))
        text = screen_text(app)
        assert "段落" in text and "试一试" in text and "内容缺口" in text  # The tabs.
        assert "知识库" in text  # The title.
        assert "Charged twice for one ride" in text  # Passages as written.

        # A panel put in once `helpdesk agent` has loaded its settings is in the footer as soon
        # as it is mounted: its keys are translated when it is built, before any `on_mount`.
        def keys(node: DOMNode) -> set[str]:
            return {b.description for bs in node._bindings.key_to_bindings.values() for b in bs}

        editor = app.screen
        assert isinstance(editor, EditorScreen)
        assert "查找" in keys(AgentConsole(app.services))
        assert "打开" in keys(QueueTable(app.services))
        assert "新建" in keys(EditorScreen(app.services, index=editor.index))
        assert "保留" in keys(ClaimsOnQuit(2, locale="zh"))
        assert "接手" in keys(ConversationView(app.services, 1))
        # The customer's chat starts in English, its language key naming the other language.
        assert "中文" in keys(ChatPanel(app.services))


async def test_a_chinese_customer_is_asked_for_a_rating_in_chinese(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1_ZH)
        other.claim(1, agent="ben")
        other.reply(1, agent="ben", text="已为您退款。")
        other.resolve(1, agent="ben")
        await wait_until(pilot, lambda: "ben 的表现如何" in chat_text(app))
        bubbles = list(chat(app).query(MessageBubble))
        assert any(b.message.text == "已为您退款。" for b in bubbles)  # As written.
        notices = [str(n.text) for n in chat(app).query(NoticeBubble)]
        assert "ben 已将此对话标记为已解决。如有需要，随时可以再写信给我们。" in notices
        assert "已解决。如还有其他需要" in chat_text(app)  # The status line.
        titles = [c.title for c in chat(app).palette_commands()]
        assert "评分：5（非常好）" in titles and "新对话" in titles
        await chat(app).rate(5)
        await wait_until(pilot, lambda: "您给这次对话打了 5 分" in chat_text(app))


@pytest.mark.parametrize(
    ("customer_locale", "hint"), [("en", "Press Ctrl+Q to quit the app."), ("zh", "按 Ctrl+Q 退出")]
)
async def test_ctrl_c_says_how_to_quit_in_the_chats_language_without_markup(
    make_app: MakeApp, customer_locale: str, hint: str
) -> None:
    # Ctrl+C with nothing to copy: Textual's hint is markup ("Press [b]ctrl+q[/b]…"), which
    # this app's toasts show literally, and English whatever the chat's language.
    app = make_app("chat", customer_locale=customer_locale)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app.screen.set_focus(None)
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: hint in flat(screen_text(app)))
        assert "[b]" not in screen_text(app)
