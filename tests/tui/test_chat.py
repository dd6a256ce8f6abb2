"""The customer chat: answers with their source, escalations, the working indicator, feedback on
the latest answer, "talk to a person", inline errors, and a person's replies arriving live. The
app's own bot worker answers; another connection (`other`) stands for another process."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

import httpx
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, Static

from chatbot.config import load_settings
from chatbot.desk.models import (
    BOT_STALLED_S,
    Author,
    ChatEvent,
    Feedback,
    FeedbackGiven,
    State,
    bot_stalled_after,
)
from chatbot.desk.service import DeskService
from chatbot.engine.engine import Engine
from chatbot.engine.models import Decision, Reason
from chatbot.notices import ASKED_NOTICE, ESCALATED_NOTICE, NOT_CHECKED_NOTICE
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.screens.new_chat_dialog import NewChatDialog
from chatbot.tui.widgets.bot_working import BotWorking
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.message_bubble import MessageBubble
from chatbot.tui.widgets.suggestion_list import SuggestedQuestion
from tests.tui.conftest import Q1, Q2, Q3, SIZE, FrozenClock, MakeApp
from tests.tui.helpers import (
    ask,
    chat,
    chat_text,
    engine_ready,
    flat,
    palette_ready,
    queue_rows,
    screen_text,
    settled,
    type_text,
    wait_until,
)

CHARGED_TEXT = "Charged twice for one ride? The first charge is a temporary hold of 1 euro"


class GatedEngine(Engine):
    """The real engine, holding each answer until the test opens the gate."""

    def __init__(self, inner: Engine) -> None:
        super().__init__(retriever=inner.retriever, judge=inner.judge,
                         threshold=inner.threshold, k=inner.k)  # fmt: skip
        self.gate = asyncio.Event()
        self.waiting = 0

    async def answer(self, question: str) -> Decision:
        self.waiting += 1
        try:
            await self.gate.wait()
        finally:
            self.waiting -= 1
        return await super().answer(question)


def bot_bubbles(app: HelpDeskApp) -> list[MessageBubble]:
    return [b for b in app.screen.query(MessageBubble) if b.message.author is Author.BOT]


async def test_seed_question_1_is_answered_with_the_passage_and_its_source(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)
        [bot] = bot_bubbles(app)
        assert bot.message.passage_id == "card-charged-twice"
        shown = chat_text(app)
        assert CHARGED_TEXT in shown
        assert "Source: Charged twice for one ride (card-charged-twice)" in shown
        [stored] = other.decisions(1)
        assert stored.decision.answer is not None and stored.worker == app.bot.name  # type: ignore[union-attr]
        assert other.conversation(1).state is State.BOT


async def test_the_question_is_stored_then_judged_while_an_indicator_shows(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await engine_ready(app)  # Built after the first screen.
        gated = GatedEngine(app.services.engine)
        app.services.engine = gated
        await ask(pilot, Q1, wait=False)
        # Stored, pending, before the engine has answered; the customer sees the indicator.
        [question] = other.messages(1)
        assert (question.text, question.pending) == (Q1, True)
        await wait_until(pilot, lambda: gated.waiting == 1)
        assert app.screen.query_one(BotWorking).display
        field = app.screen.query_one("#question", Input)
        assert not field.disabled
        await pilot.press("h", "i")  # The input stays usable while the bot works.
        assert field.value == "hi"

        gated.gate.set()
        await wait_until(pilot, lambda: bool(bot_bubbles(app)))
        assert not app.screen.query_one(BotWorking).display
        assert bot_bubbles(app)[0].message.passage_id == "card-charged-twice"


async def test_a_second_question_does_not_cancel_the_first(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await engine_ready(app)  # Built after the first screen.
        gated = GatedEngine(app.services.engine)
        app.services.engine = gated
        await ask(pilot, Q1, wait=False)
        await ask(pilot, Q3, wait=False)
        await wait_until(pilot, lambda: gated.waiting == 2)  # Both judged at once.
        assert app.screen.query_one(BotWorking).display
        gated.gate.set()
        await wait_until(pilot, lambda: settled(chat(app)))
        # Each stored question got its own decision; neither was dropped.
        assert sorted(d.decision.question for d in other.decisions(1)) == sorted([Q1, Q3])
        assert not app.screen.query_one(BotWorking).display


async def test_a_question_no_bot_takes_offers_a_person_after_a_while(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    """With no bot running (`--no-bot`, or every worker busy) the customer watched "looking for
    an answer" for ever. Past the bot's Valen budget the line says a person is one key away."""
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1, wait=False)
        line = app.screen.query_one(BotWorking)
        await wait_until(pilot, lambda: line.display)
        text = partial(screen_text, app, line)
        assert "looking for an answer" in flat(text())
        # Tests run with animations off, as some people do: Textual's indicator then said
        # "Loading...", cut to "Loadin" against the sentence.
        assert flat(text()).startswith("● ● ● The bot is looking for an answer")
        clock.advance(BOT_STALLED_S - 1)
        await pilot.pause()
        assert "looking for an answer" in flat(text()) and not line.slow
        clock.advance(1)
        await wait_until(pilot, lambda: "Ctrl+T hands your question to a person." in flat(text()))
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: other.conversation(1).state is State.WAITING)
        await wait_until(pilot, lambda: not line.display)
        # A new conversation's question starts the wait again (asked first: one waits).
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: isinstance(app.screen, NewChatDialog))
        await pilot.press("ctrl+b")
        await ask(pilot, Q2, wait=False)
        await wait_until(pilot, lambda: line.display)
        assert "looking for an answer" in flat(text()) and not line.slow


