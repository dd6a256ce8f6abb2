"""Two consoles under one `--agent` name, one quitting.

Ben's console held #1 and #2 and was mid-conversation on #1. A second `helpdesk agent --agent ben
--no-bot` took #3 with F6 and quit with Ctrl+Q; the dialog's default, "Hand back (h, Ctrl+Q)",
handed back all three, #1 from under the first console, its customer told "ben stepped away"
while he was at his desk. The desk knew only that ben was here, not that two of his consoles were.

Now each console says it is open under an id of its own, and one quitting while another is open
says so: keeping is the first choice (Ctrl+Q again), "Hand back only #3" (h) gives back the one it
took, "Hand back all 3" (a) every one. With no other console open the question is as before. Two
apps on one SQLite database, as two terminals are; the clock is frozen, moved by hand."""

from __future__ import annotations

import httpx

from chatbot.config import Settings
from chatbot.desk.models import ChatEvent, Released, State
from chatbot.desk.service import AWAY_AFTER_S, DeskService
from chatbot.tui.screens.dialogs import ClaimsOnQuit
from tests.tui.conftest import FrozenClock
from tests.tui.helpers import footer_line, palette_ready, read, type_text, wait_until
from tests.tui.quit_helpers import (
    ANOTHER,
    SIZE,
    UrlsOpened,
    console,
    consoles_open,
    held_by_ben,
    question,
)


def stepped_away(other: DeskService, conversation: int) -> list[Released]:
    return [e.event for e in other.entries(conversation)
            if isinstance(e, ChatEvent) and isinstance(e.event, Released)]  # fmt: skip


