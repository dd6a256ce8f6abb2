"""Signing out of one of a browser's two tabs, holding claims.

The sign-out dialog counted the browser's other tab as "another of your consoles is still open"
and kept the claims with it; but signing out ends every session of that browser, so no console
was left holding them. Now a browser's consoles name their sessions after its sign-in
("tag.random"), and signing out counts none of that sign-in's as open: quitting still does, as
the other tab stays. Both backends; the clock is injected, moved by hand."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.service import AWAY_AFTER_S, DeskService
from tests.backends import Backend
from tests.store.conftest import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def desk(backend: Backend, clock: FakeClock) -> Iterator[DeskService]:
    service = DeskService(backend.open(clock))
    yield service
    service.close()


def test_signing_out_counts_no_console_of_the_same_sign_in(
    desk: DeskService, clock: FakeClock
) -> None:
    desk.agent_seen("ana", session="aaaa.one")  # This tab.
    desk.agent_seen("ana", session="aaaa.two")  # The browser's other tab.
    assert desk.other_sessions("ana", session="aaaa.one") == 1  # Quitting: the tab stays.
    assert desk.other_sessions("ana", session="aaaa.one", excluding_sign_in="aaaa") == 0
    desk.agent_seen("ana", session="bbbb.one")  # Another browser of hers.
    desk.agent_seen("ana", session="0123abcd")  # A terminal's console: no sign-in.
    desk.agent_seen("ana", session="aaaab.one")  # A tag that only begins the same.
    desk.agent_seen("ben", session="aaaa.three")  # Another agent's, with the same tag.
    assert desk.other_sessions("ana", session="aaaa.one", excluding_sign_in="aaaa") == 3
    assert desk.other_sessions("ana", session="aaaa.one") == 4
    clock.advance(AWAY_AFTER_S + 1)  # Closed without a word: counted by no one.
    desk.agent_seen("ana", session="aaaa.one")
    assert desk.other_sessions("ana", session="aaaa.one", excluding_sign_in="aaaa") == 0


async def test_a_browsers_desk_names_its_sessions_after_its_sign_in(
    backend: Backend, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `chatbot.web.child --sign-in` sets; a terminal's desk (no sign-in) is as before."""
    terminal = AsyncDesk.open(lambda: DeskService(backend.open(clock)))
    monkeypatch.setattr(AsyncDesk, "browser_sign_in", "aaaa")
    here = AsyncDesk.open(lambda: DeskService(backend.open(clock)))
    tab = AsyncDesk.open(lambda: DeskService(backend.open(clock)))
    monkeypatch.setattr(AsyncDesk, "browser_sign_in", "bbbb")
    elsewhere = AsyncDesk.open(lambda: DeskService(backend.open(clock)))
    try:
        assert "." not in terminal.session and terminal.sign_in is None
        assert here.session.startswith("aaaa.") and tab.session.startswith("aaaa.")
        assert here.session != tab.session
        await tab.agent_seen("ana")
        assert await here.other_sessions("ana") == 1
        assert await here.other_sessions("ana", signing_out=True) == 0
        assert await terminal.other_sessions("ana", signing_out=True) == 1
        await elsewhere.agent_seen("ana")
        await terminal.agent_seen("ana")
        assert await here.other_sessions("ana", signing_out=True) == 2
        assert await elsewhere.other_sessions("ana", signing_out=True) == 2
    finally:
        for desk in (terminal, here, tab, elsewhere):
            desk.close()
