"""A keyboard tester's findings: Ctrl+B in a chat switched to 中文 lost the choice (the first
English question of the new chat flipped it back to English); the agent's own claim lost its time
in a narrow Chinese queue (`王小明…`); Escape did not close the keys panel; and an agent's
Chinese name joined the conversation as `—王小明 joined…`, with no space after the dash."""

from __future__ import annotations

from datetime import timedelta

from textual.command import CommandInput, CommandPalette
from textual.pilot import Pilot
from textual.widgets import HelpPanel

from chatbot.config import Settings
from chatbot.desk.models import ChatEvent, LocaleSet, QueueItem, State
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.queue_list import Columns, QueueTable, status
from chatbot.tui.widgets.transcript import Transcript
from tests.tui.conftest import Q1, FrozenClock, MakeApp
from tests.tui.helpers import (
    agent_app,
    ask,
    chat_panel_ready,
    customer_bubbles,
    flat,
    in_chinese,
    queue_rows,
    screen_text,
    wait_until,
)

SIZE = (80, 24)


def locale_events(desk: DeskService, cid: int) -> list[LocaleSet]:
    return [
        entry.event
        for entry in desk.entries(cid)
        if isinstance(entry, ChatEvent) and isinstance(entry.event, LocaleSet)
    ]


def status_text(app: HelpDeskApp, panel: ChatPanel) -> str:
    """The line above the transcript: the status and the other language offered."""
    return flat(screen_text(app, panel.query_one("#chat-top")))


# -- 1. a new chat keeps the language the customer chose -------------------------------------------


async def test_a_new_chat_keeps_the_language_the_customer_chose(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        await ask(pilot, "Where is my bike?", wait=False)  # English: no language kept.
        first = panel.conversation_id
        assert first is not None
        await pilot.press("f9")  # 中文, chosen in the conversation.
        await wait_until(pilot, lambda: panel.conversation is not None
                         and panel.conversation.locale == "zh")  # fmt: skip
        await pilot.press("ctrl+b")  # The bot has it: a new chat at once.
        await wait_until(pilot, lambda: panel.conversation_id is None)
        assert panel.locale == "zh"
        # One of the suggested (English) questions, typed: the chat stays in Chinese, as chosen.
        await ask(pilot, Q1, wait=False)
        cid = panel.conversation_id
        assert cid is not None and cid != first
        await wait_until(pilot, lambda: panel.conversation is not None
                         and panel.conversation.id == cid)  # fmt: skip
        assert customer_bubbles(panel) == 1
        assert panel.locale == "zh"
        await wait_until(pilot, lambda: "F9 English" in status_text(app, panel))
        assert "You are talking to the bot" not in status_text(app, panel)
        # Stored as the customer's choice with the new conversation, not left to detection.
        assert locale_events(other, cid) == [LocaleSet(locale="zh", chosen_by_customer=True)]


async def test_a_new_chat_goes_on_in_a_detected_language_until_the_customer_writes(
    make_app: MakeApp, other: DeskService
) -> None:
    # Detected (they wrote Chinese), not chosen: the new chat is shown in it, and asking for a
    # person before writing keeps it, as for a chat first shown in a language (it flipped to
    # the terminal's English).
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        await ask(pilot, "我的自行车在哪里？", wait=False)
        await wait_until(pilot, lambda: panel.locale == "zh")
        first = panel.conversation_id
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: panel.conversation_id is None)
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: panel.conversation is not None
                         and panel.conversation.id not in (None, first)
                         and panel.conversation.state is State.WAITING)  # fmt: skip
        cid = panel.conversation_id
        assert cid is not None
        assert panel.locale == "zh"
        assert locale_events(other, cid) == [LocaleSet(locale="zh", chosen_by_customer=False)]


# -- 2. a claim keeps its time in a narrow Chinese queue -------------------------------------------