async def test_a_longer_valen_budget_waits_longer_before_offering_a_person(
    db_path: Path, http: httpx.AsyncClient, clock: FrozenClock
) -> None:
    # A bot may spend `valen.budget_s` on one question: with 50 s a fixed 30 s offered a person
    # while a bot was still at work. The line now waits the budget and 10 s more.
    settings = load_settings(store={"db": db_path}, valen={"budget_s": 50.0})
    app = create_app(settings, mode="chat", http=http, clock=clock, timings=False, bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1, wait=False)
        line = app.screen.query_one(BotWorking)
        await wait_until(pilot, lambda: line.display)
        assert bot_stalled_after(50.0) == 60.0 and bot_stalled_after(5.0) == BOT_STALLED_S
        clock.advance(59)
        await pilot.pause()
        assert not line.slow and "looking for an answer" in flat(screen_text(app, line))
        clock.advance(1)
        await wait_until(pilot, lambda: "hands your question" in flat(screen_text(app, line)))


async def test_seed_question_3_escalates_into_the_queue_panel(make_app: MakeApp) -> None:
    app = make_app("all")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q3)
        assert ESCALATED_NOTICE in chat_text(app)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        [row] = queue_rows(app)
        assert row[:2] == ("●", "1")  # Unread: this agent has not opened it.
        assert row[2] in ("0s", "waiting 0s")  # The half-screen panel has the short form.
        assert row[3] == "low-score"
        assert row[4] == "0.64"
        assert row[5].startswith("There were no free")  # Cut to the half-screen panel.
        await wait_until(pilot, lambda: "You are next: a person will reply here." in chat_text(app))


async def test_talk_to_a_person_at_any_moment(make_app: MakeApp, other: DeskService) -> None:
    app = make_app("all")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("ctrl+t")  # Before any question at all.
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        # The notice reaches the chat on its own way (the conversation's update), maybe later.
        await wait_until(pilot, lambda: ASKED_NOTICE in chat_text(app))
        [row] = queue_rows(app)
        assert row[3] == "customer-asked"
        assert other.conversation(1).reason is Reason.CUSTOMER_ASKED
        # Again, before anyone claimed it: nobody "already has" it, the customer is queued.
        await pilot.press("ctrl+t")
        await wait_until(
            pilot, lambda: "You are already waiting for a person." in flat(screen_text(app))
        )
        assert "already has" not in flat(screen_text(app))


async def test_enter_and_ctrl_t_together_make_one_conversation(
    make_app: MakeApp, other: DeskService
) -> None:
    # Enter and Ctrl+T arrive together: Ctrl+T reaches the chat first (the question box sends
    # its Submitted after the keys it already holds), and started a conversation of its own
    # while the question started another: an empty one waited in the queue ahead of the
    # customer. Keys as a terminal sends them, with no wait between them.
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, Q1)
        app.simulate_key("enter")
        app.simulate_key("ctrl+t")
        await wait_until(pilot, lambda: Q1 in chat_text(app) and ASKED_NOTICE in chat_text(app))
        [conversation] = other.conversations()
        assert (conversation.state, conversation.reason) == (State.WAITING, Reason.CUSTOMER_ASKED)
        assert [m.text for m in other.messages(conversation.id)] == [Q1]


