"""Signing out in the browser, and a sign-in that runs out.

- A signed-in agent or editor had no way out on screen: Ctrl+Q's "This session has ended… Start
  again" went straight back in as the same account (its cookie lasts 12 hours), and only typing
  `/signout` in the address bar signed them out. The ended page now has a Sign out button, and
  the command palette of their session a Sign out command. A customer, signed in as nobody, has
  neither.
- A console whose sign-in ran out (`web.session_hours`) closed saying "You were signed out: sign
  in again to go on.", though nobody had signed them out: it says the session expired (the old
  words stay for a sign-out or a new password)."""

from __future__ import annotations

import asyncio
import html
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page

from chatbot.accounts.models import Area
from chatbot.web.pages import app_page
from chatbot.web.server import HelpdeskServer
from tests.web.conftest import PASSWORD
from tests.web.harness import Served, run_async, settled, wait_for
from tests.web.helpers import on_the_sign_in_form, signed_in_cookie
from tests.web.server_helpers import HOURS, Clock, here, open_console_then_run_out

EXPIRED_WORDS = "Your session has expired: sign in again to go on."


def sign_in(page: Page, url: str, area: str, name: str) -> None:
    """Sign in on the form /agent or /editor shows, and wait for the console to draw."""
    page.goto(f"{url}/{area}")
    page.fill("#name", name)
    page.fill("#password", PASSWORD)
    with page.expect_navigation():
        page.click("button[type=submit]")
    page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)


def sessions_of(served: Served, account: str) -> list[object]:
    return [session for session in served.sessions() if session.account == account]


# -- the page, as the server writes it ------------------------------------------------------------


def sign_out_forms(area: Area | None) -> list[str]:
    page = app_page(area=area, path="/", websocket_url="ws://127.0.0.1:1/ws")
    dialog = page[page.index('class="dialog-container closed-dialog"') :]
    return re.findall(r'<form[^>]*action="/signout"[^>]*>.*?</form>', dialog)


@pytest.mark.parametrize("area", [Area.AGENT, Area.EDITOR], ids=["agent", "editor"])
def test_the_ended_page_of_an_account_offers_sign_out(area: Area) -> None:
    [form] = sign_out_forms(area)
    assert 'method="post"' in form  # Not a link: another site could not sign the browser out.
    assert ">Sign out</button>" in form


def test_the_ended_page_of_a_customer_offers_no_sign_out() -> None:
    assert sign_out_forms(None) == []


def test_the_ended_page_has_words_for_an_expired_session() -> None:
    page = app_page(area=Area.AGENT, path="/agent", websocket_url="ws://127.0.0.1:1/ws")
    match = re.search(r'data-expired="([^"]*)"', page)
    assert match is not None and html.unescape(match.group(1)) == EXPIRED_WORDS
    zh = app_page(area=Area.AGENT, path="/agent", websocket_url="ws://x/ws", locale="zh")
    assert "会话已过期" in zh


# -- in the browser -------------------------------------------------------------------------------


def test_sign_out_on_the_page_of_a_session_ended_with_ctrl_q(
    context: BrowserContext, served: Served
) -> None:
    page = context.new_page()
    sign_in(page, served.url, "agent", "ana")
    settled(page)
    page.keyboard.press("Control+q")
    page.wait_for_selector("body.-closed", state="attached", timeout=30_000)
    # "Start again" keeps the keyboard; Sign out is beside it.
    wait_for(
        lambda: page.evaluate("document.activeElement.matches('.closed-dialog a')"),
        what="the keyboard on Start again",
        timeout=10,
    )
    button = page.locator(".closed-dialog button[type=submit]")
    assert button.is_visible() and button.inner_text() == "Sign out"
    assert signed_in_cookie(context)
    with page.expect_navigation():
        button.click()
    page.wait_for_selector("#password", timeout=30_000)
    assert not signed_in_cookie(context)
    page.goto(f"{served.url}/agent")  # Not back in as ana: the sign-in form.
    assert on_the_sign_in_form(page)


def test_sign_out_from_an_editors_command_palette(context: BrowserContext, served: Served) -> None:
    page = context.new_page()
    sign_in(page, served.url, "editor", "eddie")
    wait_for(lambda: sessions_of(served, "eddie"), what="the editor's session")
    settled(page)
    page.keyboard.press("Control+p")
    settled(page)  # The palette is open: what is typed next is its search.
    page.keyboard.type("Sign out")
    settled(page)  # Searched, its best hit highlighted: Enter runs that.
    with page.expect_navigation(url=f"{served.url}/signout", timeout=30_000):
        page.keyboard.press("Enter")
    # The server's sign-out page: the cookie is cleared only by its answer to this form.
    assert "Signed in as eddie (editor)." in page.inner_text("body")
    with page.expect_navigation():
        page.click("button[type=submit]")
    page.wait_for_selector("#password", timeout=30_000)
    assert not signed_in_cookie(context)
    wait_for(lambda: not sessions_of(served, "eddie"), what="the editor's session to end")


# -- a sign-in that runs out ----------------------------------------------------------------------


def test_an_open_console_whose_sign_in_runs_out_is_closed_as_expired(tmp_path: Path) -> None:
    still_open, reason, _max_age = run_async(open_console_then_run_out(tmp_path))
    assert still_open
    assert reason == "session expired"


@contextmanager
def serving(server: HelpdeskServer) -> Iterator[int]:
    """The server on a loop of its own thread (Playwright's sync API holds this one's), for as
    long as the test drives a browser at it; yields its port."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="serve", daemon=True)
    thread.start()
    try:
        yield asyncio.run_coroutine_threadsafe(server.start(), loop).result(60)
    finally:
        try:
            asyncio.run_coroutine_threadsafe(server.shutdown(), loop).result(60)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(30)
            loop.close()


def test_the_page_says_the_session_expired_when_the_sign_in_runs_out(
    context: BrowserContext, tmp_path: Path
) -> None:
    clock = Clock()
    server, accounts = here(tmp_path, clock)
    try:
        with serving(server) as port:
            page = context.new_page()
            sign_in(page, f"http://127.0.0.1:{port}", "agent", "ana")
            clock.now += HOURS * 3600  # The sign-in's end: the next check closes the console.
            page.wait_for_selector("body.-closed", state="attached", timeout=30_000)
            why = page.locator(".closed-dialog .why")
            why.wait_for(state="visible", timeout=10_000)
            assert why.inner_text() == EXPIRED_WORDS
            assert page.locator(".closed-dialog button[type=submit]").inner_text() == "Sign out"
    finally:
        accounts.close()
