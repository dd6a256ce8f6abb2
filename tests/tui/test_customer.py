"""Issue 14's customer chat: the same question again offers a person, a new conversation leaves
the old one on record, and a resolved conversation asks for a 1–5 rating."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from textual import events
from textual.widgets._footer import FooterKey

from chatbot.desk.aio import StoreError
from chatbot.desk.models import (
    Author,
    ChatEvent,
    Feedback,
    FeedbackGiven,
    PersonOffered,
    Rated,
    State,
)
from chatbot.desk.service import DeskService
from chatbot.notices import ESCALATED_NOTICE, REPEAT_NOTICE
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.new_chat_dialog import NewChatDialog
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.message_bubble import MessageBubble
from chatbot.tui.widgets.rating_prompt import RatingPrompt
from tests.tui.conftest import Q1, Q2, Q3, SIZE, FrozenClock, MakeApp
from tests.tui.helpers import (
    ask,
    chat,
    chat_text,
    customer_bubbles,
    flat,
    footer_current,
    footer_offers,
    offered,
    screen_text,
    type_text,
    wait_until,
)

RATING_QUESTION = "How did ben do? Rate it from 1 (poor) to 5 (excellent):"


async def test_the_same_question_again_offers_a_person(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)
        await ask(pilot, "  " + Q1.lower())
        await wait_until(pilot, lambda: REPEAT_NOTICE in chat_text(app))
        # One answer on screen and in the store; the bot judged the question once.
        bot = [b for b in chat(app).query(MessageBubble) if b.message.author is Author.BOT]
        assert len(bot) == 1 and len(other.decisions(1)) == 1
        last = other.entries(1)[-1]
        assert isinstance(last, ChatEvent) and isinstance(last.event, PersonOffered)
        # The offer is one key away: Ctrl+T hands the conversation to a person.
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: other.conversation(1).state is State.WAITING)


async def test_a_new_conversation_starts_afresh_and_keeps_the_old_one(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        panel = chat(app)
        assert not footer_offers(app, "new_conversation")  # Nothing asked yet: it is new.
        await ask(pilot, Q3)  # Escalates: conversation 1 waits for a person.
        await wait_until(pilot, lambda: footer_offers(app, "new_conversation"))
        await pilot.press("ctrl+b")  # It waits for a person: asked first.
        await wait_until(pilot, lambda: isinstance(app.screen, NewChatDialog))
        await pilot.press("ctrl+b")  # Ctrl+B again: yes, a new chat.
        await wait_until(pilot, lambda: customer_bubbles(panel) == 0)
        assert "You are talking to the bot." in chat_text(app)
        assert ESCALATED_NOTICE not in chat_text(app)
        assert app.screen.focused is panel.question
        await ask(pilot, Q1)
        assert panel.conversation_id == 2
        assert [m.text for m in other.messages(2) if m.author is Author.CUSTOMER] == [Q1]
        # The old conversation is untouched, still in the queue for a person.
        assert other.conversation(1).state is State.WAITING
        assert [m.text for m in other.messages(1) if m.author is Author.CUSTOMER] == [Q3]
        # The command palette offers it too.
        await pilot.press("ctrl+p", *"new conversation")
        await wait_until(pilot, lambda: offered(app, "New conversation"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: panel.conversation_id is None)
        assert customer_bubbles(panel) == 0


async def test_a_browser_session_keeps_its_conversation(
    make_app: MakeApp, other: DeskService
) -> None:
    cid = other.start_conversation().id
    app = make_app("chat", conversation_id=cid, fixed_conversation=True, editor=False)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)
        assert not footer_offers(app, "new_conversation")
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert chat(app).conversation_id == cid


async def test_a_resolved_conversation_asks_for_a_rating(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        panel = chat(app)
        await ask(pilot, Q3)
        assert not panel.rating.display
        other.claim(1, agent="ben")
        other.resolve(1, agent="ben")
        await wait_until(pilot, lambda: RATING_QUESTION in chat_text(app))
        # The question box keeps the focus; Shift+Tab reaches the rating, where 1–5 rate.
        assert app.screen.focused is panel.question
        await pilot.press("shift+tab")
        assert isinstance(app.screen.focused, RatingPrompt)
        await type_text(pilot, "ok")  # Not a rating: meant for the question box.
        assert app.screen.focused is panel.question and panel.question.value == "ok"
        assert panel.rating.display
        await pilot.press("shift+tab")
        assert isinstance(app.screen.focused, RatingPrompt)
        await pilot.press("4")
        await wait_until(pilot, lambda: not panel.rating.display)
        last = other.entries(1)[-1]
        assert isinstance(last, ChatEvent)
        assert last.event == Rated(rating=4, resolved_entry=last.id - 1, agent="ben")
        await wait_until(pilot, lambda: "You rated this conversation 4 out of 5." in chat_text(app))
        assert app.screen.focused is panel.question


async def test_a_rating_by_click_once_per_resolution(make_app: MakeApp, other: DeskService) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        panel = chat(app)
        await ask(pilot, Q3)
        other.claim(1, agent="ben")
        other.resolve(1, agent="ben")
        await wait_until(pilot, lambda: panel.rating.display)
        # Clicked once it is laid out where the click lands (a click on a prompt still being
        # placed can miss it).
        button = panel.query_one("#rate-2")
        await wait_until(pilot, lambda: button.region.width > 0 and button.region.height > 0)
        await pilot.pause()
        assert await pilot.click("#rate-2"), "the click missed the button"
        await wait_until(pilot, lambda: not panel.rating.display)
        # Writing again reopens it: no rating is asked while the bot has it.
        await ask(pilot, Q2)
        assert not panel.rating.display
        rated = [e.event for e in other.entries(1) if isinstance(e, ChatEvent)]
        assert [r.rating for r in rated if isinstance(r, Rated)] == [2]


async def test_a_rating_from_the_command_palette(make_app: MakeApp, other: DeskService) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        panel = chat(app)
        await ask(pilot, Q3)
        other.claim(1, agent="ben")
        other.resolve(1, agent="ben")
        await wait_until(pilot, lambda: panel.rating.display)
        await pilot.press("ctrl+p", *"rating 5")
        await wait_until(pilot, lambda: offered(app, "Rating: 5 (excellent)"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: not panel.rating.display)
        rated = [e.event for e in other.entries(1) if isinstance(e, ChatEvent)][-1]
        assert isinstance(rated, Rated) and rated.rating == 5


async def test_a_customer_in_another_window_hears_a_reply_from_the_bell(
    make_app: MakeApp, other: DeskService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The terminal's bell (in a browser, a mark on the tab's title) rings when the bot or a
    person writes to a customer whose chat has not the focus: not for the desk's notices, nor
    while the customer is looking."""
    app = make_app("chat")
    rung: list[None] = []
    async with app.run_test(size=SIZE) as pilot:
        monkeypatch.setattr(app, "bell", lambda: rung.append(None))  # Headless: it writes nothing.
        await ask(pilot, Q1)
        await wait_until(pilot, lambda: "Source: Charged twice" in chat_text(app))
        assert rung == []  # Looking: the answer is there to see.
        app.post_message(events.AppBlur())
        await wait_until(pilot, lambda: not app.app_focus)
        other.talk_to_person(1)
        other.claim(1, agent="ben")
        await wait_until(pilot, lambda: "ben (support agent) is helping you." in chat_text(app))
        assert rung == []
        other.reply(1, agent="ben", text="Ben here: it is refunded.")
        await wait_until(pilot, lambda: len(rung) == 1)
        assert "Ben here: it is refunded." in chat_text(app)