async def test_quitting_one_of_two_consoles_keeps_the_claims_the_other_works(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    first, second, third = held_by_ben(other)
    one, two = console(settings, http, clock), console(settings, http, clock)
    async with one.run_test(size=SIZE) as pilot_one:
        view = await one.open_conversation(first)  # Mid-conversation on #1.
        await wait_until(pilot_one, lambda: view.is_mine)
        await wait_until(pilot_one, lambda: consoles_open(other) == 1)
        async with two.run_test(size=SIZE) as pilot_two:
            await wait_until(pilot_two, lambda: consoles_open(other) == 2)
            await pilot_two.press("f6")  # Takes #3.
            await wait_until(pilot_two, lambda: other.conversation(third).agent == "ben")
            await pilot_two.press("ctrl+q")
            await wait_until(pilot_two, lambda: isinstance(two.screen, ClaimsOnQuit))
            await pilot_two.pause()
            said = question(two)
            assert "You hold 3 claimed conversations, and " + ANOTHER in said
            assert "This console took #3." in said
            for label in ("Keep (k, Ctrl+Q)", "Hand back only #3 (h)", "Hand back all 3 (a)",
                          "Cancel (Esc)"):  # fmt: skip
                assert label in said, label
            line = await footer_line(pilot_two)
            # The footer names the keys as the buttons do, whole.
            assert "k Keep" in line and "h Hand back only #3" in line, line
            assert "a Hand back all 3" in line, line
            await pilot_two.press("ctrl+q")  # Again: the first choice, keeping.
            await wait_until(pilot_two, lambda: two.return_code is not None)
        # Nothing handed back: the first console still has #1, its reply box open.
        assert [other.conversation(c).agent for c in (first, second, third)] == ["ben"] * 3
        assert stepped_away(other, first) == []
        await pilot_one.pause()
        assert view.is_mine
        assert consoles_open(other) == 1  # The second said it closed.


async def test_h_hands_back_only_what_this_console_took_and_a_all(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    first, second, third = held_by_ben(other)

    async def second_console_quits(key: str, *, take: bool) -> None:
        two = console(settings, http, clock)
        async with two.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: consoles_open(other) == 2)
            if take:
                await pilot.press("f6")
                await wait_until(pilot, lambda: other.conversation(third).agent == "ben")
            await pilot.press("ctrl+q")
            await wait_until(pilot, lambda: isinstance(two.screen, ClaimsOnQuit))
            read(
                two.screen
            )  # A letter pressed at once is typing, for the reply box (test_agent_dialog_bursts).
            await pilot.press(key)
            await wait_until(pilot, lambda: two.return_code is not None)

    one = console(settings, http, clock)
    async with one.run_test(size=SIZE) as pilot_one:
        await wait_until(pilot_one, lambda: consoles_open(other) == 1)
        await second_console_quits("h", take=True)
        states = [other.conversation(c).state for c in (first, second, third)]
        assert states == [State.CLAIMED, State.CLAIMED, State.WAITING]
        assert stepped_away(other, third) == [Released(agent="ben")]
        await second_console_quits("a", take=False)
        assert [other.conversation(c).state for c in (first, second)] == [State.WAITING] * 2


async def test_a_second_console_that_took_nothing_offers_no_h(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    first, second, _ = held_by_ben(other)
    one, two = console(settings, http, clock), console(settings, http, clock)
    async with one.run_test(size=SIZE) as pilot_one:
        await wait_until(pilot_one, lambda: consoles_open(other) == 1)
        async with two.run_test(size=SIZE) as pilot_two:
            await wait_until(pilot_two, lambda: consoles_open(other) == 2)
            await pilot_two.press("ctrl+q")
            await wait_until(pilot_two, lambda: isinstance(two.screen, ClaimsOnQuit))
            await pilot_two.pause()
            assert "Hand back only" not in question(two)
            assert "This console took" not in question(two)
            read(
                two.screen
            )  # A letter pressed at once is typing, for the reply box (test_agent_dialog_bursts).
            await pilot_two.press("h")  # The old dialog's key: hands back nothing now.
            await pilot_two.pause()
            assert isinstance(two.screen, ClaimsOnQuit)
            await pilot_two.press("k")
            await wait_until(pilot_two, lambda: two.return_code is not None)
        assert [other.conversation(c).agent for c in (first, second)] == ["ben", "ben"]


async def test_with_the_other_console_gone_the_question_is_as_before(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    """The first quit keeping them (so the second sees it closed at once); a console gone without
    a word (a killed terminal) stops counting once it is not seen for a minute."""
    first, second, _ = held_by_ben(other)
    one, two = console(settings, http, clock), console(settings, http, clock)
    async with one.run_test(size=SIZE) as pilot_one:
        await wait_until(pilot_one, lambda: consoles_open(other) == 1)
        async with two.run_test(size=SIZE) as pilot_two:
            await wait_until(pilot_two, lambda: consoles_open(other) == 2)
            await pilot_one.press("ctrl+q")
            await wait_until(pilot_one, lambda: isinstance(one.screen, ClaimsOnQuit))
            assert ANOTHER in question(one)
            read(one.screen)
            await pilot_one.press("k")
            await wait_until(pilot_one, lambda: one.return_code is not None)
            assert consoles_open(other) == 1
            await pilot_two.press("ctrl+q")
            await wait_until(pilot_two, lambda: isinstance(two.screen, ClaimsOnQuit))
            said = question(two)
            assert ANOTHER not in said and "Hand back (h, Ctrl+Q)" in said
            await pilot_two.press("escape")  # Stays.
            await wait_until(pilot_two, lambda: not isinstance(two.screen, ClaimsOnQuit))

    # Every console so far ended in order, and said so (as one ended by a signal does).
    assert consoles_open(other) == 0
    # Another console, killed outright (kill -9, a crash): it never said it closed.
    other.agent_seen("ben", session="killed")
    last = console(settings, http, clock)
    async with last.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: consoles_open(other) == 2)
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(last.screen, ClaimsOnQuit))
        assert ANOTHER in question(last)  # Seen within the minute: it may be open.
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(last.screen, ClaimsOnQuit))
        clock.advance(AWAY_AFTER_S + 1)
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(last.screen, ClaimsOnQuit))
        assert ANOTHER not in question(last)
        await pilot.press("ctrl+q")  # Again: handing back, as before.
        await wait_until(pilot, lambda: last.return_code is not None)
    assert [other.conversation(c).state for c in (first, second)] == [State.WAITING] * 2


async def test_signing_out_of_one_of_two_browser_tabs_keeps_the_claims(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    first, second, _ = held_by_ben(other)
    one = console(settings, http, clock, sign_out_url="/signout")
    two = console(settings, http, clock, sign_out_url="/signout")
    two.driver_class = UrlsOpened
    async with one.run_test(size=SIZE) as pilot_one:
        await wait_until(pilot_one, lambda: consoles_open(other) == 1)
        async with two.run_test(size=SIZE, headless=False) as pilot_two:
            driver = two._driver
            assert isinstance(driver, UrlsOpened)
            await wait_until(pilot_two, lambda: consoles_open(other) == 2)
            await pilot_two.press("ctrl+p")
            await type_text(pilot_two, "Sign out")
            await palette_ready(pilot_two, "Sign out")
            await pilot_two.press("enter")
            await wait_until(pilot_two, lambda: isinstance(two.screen, ClaimsOnQuit))
            assert ANOTHER in question(two)
            await pilot_two.press("enter")  # The focused button: Keep.
            await wait_until(pilot_two, lambda: driver.opened == ["/signout"])
    assert [other.conversation(c).agent for c in (first, second)] == ["ben", "ben"]
