"""A conversation chosen in the queue while PostgreSQL cannot be reached (a relay to it cut, as
when a tester killed the TCP proxy in front of it): Enter did nothing and said nothing, and the
conversation never opened; the words typed next became a search that said nothing either. Now
the console's line says it will open, the search says the database cannot be reached, and the
conversation opens once the server answers again."""

from __future__ import annotations

from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.tui import create_app
from chatbot.tui.widgets.agent_console import AgentConsole
from tests.freezing_relay import FreezingRelay
from tests.tui.conftest import SIZE
from tests.tui.helpers import flat, screen_text, type_text, wait_until
from tests.tui.postgres_helpers import TROUBLE, relayed

__all__ = ["relayed"]  # A fixture.

GIVE_UP_S = 30.0


async def test_enter_on_ones_claim_in_an_outage_says_so_and_opens_it_once_back(
    relayed: tuple[str, str, FreezingRelay],
) -> None:
    url, direct, relay = relayed
    other = open_service(load_settings(store={"db": direct}))
    try:
        conversation = other.start_conversation().id
        other.talk_to_person(conversation)
        other.ask(conversation, "Where is my helmet?")
        other.claim(conversation, agent="ana")
    finally:
        other.close()
    settings = load_settings(store={"db": url, "timeout_s": 2.0})
    app = create_app(settings, mode="agent", timings=False, bot=False, agent="ana")
    async with app.run_test(size=SIZE) as pilot:
        console = app.screen.query_one(AgentConsole)
        table = console.queue.table
        await wait_until(pilot, lambda: table.item(conversation) is not None, timeout=GIVE_UP_S)
        relay.cut()
        await wait_until(pilot, lambda: TROUBLE in flat(screen_text(app)), timeout=GIVE_UP_S)
        table.focus()
        await pilot.press("enter")
        opens = f"Conversation #{conversation} will open once it is back."
        await wait_until(pilot, lambda: opens in flat(screen_text(app)), timeout=GIVE_UP_S)
        assert console.open_view is None
        await type_text(pilot, "helmet")  # On the queue: a search, which says it cannot.
        await wait_until(
            pilot, lambda: TROUBLE in flat(screen_text(app, app.screen)), timeout=GIVE_UP_S
        )
        await pilot.press("escape")
        relay.restore()
        await wait_until(pilot, lambda: console.open_view is not None, timeout=GIVE_UP_S)
        view = console.open_view
        assert view is not None and view.conversation_id == conversation
        await wait_until(pilot, lambda: view.is_mine, timeout=GIVE_UP_S)
        assert opens not in flat(screen_text(app))