async def test_an_own_claim_keeps_its_time_in_a_narrow_chinese_queue(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    cid = other.talk_to_person(other.ask(None, "Where is my bike?").conversation.id)
    conversation = cid.conversation.id
    assert other.claim(conversation, agent="王小明").won
    clock.advance(20)
    app = create_app(in_chinese(settings), mode="all", http=http, clock=clock,  # type: ignore[arg-type]
                     agent="王小明", timings=False, bot=False)  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(queue_rows(app)), timeout=30)
        [row] = queue_rows(app)
        assert row[1] == str(conversation)
        # The short status (`ana 12m`) with the name cut to the column, the time kept.
        assert row[2] == "王… 20s", row
        assert row[3] == "customer-asked"


def test_a_claims_time_stays_whatever_the_width() -> None:
    start = FrozenClock().now
    item = QueueItem(conversation_id=1, state=State.CLAIMED, waiting_since=start, question="q",
                     question_entry=None, reason=None, top_probability=None,
                     agent="Alexandra Konstantinopoulou", claimed_at=start)  # fmt: skip
    now = start + timedelta(minutes=5)
    columns = Columns.for_width(78, id_width=1, claims=True)
    long = status(item, now, width=columns.status)
    assert long.startswith("claimed by Alex") and long.endswith("… for 5m"), long
    assert len(long) <= columns.status
    assert status(item, now, short=True, width=10) == "Alexan… 5m"
    # No cell left for a name: the time alone, after the `…` that stands for it.
    later = start + timedelta(hours=2, minutes=7)
    assert status(item, later, short=True, width=7) == "…2h 07m"
    assert status(item, now) == "claimed by Alexandra Konstantinopoulou for 5m"  # No width.


# -- 3. Escape closes the keys panel ---------------------------------------------------------------


async def open_keys_panel(pilot: Pilot[None], app: HelpDeskApp) -> None:
    """Ctrl+P, then "Keys", as a person picks it."""
    await pilot.press("ctrl+p")
    await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
    app.screen.query_one(CommandInput).value = "Keys"
    await wait_until(pilot, lambda: "Keys" in flat(screen_text(app)) and "Show help" in
                     flat(screen_text(app)))  # fmt: skip
    await pilot.press("enter")
    await wait_until(pilot, lambda: not isinstance(app.screen, CommandPalette))
    await wait_until(pilot, lambda: bool(app.screen.query(HelpPanel)))


async def test_escape_closes_the_keys_panel(make_app: MakeApp) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        await open_keys_panel(pilot, app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.screen.query(HelpPanel))
        # Escape with no panel does nothing of the kind: the chat and its box are as they were.
        await pilot.press("escape")
        assert app.screen.query_one(ChatPanel) is panel
        assert app.focused is panel.question


async def test_escape_goes_back_first_where_it_means_back(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    conversation = other.talk_to_person(None).conversation.id
    app = agent_app(settings, http, clock)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.started and bool(queue_rows(app)), timeout=30)
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: isinstance(app.focused, Transcript))
        await open_keys_panel(pilot, app)
        assert app.focused is view.transcript
        await pilot.press("escape")  # Back to the queue, as always; the panel stays.
        await wait_until(pilot, lambda: isinstance(app.focused, QueueTable))
        assert app.screen.query(HelpPanel)
        await pilot.press("escape")  # Nothing else takes it on the queue: the panel goes.
        await wait_until(pilot, lambda: not app.screen.query(HelpPanel))


# -- 4. the dash before an agent's Chinese name ----------------------------------------------------


async def test_a_joined_notice_has_a_space_after_its_dash_before_a_chinese_name(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    conversation = other.talk_to_person(other.ask(None, "Where is my bike?").conversation.id)
    cid = conversation.conversation.id
    assert other.claim(cid, agent="王小明").won
    app = agent_app(settings, http, clock)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.started)
        view = await app.open_conversation(cid)
        transcript = view.query_one(Transcript)
        await wait_until(pilot, lambda: "joined the conversation" in screen_text(app, transcript))
        lines = [line.strip() for line in screen_text(app, transcript).splitlines()]
        assert "— 王小明 joined the conversation." in lines, lines
        assert "—王小明" not in screen_text(app, transcript)
