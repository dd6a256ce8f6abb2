"""The agent's search (Ctrl+F) while PostgreSQL does not answer (a relay to it gone silent): a
search waiting on the database showed nothing new until the store's deadline, and looked like one
that found nothing. It says it is searching, then that the database cannot be reached."""

from __future__ import annotations

from textual.widgets import Static

from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.find import FindScreen
from chatbot.tui.widgets.agent_console import AgentConsole
from tests.freezing_relay import FreezingRelay
from tests.tui.conftest import SIZE
from tests.tui.helpers import flat, screen_text, wait_until
from tests.tui.postgres_helpers import TROUBLE, agent_through, helmet_waiting, relayed

__all__ = ["relayed"]  # A fixture.

DEADLINE_S = 10.0
"""The store's deadline: long enough for the dialog to be seen waiting on it, even on a loaded
machine (at 3 s, one full run in three missed the moment; the test waits, it does not sleep)."""


def status(app: HelpDeskApp) -> str:
    return flat(str(app.screen.query_one("#find-status", Static).render()))


async def test_a_search_waiting_on_a_silent_database_says_so_then_that_it_cannot_reach_it(
    relayed: tuple[str, str, FreezingRelay],
) -> None:
    url, direct, relay = relayed
    conversation = helmet_waiting(direct)
    app = agent_through(url, DEADLINE_S)
    async with app.run_test(size=SIZE) as pilot:
        console = app.screen.query_one(AgentConsole)
        table = console.queue.table
        await wait_until(pilot, lambda: table.item(conversation) is not None, timeout=30)
        table.focus()
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        find = app.screen
        assert isinstance(find, FindScreen)
        await pilot.press(*"helmet")
        await wait_until(pilot, lambda: status(app).startswith("1 found"), timeout=30)
        relay.freeze()
        await pilot.press("s")
        # The silent server holds a call, and the search says it is searching, or (the desk's
        # calls queued behind a held one fail with it, untried) already that it cannot reach the
        # database: under load the first can pass before a check sees it.
        await wait_until(
            pilot,
            lambda: relay.held.is_set() and (status(app) == "Searching…" or TROUBLE in status(app)),
            timeout=30,
        )
        await wait_until(pilot, lambda: TROUBLE in status(app), timeout=30)
        # The words typed found nothing yet: the results of the words before them are gone.
        assert find.hits == [] and "#1" not in flat(screen_text(app, find))
        relay.thaw()
        await pilot.press("backspace")
        await wait_until(pilot, lambda: status(app).startswith("1 found"), timeout=30)
