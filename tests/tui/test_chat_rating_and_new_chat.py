"""A tester's findings as a customer, in a terminal and a browser: a rating typed in the message box
went out as a question (reopening the conversation, into the agents' queue); Helpful and Not
helpful marked an old bot answer while a person held the conversation; a refusal stayed in the
old language after a switch; and Ctrl+B left a conversation waiting for a person without a word."""

from __future__ import annotations

import pytest
from textual.drivers.headless_driver import HeadlessDriver
from textual.widgets import Button

from chatbot.desk.models import Author, ChatEvent, Rated, State
from chatbot.desk.service import DeskService
from chatbot.engine.question import MAX_QUESTION_CHARS
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.new_chat_dialog import NewChatDialog
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.message_bubble import MessageBubble
from tests.tui.conftest import Q1, MakeApp
from tests.tui.desk_helpers import customer_words, resolved_by_another_agent
from tests.tui.helpers import (
    ask,
    chat_panel_ready,
    flat,
    focus_of,
    footer_current,
    footer_offers,
    screen_text,
    wait_until,
)

SIZE = (80, 24)
PHONE = (40, 40)


@pytest.fixture
def in_a_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's driver says it is a browser session's (`Driver.is_web`), as `serve`'s does."""
    monkeypatch.setattr(HeadlessDriver, "is_web", property(lambda _driver: True))


def ratings(desk: DeskService, cid: int) -> list[int]:
    return [
        entry.event.rating
        for entry in desk.entries(cid)
        if isinstance(entry, ChatEvent) and isinstance(entry.event, Rated)
    ]


def prompt_says(app: HelpDeskApp, panel: ChatPanel, words: str) -> bool:
    return words in flat(screen_text(app, panel.rating))


def chat_text(app: HelpDeskApp, panel: ChatPanel) -> str:
    return flat(screen_text(app, panel))


def notes(app: HelpDeskApp) -> list[str]:
    return [notification.message for notification in app._notifications]


# -- 1. a rating typed in the message box ---------------------------------------------------------


@pytest.mark.parametrize("typed", ["5", " 5 ", "５", "\u3000５\u3000"])
async def test_a_number_typed_in_the_box_while_the_rating_is_asked_rates(
    make_app: MakeApp, other: DeskService, typed: str
) -> None:
    """`5` and Enter in the question box (where the cursor stays after a resolve) went out as a
    message: the conversation reopened, the prompt went, and the agents' queue got a `5`. Now it
    is the rating (full-width too, as a Chinese keyboard types it), said as a button's is."""
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        cid = await resolved_by_another_agent(pilot, panel, other)
        assert app.screen.focused is panel.question
        await wait_until(
            pilot,
            lambda: prompt_says(
                app, panel, "(excellent): type a number and press Enter, or press Shift+Tab, "
                "then a number."
            ),
        )  # fmt: skip
        panel.question.value = typed
        await pilot.press("enter")
        await wait_until(pilot, lambda: not panel.rating.display)
        await wait_until(pilot, lambda: "You rated this conversation" in chat_text(app, panel))
        assert ratings(other, cid) == [5]
        assert "You rated this conversation 5 out of 5. Thank you!" in chat_text(app, panel)
        assert other.conversation(cid).state is State.RESOLVED  # Not reopened.
        assert customer_words(other, cid) == ["Where is my bike?"]
        assert panel.question.value == ""
        assert not panel.error.display


async def test_other_words_still_go_out_while_the_rating_is_asked(
    make_app: MakeApp, other: DeskService
) -> None:
    """Only a digit 1–5 alone is a rating: `6`, `5 stars` are messages, as before."""
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        cid = await resolved_by_another_agent(pilot, panel, other)
        panel.question.value = "5 stars"
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(customer_words(other, cid)) == 2)
        assert customer_words(other, cid)[-1] == "5 stars"
        assert ratings(other, cid) == []


@pytest.mark.usefixtures("in_a_browser")
@pytest.mark.parametrize("size", [PHONE, SIZE])
async def test_a_browser_customer_is_told_to_type_or_pick_not_to_press_shift_tab(
    make_app: MakeApp, other: DeskService, size: tuple[int, int]
) -> None:
    """A phone has no Shift+Tab: in a browser the prompt says to type a number or pick one."""
    app = make_app("chat", bot=False, fixed_conversation=True, editor=False)
    async with app.run_test(size=size) as pilot:
        panel = await chat_panel_ready(pilot)
        cid = await resolved_by_another_agent(pilot, panel, other)
        await wait_until(
            pilot,
            lambda: prompt_says(
                app, panel, "(excellent): type a number and press Enter, or pick one below."
            ),
        )
        assert "Tab" not in flat(screen_text(app, panel.rating))
        panel.log_view.focus()  # A tap on the conversation: still no Tab.
        await pilot.pause()
        assert prompt_says(app, panel, "type a number and press Enter, or pick one below.")
        assert "Tab" not in flat(screen_text(app, panel.rating))
        panel.question.focus()
        panel.question.value = "3"
        await pilot.press("enter")
        await wait_until(pilot, lambda: ratings(other, cid) == [3])
        await wait_until(pilot, lambda: not panel.rating.display)
        assert other.conversation(cid).state is State.RESOLVED