async def test_a_waiting_customer_sees_how_many_wait_ahead(
    make_app: MakeApp, other: DeskService
) -> None:
    """The count falls as agents take the conversations ahead, read again at each change."""
    for _ in range(2):  # Two customers of other processes, waiting already.
        other.talk_to_person(other.start_conversation().id)
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+t")
        await wait_until(
            pilot, lambda: "2 ahead of you: a person will reply here." in chat_text(app)
        )
        other.claim(1, agent="ben")
        await wait_until(
            pilot, lambda: "1 ahead of you: a person will reply here." in chat_text(app)
        )
        other.claim(2, agent="ben")
        await wait_until(pilot, lambda: "You are next: a person will reply here." in chat_text(app))
        other.claim(3, agent="ben")
        await wait_until(pilot, lambda: "ben (support agent) is helping you." in chat_text(app))


def footer_keys(app: HelpDeskApp) -> list[str]:
    return [key.description for key in app.screen.query(FooterKey)]


async def test_a_phone_width_chat_keeps_the_keys_that_fit(
    make_app: MakeApp, other: DeskService
) -> None:
    """At 40 columns (a phone's browser) the footer leaves out Helpful and Not helpful, whose
    buttons stay on the answer, and shows the rest in full, Talk to a person first; their keys
    still work, and a wider window shows them again (until the answer is judged: then they no
    longer apply, and stay out)."""
    app = make_app("chat", fixed_conversation=True)  # As a browser's chat.
    async with app.run_test(size=(40, 30)) as pilot:
        await ask(pilot, Q1)
        await wait_until(pilot, lambda: "Source: Charged twice" in chat_text(app))
        await wait_until(pilot, lambda: footer_offers(app, "talk_to_person"))
        shown = footer_keys(app)
        assert shown[0] == "Talk to a person" and "Quit" in shown
        assert "Helpful" not in shown and "Not helpful" not in shown
        footer = app.screen.query_one(Footer)
        assert sum(key.region.width for key in footer.query(FooterKey)) <= footer.region.width
        await pilot.resize_terminal(100, 30)  # Shown again.
        await wait_until(pilot, lambda: "Helpful" in footer_keys(app))
        await pilot.resize_terminal(40, 30)
        await wait_until(pilot, lambda: "Helpful" not in footer_keys(app))
        await pilot.press("ctrl+y")
        [answer] = [m for m in other.messages(1) if m.author is Author.BOT]
        given = FeedbackGiven(entry=answer.id, value=Feedback.HELPFUL)
        await wait_until(pilot, lambda: any(
            isinstance(e, ChatEvent) and e.event == given for e in other.entries(1)
        ))  # fmt: skip
        await pilot.resize_terminal(100, 30)  # Judged: no longer offered, at any width.
        await footer_current(pilot)
        assert "Helpful" not in footer_keys(app) and "Talk to a person" in footer_keys(app)


