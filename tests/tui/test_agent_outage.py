"""The agent console through a database outage: one line says so as soon as the console's own
periodic read fails (an agent who is not typing saw nothing wrong for 35 s and more), and goes
once reads work again; a move that fails says one short line, never the driver's words, and no
key stacks notices of them.

The desk's store fails on demand (`Outage`), with the words PostgreSQL's driver uses when its
server is stopped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.agent_console import AgentConsole
from chatbot.tui.widgets.conversation_view import ConversationView, _sentence
from chatbot.tui.widgets.queue_list import QueueList
from tests.desk.bot_helpers import REFUSED, Outage
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.helpers import flat, screen_text, type_text, wait_until

TROUBLE = "The desk's database cannot be reached: retrying. Nothing is lost."
NOT_DONE = "Not done: the desk's database cannot be reached. Try again in a moment."


@pytest.fixture(autouse=True)
def quick_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The console's periodic read (every 5 s) runs every 0.05 s here."""
    monkeypatch.setattr(QueueList, "BOT_CHECK_S", 0.05)


def waiting(desk: DeskService, question: str = "Where is my helmet?") -> int:
    """A customer in another process who asked for a person, then asked `question`."""
    conversation = desk.start_conversation().id
    desk.talk_to_person(conversation)
    desk.ask(conversation, question)
    return conversation


def shown(app: HelpDeskApp) -> str:
    return flat(screen_text(app))


def counted(calls: list[str], name: str, call: Callable[..., Awaitable[Any]]) -> Any:
    """`call`, noting its name in `calls` once it has returned or failed."""

    async def counting(*args: Any, **kwargs: Any) -> Any:
        try:
            return await call(*args, **kwargs)
        finally:
            calls.append(name)

    return counting


async def a_few_checks_later(pilot: Any, outage: Outage) -> None:
    """Until the console's periodic read has failed three more times: whatever an earlier key
    set going (a notice, a read) has been handled by then."""
    mark = outage.failed
    await wait_until(pilot, lambda: outage.failed >= mark + 3)
    await pilot.pause()


async def test_an_outage_is_one_line_until_reads_work_again(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = waiting(other)
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        console = app.screen.query_one(AgentConsole)
        await wait_until(pilot, lambda: console.queue.table.item(conversation) is not None)
        desk = app.services.desk
        calls: list[str] = []
        desk.take_next = counted(calls, "take_next", desk.take_next)  # type: ignore[method-assign]
        outage = Outage.of(desk)
        outage.down = True
        # The agent touches nothing: the console's own periodic read finds it out.
        await wait_until(pilot, lambda: TROUBLE in shown(app))
        assert not app._notifications
        # F6, twice: nothing stacked, the driver's words nowhere.
        await pilot.press("f6")
        await pilot.press("f6")
        await wait_until(pilot, lambda: calls.count("take_next") == 2)
        await a_few_checks_later(pilot, outage)
        assert not app._notifications, [n.message for n in app._notifications]
        text = shown(app)
        assert text.count(TROUBLE) == 1
        assert "postgresql" not in text.lower() and "Connection refused" not in text
        assert console.open_view is None

        outage.down = False
        await wait_until(pilot, lambda: TROUBLE not in shown(app))
        await pilot.press("f6")
        await wait_until(pilot, lambda: console.open_view is not None)
        assert other.conversation(conversation).agent == "ana"


async def test_a_move_that_fails_says_one_short_line_and_keeps_the_reply(
    make_app: MakeApp, other: DeskService
) -> None:
    # The line above the reply box read "Postgresql://postgres@127.0.0.1:55433/…: database
    # unavailable: connection failed: …", sentence-cased, the driver's lines run together, cut.
    conversation = waiting(other)
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: view.is_mine and view.reply_input.has_focus)
        outage = Outage.of(app.services.desk)
        outage.down = True
        await type_text(pilot, "Try dock 4.")
        await pilot.press("enter")
        hint = view.query_one("#reply-hint")
        await wait_until(pilot, lambda: NOT_DONE in flat(screen_text(app, hint)))
        await wait_until(pilot, lambda: TROUBLE in shown(app))
        assert view.reply_input.value == "Try dock 4."  # Nothing is lost.
        await pilot.press("ctrl+r")  # Resolve, while the database is down.
        await a_few_checks_later(pilot, outage)
        text = shown(app)
        assert "postgresql" not in text.lower() and "Is the server running" not in text
        assert text.count(TROUBLE) == 1 and not app._notifications
        assert flat(screen_text(app, hint)) == NOT_DONE

        outage.down = False
        await wait_until(pilot, lambda: TROUBLE not in shown(app))
        view.reply_input.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: other.messages(conversation)[-1].text == "Try dock 4.")
        assert isinstance(app.screen.query_one(AgentConsole).open_view, ConversationView)


def test_a_refusal_is_one_line_and_never_capitalises_a_url() -> None:
    assert _sentence(REFUSED).startswith("postgresql://postgres@127.0.0.1:55433/helpdesk: ")
    assert "\n" not in _sentence(REFUSED) and "\t" not in _sentence(REFUSED)
    assert "Connection refused Is the server running" in _sentence(REFUSED)
    assert _sentence("conversation 1 is waiting; claim it first") == (
        "Conversation 1 is waiting; claim it first."
    )


async def test_find_and_the_team_view_say_the_outage_not_the_drivers_words(
    make_app: MakeApp, other: DeskService
) -> None:
    # Ctrl+F showed "postgresql://…: database unavailable: connection failed: …", and F4 the
    # same as a notice over "Nobody holds a claim", which was false: nothing could be read.
    waiting(other)
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        console = app.screen.query_one(AgentConsole)
        await wait_until(pilot, lambda: console.queue.table.row_count > 0)
        outage = Outage.of(app.services.desk)
        outage.down = True
        await pilot.press("f4")
        await wait_until(pilot, lambda: shown(app).count(TROUBLE) == 2)  # The console's too.
        assert "Nobody holds a claim" not in shown(app) and not app._notifications
        await pilot.press("escape")
        await pilot.press("ctrl+f")
        await type_text(pilot, "helmet")
        await wait_until(pilot, lambda: shown(app).count(TROUBLE) == 2)
        assert "postgresql" not in shown(app).lower()
        outage.down = False  # The app closes its store as it ends.


async def test_a_conversation_chosen_in_an_outage_says_so_and_opens_once_it_is_back(
    make_app: MakeApp, other: DeskService
) -> None:
    """Enter on a row while the database could not be reached did nothing and said nothing,
    and the conversation never opened; the reply typed next became a search of the queue that
    found nothing and said nothing either."""
    conversation = waiting(other)
    other.claim(conversation, agent="ana")
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        console = app.screen.query_one(AgentConsole)
        await wait_until(pilot, lambda: console.queue.table.item(conversation) is not None)
        outage = Outage.of(app.services.desk)
        outage.down = True
        await wait_until(pilot, lambda: TROUBLE in shown(app))
        console.queue.table.focus()
        await pilot.press("enter")
        unavailable = f"Conversation #{conversation} will open once it is back."
        await wait_until(pilot, lambda: unavailable in shown(app))
        assert console.open_view is None
        # Typed next, on the queue: a search, which says it cannot search now.
        await type_text(pilot, "helmet")
        await wait_until(pilot, lambda: TROUBLE in flat(screen_text(app, app.screen)))
        await pilot.press("escape")

        outage.down = False
        await wait_until(pilot, lambda: console.open_view is not None)
        view = console.open_view
        assert view is not None and view.conversation_id == conversation
        await wait_until(pilot, lambda: view.is_mine)
        assert unavailable not in shown(app)