async def test_the_chinese_prompt_says_to_type_a_number(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        await pilot.press("f9")
        await wait_until(pilot, lambda: panel.locale == "zh")
        cid = await resolved_by_another_agent(pilot, panel, other)
        await wait_until(pilot, lambda: "Shift+Tab" in screen_text(app, panel.rating))
        shown = "".join(screen_text(app, panel.rating).split())
        assert "输入数字并按回车" in shown and "Enter" not in shown
        panel.question.value = "４"
        await pilot.press("enter")
        await wait_until(pilot, lambda: ratings(other, cid) == [4])


# -- 2. Helpful / Not helpful only on the bot's answer while it is the latest ---------------------


def bot_bubble(panel: ChatPanel) -> MessageBubble:
    [bubble] = [b for b in panel.query(MessageBubble) if b.message.author is Author.BOT]
    return bubble


async def test_feedback_keys_go_once_a_person_has_the_conversation(
    make_app: MakeApp, other: DeskService
) -> None:
    """While ben held the conversation the footer still offered Helpful and Not helpful; Ctrl+N
    marked the bot's earlier answer (off screen) and said "a person will take a look"."""
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        await ask(pilot, Q1)
        answer = bot_bubble(panel)
        await wait_until(pilot, lambda: footer_offers(app, "feedback('not-helpful')"))
        await pilot.press("ctrl+t")
        cid = panel.conversation_id
        assert cid is not None
        await wait_until(pilot, lambda: other.conversation(cid).state is State.WAITING)
        await wait_until(pilot, lambda: not answer.query("#not-helpful"))
        other.claim(cid, agent="ben")
        other.reply(cid, agent="ben", text="Let me check your rides.")
        await wait_until(pilot, lambda: "Let me check your rides." in chat_text(app, panel))
        await footer_current(pilot)
        assert not footer_offers(app, "feedback('helpful')")
        assert not footer_offers(app, "feedback('not-helpful')")
        assert "Not helpful" not in screen_text(app).splitlines()[-1]
        await pilot.press("ctrl+n")
        await wait_until(
            pilot,
            lambda: any(n.startswith("This conversation is with a person now") for n in notes(app)),
        )
        assert other.messages(cid)[1].feedback is None
        assert "You marked this not helpful" not in chat_text(app, panel)
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert other.messages(cid)[1].feedback is None
        # Resolved, the bot's old answer is still not the latest thing the customer was told.
        other.resolve(cid, agent="ben")
        await wait_until(pilot, lambda: panel.rating.display)
        await footer_current(pilot)
        assert not footer_offers(app, "feedback('not-helpful')")
        assert not answer.query("#helpful")


async def test_an_escalation_after_the_answer_takes_its_feedback_keys(
    make_app: MakeApp, other: DeskService
) -> None:
    """A second question the bot hands to a person: the first answer is no longer the latest
    thing said, and a conversation reopened in a new app shows it so too."""
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        await ask(pilot, Q1)
        await wait_until(pilot, lambda: footer_offers(app, "feedback('helpful')"))
        await ask(pilot, "Where can I park a scooter overnight in Porto?")
        cid = panel.conversation_id
        assert cid is not None
        assert other.conversation(cid).state is State.WAITING
        await footer_current(pilot)
        assert not footer_offers(app, "feedback('helpful')")
        assert not bot_bubble(panel).query("#helpful")
    reopened = make_app("chat", bot=False, conversation_id=cid)
    async with reopened.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        await wait_until(pilot, lambda: bool(panel.query(MessageBubble)))
        await footer_current(pilot)
        assert not bot_bubble(panel).query("#helpful")
        assert not footer_offers(reopened, "feedback('helpful')")


# -- 3. the refusal line follows the language, and goes with a new chat ---------------------------


async def test_a_refusal_is_said_again_in_the_new_language_and_goes_with_a_new_chat(
    make_app: MakeApp,
) -> None:
    long = "x" * 5_100
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        await pilot.press("f9")
        await wait_until(pilot, lambda: panel.locale == "zh")
        panel.question.value = long
        await pilot.press("enter")
        await wait_until(pilot, lambda: panel.error.display)
        assert "您的问题有 5,100 个字符" in str(panel.error.render())
        await pilot.press("f9")
        await wait_until(pilot, lambda: panel.locale == "en")
        said = str(panel.error.render())
        assert said.startswith("Your question has 5,100 characters; the limit is")
        assert f"{MAX_QUESTION_CHARS:,}" in said
        assert panel.question.value == long  # Nothing typed is lost.
        # In a conversation: the switch says it again too (it used to clear it), and a new
        # chat takes it away.
        panel.question.value = "Where is my bike?"
        await pilot.press("enter")
        await wait_until(pilot, lambda: panel.conversation_id is not None)
        panel.question.value = long
        await pilot.press("enter")
        await wait_until(pilot, lambda: panel.error.display)
        await pilot.press("f9")
        await wait_until(pilot, lambda: "您的问题有 5,100 个字符" in str(panel.error.render()))
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: panel.conversation_id is None)
        assert not panel.error.display
        assert panel.question.value == long


