"""Sign out in the command palette of a signed-in account's browser session. It sends the
page to the server's sign-out page (only the server can clear the browser's cookie), having
first offered the agent's claims back, as quitting does. A terminal's app, signed in as nobody,
offers no Sign out. (In a browser: tests/web/test_sign_out.py.)"""

from __future__ import annotations

from typing import Any

from textual.drivers.headless_driver import HeadlessDriver

from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.dialogs import ClaimsOnQuit
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.desk_helpers import asked_for_a_person, claim
from tests.tui.helpers import palette_ready, read, type_text, wait_until

SIGN_OUT_URL = "/signout"


class UrlsOpened(HeadlessDriver):
    """A headless driver that keeps the URLs the app asks to open, as a browser would get
    them (Textual's own opens them in the machine's web browser)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.opened: list[tuple[str, bool]] = []

    def open_url(self, url: str, new_tab: bool = True) -> None:
        self.opened.append((url, new_tab))


def palette_titles(app: HelpDeskApp) -> list[str]:
    return [command.title for command in app.get_system_commands(app.screen)]


async def test_sign_out_hands_the_claims_back_then_opens_the_sign_out_page(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent", bot=False, editor=False, sign_out_url=SIGN_OUT_URL)
    app.driver_class = UrlsOpened
    async with app.run_test(size=SIZE, headless=False) as pilot:
        driver = app._driver
        assert isinstance(driver, UrlsOpened)
        conversation = asked_for_a_person(other)
        await claim(pilot, other, conversation)
        assert "Sign out" in palette_titles(app)
        await pilot.press("ctrl+p")
        await type_text(pilot, "Sign out")
        await palette_ready(pilot, "Sign out")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ClaimsOnQuit))
        assert driver.opened == []  # Not before the agent has answered.
        read(
            app.screen
        )  # A letter pressed at once is typing, for the reply box (test_agent_dialog_bursts).
        await pilot.press("h")
        await wait_until(pilot, lambda: driver.opened == [(SIGN_OUT_URL, False)])
        assert other.conversation(conversation).agent is None  # Back in the queue.
        # The page leaving ends the session, as closing it does; the app does not quit first,
        # so the page goes to the sign-out page rather than "This session has ended".
        assert app.is_running


async def test_a_terminals_app_offers_no_sign_out(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE):
        assert "Sign out" not in palette_titles(app)
        assert "Quit" in palette_titles(app)
