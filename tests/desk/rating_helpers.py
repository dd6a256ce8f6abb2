"""The scripted day of tests/desk/helpers.py with its customers' ratings: resolutions rated and
not, by two agents, and a conversation resolved, rated, reopened, resolved and rated again."""

from __future__ import annotations

from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from tests.desk.helpers import Script, script_day
from tests.store.conftest import FakeClock


def rated_day(desk: DeskService, clock: FakeClock) -> None:
    """`script_day`, then (seconds after START): ana's two resolutions (at 582 and 1,861) rated
    4 at 2,010 and 5 at 2,020; a conversation ben resolves at 2,200, rated 2 at 2,210, reopens
    at 2,300 and resolves again at 2,400, rated 3 at 2,410; one ben resolves at 2,600, unrated.
    Everything: 4 ratings (average 3.5) of 5 resolutions, 4 of them rated. The clock is left at
    2,700."""
    script_day(desk, clock)
    s = Script(desk, clock)
    [first, second] = sorted(c.id for c in desk.conversations(state=State.RESOLVED))
    s.at(2010).desk.rate(first, rating=4)
    s.at(2020).desk.rate(second, rating=5)
    again = s.ask(2100, "My bike is stuck in the dock.")
    assert s.at(2101).desk.talk_to_person(again).escalated
    assert s.at(2150).desk.claim(again, agent="ben").won
    s.at(2200).desk.resolve(again, agent="ben")
    s.at(2210).desk.rate(again, rating=2)
    assert s.at(2300).desk.reopen(again, agent="ben").won
    s.at(2400).desk.resolve(again, agent="ben")
    s.at(2410).desk.rate(again, rating=3)
    unrated = s.ask(2500, "Can I rent two bikes at once?")
    assert s.at(2501).desk.talk_to_person(unrated).escalated
    assert s.at(2550).desk.claim(unrated, agent="ben").won
    s.at(2600).desk.resolve(unrated, agent="ben")
    s.at(2700)
