"""The agent's conversation view said "The customer is typing…" after the customer quit their
chat (Ctrl+Q with unsent words in the box), from a signal sent ~7 s after the quit. The view clears
the line by the app's clock once the signal lapses, new signal or not; the one way found for a
signal to come after the quit was the chat opened again, putting the unsent words back in its box,
which counted as typing. Now the words put back tell nobody, and the line goes 6 s after the last
key. Two apps on one database, one clock
(frozen, moved by hand), as the customer's terminal and the agent's."""

from __future__ import annotations

from pathlib import Path

from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.typing_line import TypingLine
from tests.tui.conftest import FrozenClock, MakeApp
from tests.tui.helpers import screen_text, type_text, wait_until
from tests.tui.resume_helpers import SIZE, START_S, chat_ready, claimed, reopened_with, state

__all__ = ["state"]  # A fixture.

TYPING = "The customer is typing…"
WORDS = "and the charger too"


def typing_shown(app: HelpDeskApp) -> bool:
    """The agent's screen says the customer types (as drawn, not only as the widget is set)."""
    return app.screen.query_one("#typing-hint", TypingLine).display and TYPING in screen_text(app)


def typing_gone(app: HelpDeskApp) -> bool:
    return not app.screen.query_one("#typing-hint", TypingLine).display and (
        TYPING not in screen_text(app)
    )


async def test_the_agent_stops_seeing_the_customer_type_once_they_quit_and_come_back(
    make_app: MakeApp, other: DeskService, clock: FrozenClock, db_path: Path, state: Path
) -> None:
    conversation = other.start_conversation().id
    other.talk_to_person(conversation)
    other.ask(conversation, "My bike's lock is stuck")
    other.claim(conversation, agent="ana")

    def customer_chat() -> HelpDeskApp:  # `helpdesk chat`, which keeps the chat for next time.
        return make_app("chat", conversation_id=conversation, keep_chat="helpdesk chat", bot=False)

    agent = make_app("agent")
    async with agent.run_test(size=SIZE) as console:
        view = await agent.open_conversation(conversation)
        await wait_until(console, lambda: view.is_mine)
        chat = customer_chat()
        async with chat.run_test(size=SIZE) as pilot:
            panel = await chat_ready(pilot, chat)
            await wait_until(pilot, lambda: claimed(panel), timeout=START_S)
            panel.question.focus()
            await type_text(pilot, WORDS)
            await wait_until(console, lambda: typing_shown(agent))
            await pilot.press("ctrl+q")  # The words unsent: kept for the next run.
            await wait_until(pilot, lambda: not chat.is_running)
        clock.advance(7)  # No key since: the signal lapsed, and the line goes by the clock.
        await wait_until(console, lambda: typing_gone(agent))
        assert other.typing(conversation) == {}

        again = customer_chat()  # The customer comes back: their words are in the box again.
        async with again.run_test(size=SIZE) as pilot:
            panel = await reopened_with(pilot, again, WORDS)
            assert other.typing(conversation) == {}  # Put back, not typed: nobody is told.
            await console.pause()
            assert typing_gone(agent)
            panel.question.focus()
            await type_text(pilot, "!")  # A key: that is typing.
            await wait_until(console, lambda: typing_shown(agent))
            clock.advance(7)
            await wait_until(console, lambda: typing_gone(agent))
