"""An opened conversation in the agent's language (`--locale zh`): the header, the line above the
reply box, the reply and note boxes, the bot's candidates, the transcript and the passage picker
speak Chinese; what people wrote, passage ids and reason codes stay as they are."""

from __future__ import annotations

from rich.console import Console
from textual.widgets import Input, Static

from chatbot.config import Settings
from chatbot.desk.models import Author, ChatMessage
from chatbot.desk.service import DeskService
from chatbot.engine.models import Answer, Candidate, Decision, Reason
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.passage_picker import PassagePicker
from chatbot.tui.widgets.candidate_bars import CandidateBars, render_decision
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.transcript import Transcript, earlier_line, transcript_text
from tests.tui.conftest import Q3, FrozenClock
from tests.tui.helpers import agent_app, flat, in_chinese, screen_text, wait_until

LATE = "late-return"


def escalated(desk: DeskService, question: str) -> int:
    """A conversation the bot judged and escalated: one passage below the threshold, one not
    judged (a replay miss)."""
    conversation = desk.start_conversation().id
    desk.ask(conversation, question)
    [pending] = [
        q for q in desk.lease("w", limit=10, lease_s=60) if q.conversation_id == conversation
    ]
    decision = Decision(
        question=question,
        answer=None,
        reason=Reason.LOW_SCORE,
        candidates=(
            Candidate(id=LATE, text="Late fees ...", bm25=3.0, probability=0.64),
            Candidate(
                id="station-full",
                text="Full station ...",
                bm25=2.0,
                error="replay-miss: no recorded answer",
                error_kind="replay-miss",
            ),
        ),
        threshold=0.7,
    )
    desk.record_decision("w", pending, decision)
    return conversation


def view_text(app: HelpDeskApp) -> str:
    return flat(screen_text(app, app.screen.query_one(ConversationView)))


def header(app: HelpDeskApp) -> str:
    return str(app.screen.query_one("#conversation-header", Static).render())


async def test_an_escalated_conversation_in_the_agents_language(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    # #1: the customer asked for a person before the bot judged anything.
    first = other.start_conversation().id
    other.talk_to_person(first)
    other.ask(first, "Where is my helmet?")
    second = escalated(other, Q3)
    clock.advance(5)
    app = agent_app(in_chinese(settings), http, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.open_conversation(first)
        await wait_until(pilot, lambda: "机器人还没有判断过这里的问题。" in view_text(app))
        assert "The bot has not judged" not in view_text(app)

        view = await app.open_conversation(second)
        await wait_until(pilot, lambda: "错误" in view_text(app))  # The whole decision shows.
        assert header(app) == f"对话 #{second} · 已等待 5s · low-score · 最高 0.64"
        shown = view_text(app)
        assert "接手此对话（Ctrl+L）后即可回复。" in shown
        assert "机器人考虑过的段落" in shown
        bars = flat(screen_text(app, view.query_one(CandidateBars)))
        # The reason code as it is. (Wide characters leave gaps in `screen_text` where a style
        # changes: compared without spaces.)
        assert "已转人工：low-score·阈值0.70" in "".join(bars.split())
        assert "station-full 未判断" in bars and "错误" in bars
        transcript = flat(screen_text(app, view.query_one(Transcript)))
        assert f"客户 09:00 {Q3}" in transcript
        reply = app.screen.query_one("#reply", Input)
        assert reply.placeholder == ""  # Nothing to type here yet: the line above says why.
        for english in ("Conversation #", "waiting", "Claim this conversation", "Passages the bot",
                        "Escalated:", "threshold", "not judged", "Errors", "Customer"):  # fmt: skip
            assert english not in shown and english not in header(app), english

        # Claimed: the bot is silent; the palette offers the moves in Chinese.
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: "您已接手此对话：机器人不再回复。" in view_text(app))
        assert "由 ana 接手" in header(app)
        titles = [command.title for command in view.palette_commands()]
        assert f"解决对话 #{second}" in titles and "返回队列" in titles

        # The note box.
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: "内部备注：仅客服人员可见。" in view_text(app))
        assert reply.placeholder == "写给客服的内部备注（客户看不到）；按回车保存"
        assert "Internal note" not in view_text(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: reply.placeholder == "回复客户，按回车发送")

        # The passage picker, then the passage in the reply box.
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, PassagePicker))
        await wait_until(pilot, lambda: "在回复中放入一个段落" in screen_text(app))
        # The footer is drawn a frame after the dialog's title (CI read it in between).
        await wait_until(pilot, lambda: "取消" in screen_text(app).splitlines()[-1])
        picker = screen_text(app)
        assert "Put a passage in your reply" not in flat(picker) and "Cancel" not in picker
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, PassagePicker))
        await wait_until(pilot, lambda: f"段落 {LATE} 已放入您的回复" in view_text(app))
        assert f"Passage {LATE}" not in view_text(app)


def test_decisions_transcripts_and_earlier_lines_in_chinese() -> None:
    answered = Decision(
        question="q",
        answer=Answer(id="card-charged-twice", text="Refunds ...", probability=0.9),
        reason=None,
        candidates=(Candidate(id="card-charged-twice", text="...", bm25=1.0, probability=0.9),),
        threshold=0.7,
    )
    console = Console(width=100, record=True)
    console.print(render_decision(answered, timings=False, locale="zh"))
    assert "依据 card-charged-twice 回答 · 阈值 0.70" in console.export_text()
    console.print(render_decision(answered, timings=False))
    assert "Answered from card-charged-twice · threshold 0.70" in console.export_text()

    reply = ChatMessage(
        id=3,
        conversation_id=1,
        author=Author.AGENT,
        agent="ana",
        text="Done.",
        passage_id=LATE,
        passage_title="Late fees",
        created_at=FrozenClock().now,
    )
    text = str(transcript_text([reply], locale="zh"))
    assert f"ana（客服）  来源：{reply.source}" in text and "Done." in text
    assert earlier_line(1, locale="zh") == "— 1 条更早的消息 — 按 F3 显示"
    assert (
        earlier_line(1000, exact=False, locale="zh")
        == "— 超过 1,000 条更早的消息 — 按 F3 再显示 100 条"
    )


async def test_a_notices_dash_stays_with_its_chinese_sentence(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    # At 140 columns the not-judged notice's dash sat alone on its line, "机器人无法查阅…" on
    # the next: Rich wraps at spaces, and the Chinese sentence, with none, went whole to a new
    # line rather than start beside the dash.
    from tests.tui.desk_helpers import unjudged

    conversation = other.ask(None, Q3).conversation.id
    [pending] = other.lease("bot-1", limit=1, lease_s=60)
    other.record_decision("bot-1", pending, unjudged(Q3, "replay-miss"))
    app = agent_app(in_chinese(settings), http, clock)
    async with app.run_test(size=(140, 36)) as pilot:
        view = await app.open_conversation(conversation)
        transcript = view.query_one(Transcript)
        await wait_until(pilot, lambda: "机器人无法查阅" in flat(screen_text(app, transcript)))
        lines = [line.strip() for line in screen_text(app, transcript).splitlines()]
        # (The line above the conversation, that its customer writes English, aside.)
        [first] = [line for line in lines if line.startswith("—") and "客户使用" not in line]
        assert first.startswith("—") and "机器人无法查阅" in first, lines
