"""What the conversation view says is true of the conversation now: a decision the bot kept to
itself (a person had taken over) is not said as an answer, the header follows a hand-back and the
bot's next answer, and the reply box of a conversation the agent cannot reply in says why rather
than inviting words it then refuses."""

from __future__ import annotations

from chatbot.desk.models import PendingQuestion
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.candidate_bars import CandidateBars
from chatbot.tui.widgets.conversation_view import ConversationView
from tests.desk.bot_helpers import replay_engine
from tests.tui.conftest import Q2, Q3, SIZE, MakeApp
from tests.tui.helpers import flat, screen_text, wait_until

WORKER = "bot-1"


def bars(app: HelpDeskApp, view: ConversationView) -> str:
    return flat(screen_text(app, view.query_one(CandidateBars)))


def header(app: HelpDeskApp, view: ConversationView) -> str:
    return flat(screen_text(app, view.query_one("#conversation-header")))


def take(desk: DeskService) -> PendingQuestion:
    [question] = desk.lease(WORKER, limit=1, lease_s=60)
    return question


async def decide(desk: DeskService, question: PendingQuestion) -> str:
    """The bot's decision on `question`, on the recorded judgments; what came of it."""
    decision = await replay_engine().answer(question.text)
    return desk.record_decision(WORKER, question, decision).outcome


async def test_a_kept_answer_is_said_as_what_the_bot_would_have_done(
    make_app: MakeApp, other: DeskService
) -> None:
    # The side panel said "Answered from damage-fee · threshold 0.70" of a decision the bot
    # kept to itself: ana had the conversation by then, and the customer heard nothing.
    asked = other.ask(None, Q2)
    conversation = asked.conversation.id
    question = take(other)  # The bot judges while the customer asks for a person.
    other.talk_to_person(conversation)
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: view.is_mine)
        assert await decide(other, question) == "kept"
        await wait_until(pilot, lambda: "threshold 0.70" in bars(app, view))
        said = bars(app, view)
        assert (
            "Would have answered from damage-fee; kept silent as the conversation had gone to a "
            "person · "
            "threshold 0.70" in said
        )
        assert "Answered from" not in said


async def test_a_kept_escalation_is_said_so_however_long_ago(
    make_app: MakeApp, other: DeskService
) -> None:
    asked = other.ask(None, Q3)
    conversation = asked.conversation.id
    question = take(other)
    other.talk_to_person(conversation)
    other.claim(conversation, agent="ben")
    assert await decide(other, question) == "kept"
    for n in range(110):  # Its `decided` event is now before the page the view opens on.
        other.add_note(conversation, agent="ben", text=f"note {n}")
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: "threshold 0.70" in bars(app, view))
        said = bars(app, view)
        assert (
            "Would have escalated: low-score; kept silent as the conversation had gone to a person"
            in said
        )
        assert "Escalated: low-score" not in said


async def test_the_header_follows_a_hand_back_and_the_bots_next_answer(
    make_app: MakeApp, other: DeskService
) -> None:
    # After a hand-back the header kept "#1 · bot · low-score · top 0.64", even once the bot had
    # answered at 0.96.
    asked = other.ask(None, Q3)
    conversation = asked.conversation.id
    assert await decide(other, take(other)) == "escalated"
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: "low-score · top 0.64" in header(app, view))
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: view.is_mine)
        # Answered by the agent, so the hand-back gives the bot nothing to judge again.
        other.reply(conversation, agent="ana", text="No fee when the station is full.")
        await wait_until(pilot, lambda: "No fee when" in flat(screen_text(app, view)))
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: header(app, view).endswith(f"#{conversation} · bot"))
        other.ask(conversation, Q2)
        assert await decide(other, take(other)) == "answered"
        await wait_until(
            pilot,
            lambda: header(app, view).endswith(
                f"#{conversation} · bot · answered from damage-fee · top 0.96"
            ),
        )
        assert "low-score" not in header(app, view)


async def test_the_reply_box_of_a_conversation_one_cannot_reply_in_says_why(
    make_app: MakeApp, other: DeskService
) -> None:
    # Ben's conversation said "Reply to the customer and press Enter"; what was typed was then
    # refused with "ben owns this conversation: only they can reply".
    bens = other.start_conversation().id
    other.talk_to_person(bens)
    other.claim(bens, agent="ben")
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(bens)
        box = view.reply_input
        await wait_until(
            pilot,
            lambda: "ben owns this conversation: only they can reply." in screen_text(app, box),
        )
        assert box.placeholder == "ben owns this conversation: only they can reply."
        assert "Reply to the customer" not in flat(screen_text(app))

        await pilot.press("ctrl+n")  # A note is anyone's to write: its box says so.
        await wait_until(pilot, lambda: view.note_mode)
        assert box.placeholder.startswith("Internal note for agents")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not view.note_mode)
        assert box.placeholder == "ben owns this conversation: only they can reply."

        # Ben puts it back in the queue; ana claims it: now the box is hers to reply in.
        other.release(bens, agent="ben")
        await wait_until(pilot, lambda: view.check_action("claim", ()) is True)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: view.is_mine)
        assert box.placeholder == "Reply to the customer and press Enter"