@pytest.mark.parametrize(
    ("locale", "status", "placeholder"),
    [
        ("en", "You are talking to the bot.", "Type your question, press Enter"),
        ("zh", "您正在与客服机器人对话。", "输入您的问题，按回车发送"),
    ],
)
async def test_the_first_screen_at_80x24_says_its_status_and_placeholder_whole(
    make_app: MakeApp, locale: str, status: str, placeholder: str
) -> None:
    """`helpdesk` in an 80-column terminal, the README's first command: the chat has half the
    width, and its status line and the question box's placeholder used to end cut ("…the
    help…", "press Ente")."""
    app = make_app("all", customer_locale=locale)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: placeholder in screen_text(app, chat(app)))
        shown = screen_text(app, chat(app))
        assert status in shown
        assert "…" not in shown.splitlines()[0]


async def test_each_message_says_when_it_was_written(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    """A customer coming back to a conversation sees when each message came: the time today,
    the date too before today."""
    cid = other.start_conversation().id
    clock.now = datetime(2026, 1, 4, 17, 30, tzinfo=UTC)
    other.talk_to_person(cid)
    other.ask(cid, "My bike will not unlock.")
    other.claim(cid, agent="ben")
    clock.now = datetime(2026, 1, 5, 8, 55, tzinfo=UTC)
    other.reply(cid, agent="ben", text="Try dock 4.")
    clock.now = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    app = make_app("chat", conversation_id=cid)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Try dock 4." in chat_text(app))
        bubbles = {
            b.message.text: flat(screen_text(app, b)) for b in app.screen.query(MessageBubble)
        }
        assert bubbles["My bike will not unlock."].startswith("You 01-04 17:30")
        assert bubbles["Try dock 4."].startswith("ben (support agent) 08:55")


async def unreachable(*args: object, **kwargs: object) -> object:
    """A desk call in an outage: the database's own words, which the customer never reads."""
    raise StoreError("postgresql://postgres@db.internal:5499/hd: database unavailable")


async def test_a_read_failing_after_a_question_was_stored_does_not_ask_to_send_it_again(
    make_app: MakeApp, other: DeskService
) -> None:
    """The question stored and shown, then the database went down: the chat said "What you
    typed stays here: try again in a moment" over an empty box, and customers typed it again."""
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1, wait=False)
        await wait_until(pilot, lambda: bool(other.messages(1)))
        desk = app.services.desk
        read = desk.conversation
        desk.conversation = unreachable  # type: ignore[method-assign, assignment]
        await chat(app).refresh_log()
        shown = chat(app).query_one("#chat-error")
        said = "What you sent is saved, and this chat catches up once it is back."
        await wait_until(pilot, lambda: said in flat(screen_text(app)))
        assert "stays here" not in flat(screen_text(app)) and chat(app).question.value == ""
        desk.conversation = read  # type: ignore[method-assign]
        other.talk_to_person(1)  # A change: the chat reads again, and the line goes.
        await wait_until(pilot, lambda: not shown.display)


