"""Presence in the agent console: an open console says its agent is here and, on the same tick,
puts back in the queue the claims of agents gone past the grace (so it works with no bot); the
team view shows a colleague gone a while as away, in the reader's language, at 80 columns too.
Time passes by advancing the injected clock."""

from __future__ import annotations

import httpx

from chatbot.config import Settings
from chatbot.desk.models import ChatEvent, QueueItem, Released, State
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.screens.team import TeamScreen
from chatbot.tui.widgets.agent_console import AgentConsole
from chatbot.tui.widgets.queue_list import Columns, status
from tests.tui.conftest import SIZE, FrozenClock
from tests.tui.helpers import flat, in_chinese, queue_rows, screen_text, squashed, wait_until

QUESTION = "My helmet strap broke halfway through the ride and I had to walk the bike back home"


def console(settings: Settings, http: httpx.AsyncClient, clock: FrozenClock) -> HelpDeskApp:
    """Ben's agent console, with no bot running anywhere."""
    return create_app(settings, mode="agent", http=http, clock=clock, agent="ben",
                      timings=False, bot=False)  # fmt: skip


def claimed_by_ana(other: DeskService) -> int:
    """Ana, whose console was open, claimed a conversation; then her console closed."""
    other.agent_seen("ana")
    conversation = other.start_conversation().id
    other.talk_to_person(conversation)
    other.ask(conversation, QUESTION)
    assert other.claim(conversation, agent="ana").won
    return conversation


async def test_an_open_console_puts_back_the_claims_of_an_agent_gone_past_the_grace(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    conversation = claimed_by_ana(other)
    app = console(settings, http, clock)
    async with app.run_test(size=SIZE) as pilot:
        # Ben's console, on opening, says he is here and starts watching Ana's last sighting.
        await wait_until(pilot, lambda: other.agents_seen().get("ben") == clock())
        await pilot.pause()
        clock.advance(settings.agent.release_after_s + 1)
        app.screen.query_one(AgentConsole).presence_tick()  # Its next tick, past the grace.
        # Released: it is his to take from the queue.
        await wait_until(pilot, lambda: [r[1] for r in queue_rows(app)] == [str(conversation)])
        [row] = queue_rows(app)
        assert row[2].startswith("waiting")
    assert other.conversation(conversation).state is State.WAITING
    released = [e.event for e in other.entries(conversation)
                if isinstance(e, ChatEvent) and isinstance(e.event, Released)]  # fmt: skip
    assert released == [Released(agent="ana", away=True)]
    assert other.agents_seen()["ben"] == clock()  # Ben's console said he is here.


async def test_a_reloaded_console_within_the_grace_keeps_its_claims(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    conversation = claimed_by_ana(other)
    clock.advance(settings.agent.release_after_s - 60)
    app = create_app(settings, mode="agent", http=http, clock=clock, agent="ana",
                     timings=False, bot=False)  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:  # Ana reloads: her console is back.
        await wait_until(pilot, lambda: other.agents_seen()["ana"] == clock())
        clock.advance(120)  # Past the grace counted from before the reload.
        assert other.release_away_claims() == []
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        assert queue_rows(app)[0][2] == "claimed by ana for 11m"
    assert other.conversation(conversation).agent == "ana"


async def test_the_team_view_says_a_colleague_is_away(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    conversation = claimed_by_ana(other)
    other.agent_seen("cho")
    chos = other.start_conversation().id
    other.talk_to_person(chos)
    assert other.claim(chos, agent="cho").won
    clock.advance(240)
    other.agent_seen("cho")  # Cho's console is open; Ana's closed 4 minutes ago.
    app = console(settings, http, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        await wait_until(pilot, lambda: isinstance(app.screen, TeamScreen))
        team = app.screen
        assert isinstance(team, TeamScreen)
        await wait_until(pilot, lambda: len(team.claims) == 2)
        await wait_until(
            pilot,
            lambda: (
                f"#{conversation} claimed by ana · away 4m · My helmet" in flat(screen_text(app))
            ),
        )
        text = flat(screen_text(app))
        assert f"#{chos} claimed by cho for 4m" in text  # Here: no mark.
        other.agent_seen("ana")  # Back (a new console), before the grace.
        other.claim(chos, agent="cho")  # Any change: the view reads again.
        other.add_note(chos, agent="cho", text="on it")
        await wait_until(
            pilot,
            lambda: f"#{conversation} claimed by ana for 4m" in flat(screen_text(app)),
        )


async def test_the_team_view_says_it_in_the_agents_language(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    conversation = claimed_by_ana(other)
    clock.advance(240)
    app = console(in_chinese(settings), http, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f4")
        await wait_until(pilot, lambda: isinstance(app.screen, TeamScreen))
        await wait_until(pilot, lambda: f"#{conversation}由ana接手·已离开4m" in squashed(app))


def test_an_away_status_keeps_its_absence_and_cuts_the_name_to_fit() -> None:
    # The queue's columns for claims at 80 columns: the status keeps its width, every column
    # stays, and a long name gives way before the absence does.
    columns = Columns.for_width(78, id_width=1, claims=True)
    assert columns.question >= 16 and not columns.short
    clock = FrozenClock()
    start = clock()
    clock.advance(300)
    name = "Alexandra Konstantinopoulou"
    item = QueueItem(conversation_id=1, state=State.CLAIMED, waiting_since=start, question="q",
                     question_entry=None, reason=None, top_probability=None, agent=name,
                     claimed_at=start)  # fmt: skip
    shown = status(item, clock(), seen={name: start}, width=columns.status)
    assert shown.startswith("claimed by Alex") and shown.endswith("… · away 5m")
    assert len(shown) == columns.status
    short = status(item, clock(), short=True, seen={name: start}, width=14)
    assert short.endswith("… away 5m") and len(short) == 14
    assert status(item, clock(), seen={}) == f"claimed by {name} for 5m"  # Never seen.
