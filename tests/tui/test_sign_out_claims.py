"""Signing out of one of a browser's two tabs while holding claims.

With tab two open, Ana chose Sign out in tab one; the dialog said another of her consoles was
still open, and keeping the claim (its first choice) left it with tab two. But signing out ends
every session of that browser: tab two ended too, and nobody held her claim. Now a browser's
apps are told their sign-in (`AsyncDesk.browser_sign_in`, a tag the server derives from the
cookie), and signing out counts none of its consoles as open: the question is as with no other
console. A console of another sign-in (another browser) stays open, and keeps them as before."""

from __future__ import annotations

import httpx
import pytest

from chatbot.config import Settings
from chatbot.desk.aio import AsyncDesk
from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.dialogs import ClaimsOnQuit
from tests.tui.conftest import FrozenClock
from tests.tui.helpers import palette_ready, type_text, wait_until
from tests.tui.quit_helpers import (
    ANOTHER,
    SIZE,
    UrlsOpened,
    console,
    consoles_open,
    held_by_ben,
    question,
)


def browser_tab(
    monkeypatch: pytest.MonkeyPatch,
    sign_in: str,
    settings: Settings,
    http: httpx.AsyncClient,
    clock: FrozenClock,
) -> HelpDeskApp:
    """A browser session's console, opened with sign-in `sign_in` (as `chatbot.web.child` does)."""
    monkeypatch.setattr(AsyncDesk, "browser_sign_in", sign_in)
    return console(settings, http, clock, sign_out_url="/signout")


async def sign_out_with_another_tab(
    monkeypatch: pytest.MonkeyPatch,
    other_tab_sign_in: str,
    settings: Settings,
    http: httpx.AsyncClient,
    clock: FrozenClock,
    other: DeskService,
) -> str:
    """Ben's console of sign-in `other_tab_sign_in` open, his browser tab of sign-in "aaaa"
    signs out, answering the dialog with Enter (its first choice). Returns what it asked."""
    two = browser_tab(monkeypatch, other_tab_sign_in, settings, http, clock)
    one = browser_tab(monkeypatch, "aaaa", settings, http, clock)
    one.driver_class = UrlsOpened
    async with two.run_test(size=SIZE) as pilot_two:
        await wait_until(pilot_two, lambda: consoles_open(other) == 1)
        async with one.run_test(size=SIZE, headless=False) as pilot:
            driver = one._driver
            assert isinstance(driver, UrlsOpened)
            await wait_until(pilot, lambda: consoles_open(other) == 2)
            await pilot.press("ctrl+p")
            await type_text(pilot, "Sign out")
            await palette_ready(pilot, "Sign out")
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(one.screen, ClaimsOnQuit))
            await pilot.pause()
            said = question(one)
            await pilot.press("enter")  # The focused button: the first choice.
            await wait_until(pilot, lambda: driver.opened == ["/signout"])
    return said


async def test_signing_out_does_not_leave_the_claims_with_a_tab_it_ends(
    settings: Settings,
    http: httpx.AsyncClient,
    clock: FrozenClock,
    other: DeskService,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second, _ = held_by_ben(other)
    said = await sign_out_with_another_tab(monkeypatch, "aaaa", settings, http, clock, other)
    assert ANOTHER not in said and "Hand back (h, Ctrl+Q)" in said, said
    assert [other.conversation(c).state for c in (first, second)] == [State.WAITING] * 2


async def test_signing_out_keeps_the_claims_with_another_browsers_console(
    settings: Settings,
    http: httpx.AsyncClient,
    clock: FrozenClock,
    other: DeskService,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second, _ = held_by_ben(other)
    said = await sign_out_with_another_tab(monkeypatch, "bbbb", settings, http, clock, other)
    assert ANOTHER in said and "Keep (k, Ctrl+Q)" in said, said
    assert [other.conversation(c).agent for c in (first, second)] == ["ben", "ben"]