async def test_a_key_whose_move_fails_says_it_was_not_done_and_the_line_goes_after(
    make_app: MakeApp, other: DeskService
) -> None:
    """F9 (or Ctrl+T) in an outage said "What you typed stays here" over an empty box, and the
    line stayed for good once the desk was back."""
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1, wait=False)
        await wait_until(pilot, lambda: bool(other.messages(1)))
        desk = app.services.desk
        desk.talk_to_person = unreachable  # type: ignore[method-assign, assignment]
        await pilot.press("ctrl+t")
        said = "The help desk cannot be reached just now, so that was not done."
        await wait_until(pilot, lambda: said in flat(screen_text(app)))
        assert "stays here" not in flat(screen_text(app))
        other.talk_to_person(1)  # Done from elsewhere: the chat reads it, and the line goes.
        shown = chat(app).query_one("#chat-error")
        await wait_until(pilot, lambda: not shown.display)


async def test_a_message_the_desk_could_not_store_is_said_until_it_is_sent(
    make_app: MakeApp, other: DeskService
) -> None:
    # The customer read "postgresql://postgres@127.0.0.1:5499/hd: database unavailable:
    # connection failed: ..." in English. And with SQLite locked by another process, reads
    # work while writes wait and fail: the next read hid the line, and the unsent question
    # looked sent.
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1, wait=False)
        await wait_until(pilot, lambda: bool(other.messages(1)))
        desk = app.services.desk
        stored = desk.ask
        outage = "postgresql://postgres@db.internal:5499/hd: database unavailable: refused"

        async def unreachable(*args: object, **kwargs: object) -> object:
            raise StoreError(outage)

        desk.ask = unreachable  # type: ignore[method-assign, assignment]
        await type_text(pilot, Q2)
        await pilot.press("enter")
        shown = chat(app).query_one("#chat-error")
        await wait_until(pilot, lambda: shown.display)
        text = flat(screen_text(app))
        assert "The help desk cannot be reached just now. What you typed stays here" in text
        assert "postgresql" not in text and "db.internal" not in text
        assert chat(app).question.value == Q2
        # The database down altogether: the reads fail too, and then work again.
        read = desk.conversation
        desk.conversation = unreachable  # type: ignore[method-assign, assignment]
        await chat(app).refresh_log()  # A read, failing as the write did.
        desk.conversation = read  # type: ignore[method-assign]
        desk.ask = stored  # type: ignore[method-assign]
        # A change to the conversation: the chat reads it again, and the line stays.
        other.talk_to_person(1)
        panel = chat(app)
        await wait_until(pilot, lambda: panel.conversation is not None
                         and panel.conversation.state is State.WAITING)  # fmt: skip
        assert shown.display and panel.question.value == Q2
        # Sent again, it is stored, and the line goes.
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(other.messages(1)) >= 2)
        await wait_until(pilot, lambda: not shown.display)
