"""Driving `helpdesk serve` from a browser page: opening a chat, signing in, claiming from
the queue, and what the page and the server show of it."""

from __future__ import annotations

from playwright.sync_api import BrowserContext, Page

from chatbot.web.server import ACCOUNT_COOKIE
from tests.web.harness import Served, settled


def conversations_opened(served: Served) -> list[int]:
    """The conversation of every customer session running now."""
    return [s.conversation for s in served.sessions() if s.conversation is not None]


def open_chat(context: BrowserContext, served: Served) -> Page:
    """A customer's page, once the chat has drawn (so that what is typed next reaches it)."""
    page = context.new_page()
    page.goto(served.url + "/")
    page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
    settled(page)
    return page


def sign_in(page: Page, served: Served, area: str, name: str, password: str) -> int:
    """Fill the sign-in form shown at /agent or /editor; returns the response status."""
    page.goto(f"{served.url}/{area}")
    page.fill("#name", name)
    page.fill("#password", password)
    with page.expect_navigation() as navigation:
        page.click("button[type=submit]")
    response = navigation.value
    assert response is not None
    return response.status


def claim_first_row(page: Page) -> None:
    """Click the first conversation in the queue (below the title, the queue's heading and the
    table's header), press Enter to open it and Ctrl+L to claim it."""
    box = page.locator("#terminal").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 120, box["y"] + ROW_PX * 3.5)
    page.keyboard.press("Enter")
    page.keyboard.press("Control+l")


ROW_PX = 21
"""One terminal row at the pages' 16px font."""


def signed_in_cookie(context: BrowserContext) -> bool:
    return any(cookie["name"] == ACCOUNT_COOKIE for cookie in context.cookies())


def on_the_sign_in_form(page: Page) -> bool:
    return page.locator("#password").count() == 1
