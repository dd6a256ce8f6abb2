"""The agent's search once PostgreSQL answers again: the dialog said "The desk's database cannot be
reached: retrying. Nothing is lost." and kept saying it after the database was back, over screens
that had recovered by themselves, until the agent pressed Escape. Its search is now tried again
with the words typed, and its results replace the line, with no key pressed.

The database goes away behind a relay: refusing connections (a server stopped) or silent (a
server or network path that stopped answering)."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Static

from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.find import FindScreen
from chatbot.tui.widgets.agent_console import AgentConsole
from tests.freezing_relay import FreezingRelay
from tests.tui.conftest import SIZE
from tests.tui.helpers import flat, wait_until
from tests.tui.postgres_helpers import TROUBLE, agent_through, helmet_waiting, relayed

__all__ = ["relayed"]  # A fixture.

DEADLINE_S = 3.0
"""The store's deadline, which a silent server's calls wait out before failing."""


def status(app: HelpDeskApp) -> str:
    return flat(str(app.screen.query_one("#find-status", Static).render()))


@pytest.mark.parametrize("outage", ["refused", "silent"])
async def test_a_search_the_database_could_not_answer_runs_again_once_it_is_back(
    relayed: tuple[str, str, FreezingRelay], outage: str
) -> None:
    url, direct, relay = relayed
    conversation = helmet_waiting(direct)
    app = agent_through(url, DEADLINE_S)
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(AgentConsole).queue.table
        await wait_until(pilot, lambda: table.item(conversation) is not None, timeout=30)
        table.focus()
        # Typed on the queue: the first key opens the search, the rest follow it into the box.
        await pilot.press(*"helme")
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        find = app.screen
        assert isinstance(find, FindScreen)
        await wait_until(pilot, lambda: status(app).startswith("1 found"), timeout=30)
        if outage == "refused":
            relay.cut()
        else:
            relay.freeze()
        # The one search of the words typed during the outage: it fails, and says so.
        await pilot.press("t")
        await wait_until(pilot, lambda: status(app) == TROUBLE, timeout=30)
        assert find.query_one("#find-input", Input).value == "helmet"
        assert find.hits == []
        if outage == "refused":
            relay.restore()
        else:
            relay.thaw()
        # No key pressed: the words typed are searched again once the database answers.
        await wait_until(pilot, lambda: status(app).startswith("1 found"), timeout=30)
        assert [hit.conversation_id for hit in find.hits] == [conversation]
        assert app.screen is find  # Still open, showing what it found.