async def test_talk_to_a_person_while_the_bot_is_working(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("all")
    async with app.run_test(size=SIZE) as pilot:
        await engine_ready(app)  # Built after the first screen.
        gated = GatedEngine(app.services.engine)
        app.services.engine = gated
        await ask(pilot, Q1, wait=False)
        await wait_until(pilot, lambda: gated.waiting == 1)
        await pilot.press("ctrl+t")
        assert not app.screen.query_one(BotWorking).display  # A person has it now.
        gated.gate.set()
        await wait_until(pilot, lambda: settled(chat(app)))
        # The late answer is kept for the agent but never shown: a person has the conversation.
        assert other.conversation(1).state is State.WAITING
        assert len(other.decisions(1)) == 1
        assert Author.BOT not in [m.author for m in other.messages(1)]
        assert not bot_bubbles(app)


async def test_not_helpful_escalates_with_its_own_reason(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("all")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)
        await pilot.click("#not-helpful")
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        [row] = queue_rows(app)
        assert (row[3], row[4]) == ("not-helpful", "0.90")
        assert len(row[5]) > 10 and Q1.startswith(row[5].rstrip("…"))  # The question, cut to fit.
        assert "You marked this not helpful" in chat_text(app)
        assert other.messages(1)[1].feedback is Feedback.NOT_HELPFUL


async def test_helpful_from_the_keyboard(make_app: MakeApp, other: DeskService) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert other.messages(1)[1].feedback is Feedback.HELPFUL
        assert other.conversation(1).state is State.BOT
        assert "You marked this helpful" in chat_text(app)


async def test_feedback_keys_act_on_the_latest_answer_only_once(
    make_app: MakeApp, other: DeskService
) -> None:
    """Issue 14: ask the first cookbook question, then the second; Ctrl+Y then Ctrl+N mark only
    the second answer, once."""
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)
        await ask(pilot, Q2)
        first, second = bot_bubbles(app)
        assert not first.asks_for_feedback and not first.query("#helpful")
        assert second.asks_for_feedback
        await pilot.press("ctrl+y")
        await pilot.press("ctrl+n")
        await pilot.pause()
        answers = [m for m in other.messages(1) if m.author is Author.BOT]
        assert [a.feedback for a in answers] == [None, Feedback.HELPFUL]
        verdicts = [e.event for e in other.entries(1)
                    if isinstance(e, ChatEvent) and isinstance(e.event, FeedbackGiven)]  # fmt: skip
        assert verdicts == [FeedbackGiven(entry=answers[1].id, value=Feedback.HELPFUL)]
        assert other.conversation(1).state is State.BOT  # Ctrl+N escalated nothing.
        assert not chat(app).error.display
        assert chat_text(app).count("You marked this") == 1


async def test_empty_input_gets_an_inline_message(make_app: MakeApp, other: DeskService) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "   ")
        error = app.screen.query_one("#chat-error", Static)
        assert error.display
        await wait_until(pilot, lambda: "Please type a question first." in chat_text(app))
        assert other.conversations() == []
        await ask(pilot, Q1)  # The next real question clears it.
        assert not error.display


