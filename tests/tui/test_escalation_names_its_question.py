"""An escalation's notice that comes after the customer wrote again names the question it is
about, in the agent's transcript and in the customer's chat.

The bot, down while the customer wrote, escalated the refund question once it was up, after the
customer had written "hello? anyone?": its `escalated` event is logged then, and "The bot could
not check every help-center passage for this question" sat under "hello? anyone?", which is what
"this question" read as. The notice stays where it came (the customer sees it arrive; the agent
reads it after the hand-back that came first), and quotes the question it is about."""

from __future__ import annotations

from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.conversation_view import ConversationView
from tests.tui.conftest import FrozenClock, MakeApp
from tests.tui.decision_helpers import (
    HELLO,
    REFUND,
    WORKER,
    handed_back_to_a_bot_that_was_down,
    not_judged,
    nothing_found,
)
from tests.tui.helpers import ask, chat, chat_text, flat, screen_text, wait_until

FOR_AGENTS = "The bot could not check every help-center passage for this question"
NAMED = f"About “{REFUND[:49]}…”: {FOR_AGENTS}"
"""The notice, the refund question quoted (cut to 50 cells) before it."""


def transcript(app: HelpDeskApp, view: ConversationView) -> str:
    return flat(screen_text(app, view.transcript))


async def test_the_agents_transcript_names_the_question_a_late_escalation_is_about(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    conversation = handed_back_to_a_bot_that_was_down(other, clock)
    app = make_app("agent", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: FOR_AGENTS in transcript(app, view))
        said = transcript(app, view)
        assert said.index(HELLO) < said.index(NAMED), said


async def test_named_too_when_the_escalation_arrives_while_the_agent_reads(
    make_app: MakeApp, other: DeskService
) -> None:
    """Opened before the bot decides: the question and "hello?" are written first, and the
    escalation comes in a later read of the log; a question escalated at once is not named."""
    conversation = other.start_conversation().id
    other.ask(conversation, REFUND)
    other.ask(conversation, HELLO)
    app = make_app("agent", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: HELLO in transcript(app, view))
        refund, hello = other.lease(WORKER, limit=2, lease_s=60)
        assert other.record_decision(WORKER, refund, not_judged(REFUND)).outcome == "escalated"
        assert other.record_decision(WORKER, hello, nothing_found(HELLO)).outcome == "kept"
        await wait_until(pilot, lambda: FOR_AGENTS in transcript(app, view))
        said = transcript(app, view)
        assert said.index(HELLO) < said.index(NAMED), said

    # Escalated right under its question: said as before, nothing quoted.
    plain = other.start_conversation().id
    other.ask(plain, REFUND)
    (question,) = other.lease(WORKER, limit=1, lease_s=60)
    assert other.record_decision(WORKER, question, not_judged(REFUND)).outcome == "escalated"
    app = make_app("agent", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        view = await app.open_conversation(plain)
        await wait_until(pilot, lambda: FOR_AGENTS in transcript(app, view))
        said = transcript(app, view)
        assert f"— {FOR_AGENTS}" in said and "About" not in said, said


async def test_the_customers_chat_names_it_too(make_app: MakeApp, other: DeskService) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await ask(pilot, REFUND, wait=False)
        await ask(pilot, HELLO, wait=False)
        conversation = chat(app).conversation_id
        assert conversation is not None
        refund, hello = other.lease(WORKER, limit=2, lease_s=60)
        assert (refund.text, hello.text) == (REFUND, HELLO)
        assert other.record_decision(WORKER, refund, not_judged(REFUND)).outcome == "escalated"
        assert other.record_decision(WORKER, hello, nothing_found(HELLO)).outcome == "kept"
        await wait_until(pilot, lambda: "A person will reply here" in chat_text(app))
        said = chat_text(app)
        named = f"About “{REFUND[:49]}…”: The bot could not check every help-center passage"
        assert said.index(HELLO) < said.index(named), said