# -- 4. a new chat while a person has the conversation asks first ---------------------------------


def dialog_text(app: HelpDeskApp) -> str:
    """The new-chat dialog's question as drawn, its wrapping undone ("" until it is shown)."""
    if not isinstance(app.screen, NewChatDialog):
        return ""
    return flat(screen_text(app, app.screen.query_one("#new-chat-question")))


async def test_a_new_chat_while_waiting_for_a_person_asks_first(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        await ask(pilot, "Where is my bike?", wait=False)
        await pilot.press("ctrl+t")
        cid = panel.conversation_id
        assert cid is not None
        await wait_until(pilot, lambda: other.conversation(cid).state is State.WAITING)
        await wait_until(pilot, lambda: panel.conversation is not None
                         and panel.conversation.state is State.WAITING)  # fmt: skip
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: isinstance(app.screen, NewChatDialog))
        await wait_until(pilot, lambda: "your request stays" in dialog_text(app))
        shown = dialog_text(app)
        assert "your request stays in the queue" in shown
        assert "will not appear in the new chat" in shown
        assert focus_of(app) is app.screen.query_one("#stay", Button)
        await pilot.press("escape")  # Stay.
        await wait_until(pilot, lambda: not isinstance(app.screen, NewChatDialog))
        assert panel.conversation_id == cid
        # Claimed: the dialog names who helps; Ctrl+B again starts the new chat.
        other.claim(cid, agent="ben")
        await wait_until(pilot, lambda: panel.conversation is not None
                         and panel.conversation.state is State.CLAIMED)  # fmt: skip
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: "ben (support agent) is helping you." in dialog_text(app))
        assert isinstance(app.screen, NewChatDialog)
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: panel.conversation_id is None)
        assert other.conversation(cid).state is State.CLAIMED  # Left as it was.
        assert focus_of(app) is panel.question


async def test_the_new_chat_dialog_fits_a_narrow_window(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=(60, 20)) as pilot:
        panel = await chat_panel_ready(pilot)
        await ask(pilot, "Where is my bike?", wait=False)
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: panel.conversation is not None
                         and panel.conversation.state is State.WAITING)  # fmt: skip
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: isinstance(app.screen, NewChatDialog))
        dialog = app.screen.query_one("#new-chat-dialog")
        buttons = list(app.screen.query(Button))

        def inside() -> bool:
            return all(
                b.region.width and dialog.content_region.contains_region(b.region) for b in buttons
            )

        await wait_until(pilot, inside)
        shown = flat(screen_text(app))
        assert "Start a new chat (Ctrl+B)" in shown and "Stay here (Esc)" in shown
        await pilot.click("#new-chat")
        await wait_until(pilot, lambda: panel.conversation_id is None)


async def test_a_new_chat_with_the_bot_starts_at_once(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        await ask(pilot, Q1)
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: panel.conversation_id is None)
        assert not isinstance(app.screen, NewChatDialog)


async def test_the_new_chat_dialog_asks_in_the_chats_language(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        await pilot.press("f9")
        await wait_until(pilot, lambda: panel.locale == "zh")
        await ask(pilot, "我的自行车在哪里？", wait=False)
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: panel.conversation is not None
                         and panel.conversation.state is State.WAITING)  # fmt: skip
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: "您正在等待客服人员" in "".join(dialog_text(app).split()))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, NewChatDialog))
        assert panel.conversation_id is not None