async def test_a_question_too_long_says_by_how_much_and_stays_in_the_box(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        pasted = "x" * 2_345
        field = app.screen.query_one("#question", Input)
        field.value = pasted
        await pilot.press("enter")
        said = "Your question has 2,345 characters; the limit is 2,000."
        await wait_until(pilot, lambda: said in chat_text(app))
        assert field.value == pasted  # Kept, to shorten.
        assert other.conversations() == []


async def test_a_double_enter_sends_the_question_once(
    make_app: MakeApp, other: DeskService
) -> None:
    """Both presses of a quick double Enter (a slow connection, an impatient key) reach the box
    before the first is stored, each submitting the words it held: the question was stored and
    answered twice. Pressed once the box is emptied, Enter said to type a question first."""
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        field = app.screen.query_one("#question", Input)
        field.value = Q1
        await pilot.pause()
        app.post_message(events.Key("enter", "\r"))
        app.post_message(events.Key("enter", "\r"))
        await wait_until(pilot, lambda: len(other.messages(1)) == 2)  # The question, answered.
        await pilot.press("enter")  # On the box the send emptied.
        await pilot.pause()
        assert [m.author for m in other.messages(1)] == [Author.CUSTOMER, Author.BOT]
        assert not app.screen.query_one("#chat-error", Static).display
        await ask(pilot, Q1)  # Typed again, it is sent again (and a person is offered).
        customer = [m for m in other.messages(1) if m.author is Author.CUSTOMER]
        assert len(customer) == 2


async def test_a_person_replies_live_from_another_process(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q3)
        assert other.claim(1, agent="ben").won
        other.reply(1, agent="ben", text="No late fee: we waive it when docks are full.")
        took = await wait_until(pilot, lambda: "we waive it" in chat_text(app))
        # Heard of, not read on a timer (the chat has none while reads work): a loaded machine
        # took more than a second now and then, a timer would take its whole period.
        assert took < 3.0
        assert "ben (support agent) is helping you." in chat_text(app)


async def test_the_bot_is_silent_while_a_person_owns_the_conversation(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q3)
        other.claim(1, agent="ben")
        await wait_until(pilot, lambda: "ben (support agent)" in chat_text(app))
        await ask(pilot, Q1)  # A question the bot would answer, were it its turn.
        assert [m.author for m in other.messages(1)][-1] is Author.CUSTOMER
        assert not other.messages(1)[-1].pending
        assert len(other.decisions(1)) == 1  # Only the first question was ever judged.
        assert not app.screen.query_one(BotWorking).display


async def test_replay_mode_offers_the_recorded_questions(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        shown = chat_text(app)
        assert "the bot has recorded answers for these questions only" in shown
        assert f"• {Q1}" in shown and f"• {Q3}" in shown
        await pilot.press("ctrl+p")
        await type_text(pilot, "ask late fee")
        await palette_ready(pilot, "ask late fee")
        await pilot.press("enter")
        await wait_until(pilot, lambda: chat(app).conversation is not None and settled(chat(app)))
        assert other.messages(1)[0].text == Q3
        assert other.conversation(1).state is State.WAITING


async def test_the_chat_says_which_suggestion_a_person_answers(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: "late fee?" in screen_text(app))
        lines = screen_text(app).splitlines()
        person = [line for line in lines if "a person will reply" in line]
        # Q3 is the one (its bullet may wrap: the note follows its last words).
        assert len(person) == 1 and "late fee? (a person will reply)" in person[0]
        assert not any(Q1[-20:] in line and "person" in line for line in lines)


async def test_a_click_on_a_suggestion_asks_it(make_app: MakeApp, other: DeskService) -> None:
    app = make_app("chat")
    async with app.run_test(size=(60, 30)) as pilot:
        await wait_until(pilot, lambda: "late fee?" in screen_text(app))
        # A wrapped suggestion continues under its own words, not under the bullet.
        lines = screen_text(app).splitlines()
        first = next(i for i, line in enumerate(lines) if "• I was charged" in line)
        text_column = lines[first].index("I was charged")
        assert lines[first + 1][:text_column].strip() == ""
        assert lines[first + 1][text_column] != " "
        # Half a question typed, then a click: the suggestion is asked and answered, and what
        # was typed stays in the box.
        await type_text(pilot, "my bike")
        rows = list(app.screen.query(SuggestedQuestion))
        assert [row.suggestion.question for row in rows] == [Q1, Q2, Q3]
        await pilot.click(rows[1])
        await wait_until(pilot, lambda: chat(app).conversation is not None and settled(chat(app)))
        assert [m.text for m in other.messages(1)][0] == Q2
        assert other.messages(1)[-1].author is Author.BOT
        await wait_until(pilot, lambda: "worn brakes is never charged" in chat_text(app))
        assert app.screen.query_one("#question", Input).value == "my bike"
        # The suggestions are not Tab stops: focus stays where typing goes.
        assert not any(row.can_focus for row in rows)


async def test_a_double_click_on_a_suggestion_asks_it_once(
    make_app: MakeApp, other: DeskService
) -> None:
    """A double click (a habit from desktop lists) asked the question twice, and the bot then
    offered a person for a question it had just answered."""
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        row = await first_suggestion(pilot, app)
        await pilot.click(row, times=2)
        await wait_until(pilot, lambda: chat(app).conversation is not None and settled(chat(app)))
        await pilot.pause()
        assert [m.author for m in other.messages(1)] == [Author.CUSTOMER, Author.BOT]


async def first_suggestion(pilot: Pilot[None], app: HelpDeskApp) -> SuggestedQuestion:
    """The first suggested question, once the chat lists them."""
    await wait_until(pilot, lambda: bool(app.screen.query(SuggestedQuestion)))
    return app.screen.query(SuggestedQuestion).first()


class BrokenEngine(Engine):
    """An engine that fails outright, as a bug would (Valen failures never raise)."""

    def __init__(self, inner: Engine) -> None:
        super().__init__(retriever=inner.retriever, judge=inner.judge)

    async def answer(self, question: str) -> Decision:
        raise RuntimeError("boom")


async def test_an_engine_crash_hands_the_customer_to_a_person(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("all")
    async with app.run_test(size=SIZE) as pilot:
        await engine_ready(app)  # Built after the first screen.
        app.services.engine = BrokenEngine(app.services.engine)
        await ask(pilot, Q1)
        conversation = other.conversation(1)
        assert (conversation.state, conversation.reason) == (State.WAITING, Reason.VALEN_ERROR)
        assert not app.screen.query_one(BotWorking).display
        # Not "could not answer this from the help center": it was not checked.
        await wait_until(pilot, lambda: NOT_CHECKED_NOTICE in chat_text(app))
        assert app.is_running  # The app stays up.


async def test_the_newest_entry_is_shown_whole_once_the_chat_overflows(make_app: MakeApp) -> None:
    # An answer, then an escalation: the notice wraps to a second line after the log has already
    # scrolled, and was left half below the fold. (Fewer rows than `SIZE`: once a person has
    # the conversation the suggested questions go, and the rest fitted. At 26 rows it overflowed
    # by one row, and a status line a row shorter under load made it fit.)
    app = make_app("all")
    async with app.run_test(size=(SIZE[0], 23)) as pilot:
        await ask(pilot, Q1)
        await ask(pilot, Q3)
        log = app.screen.query_one(ChatPanel).log_view

        def newest_in_view() -> bool:
            newest = log.children[-1]
            return newest.region.height > 0 and newest.region.bottom <= log.region.bottom

        await wait_until(pilot, newest_in_view)
        await pilot.pause()  # And it stays so once every bubble has its height.
        assert newest_in_view() and log.max_scroll_y > 0, log.max_scroll_y  # It did overflow.
        assert ESCALATED_NOTICE in flat(screen_text(app, log))


async def test_a_smaller_window_keeps_the_newest_entry_in_view(make_app: MakeApp) -> None:
    # The chat fitted a large window, so it was not following its end; made small (a phone's
    # keyboard opening), it overflowed and stayed at its top, the answer below the fold.
    app = make_app("chat")
    async with app.run_test(size=(140, 60)) as pilot:
        await ask(pilot, Q1)
        log = app.screen.query_one(ChatPanel).log_view
        await wait_until(pilot, lambda: "Source: Charged twice" in flat(screen_text(app, log)))
        assert log.max_scroll_y == 0  # It fits: nothing to follow yet.
        await pilot.resize_terminal(48, 20)
        await wait_until(pilot, lambda: log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y)
        newest = log.children[-1]
        assert newest.region.height > 0 and newest.region.bottom <= log.region.bottom


async def test_at_80_columns_the_answer_buttons_are_whole_and_the_status_wraps(
    make_app: MakeApp,
) -> None:
    # Chat and queue side by side at 80x24 leave the chat 38 columns: Textual's 16-cell minimum
    # for a button cut "Not helpful" to "Not help", and the status line was cut mid-word (then
    # ended in "…", which still lost the second half of the sentence).
    app = make_app("all")
    async with app.run_test(size=(80, 24)) as pilot:
        await ask(pilot, Q1)
        panel = app.screen.query_one(ChatPanel)
        [bot] = bot_bubbles(app)
        # The log scrolls to the new bubble once it has its height.
        await wait_until(pilot, lambda: "Not helpful" in screen_text(app, bot))
        buttons = screen_text(app, bot)
        assert "Helpful" in buttons and "Not helpful" in buttons
        status = screen_text(app, panel.query_one("#chat-status"))
        assert status.strip() == "You are talking to the bot.", status
        # A status too long for the width goes on to a second line, whole.
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: "You are next" in screen_text(app, panel))
        status = screen_text(app, panel.query_one("#chat-status"))
        assert len(status.splitlines()) == 2, status
        assert flat(status) == "You are next: a person will reply here.", status
