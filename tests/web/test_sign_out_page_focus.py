"""After "Sign out" in the command palette, the server's /signout page opened with nothing
focused: Enter did nothing, and only Tab then Enter signed out. Its Sign out button, the page's
only one, now has the keyboard as the page opens."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import BrowserContext

from tests.web.harness import Served
from tests.web.helpers import on_the_sign_in_form, signed_in_cookie
from tests.web.server_helpers import sign_in

COOKIE = "helpdesk-session"


def buttons(page: str) -> list[str]:
    return re.findall(r"<button[^>]*>[^<]*</button>", page)


def test_the_sign_out_pages_button_has_the_keyboard(served: Served) -> None:
    cookie = sign_in(served, "ana").cookies[COOKIE]
    with httpx.Client(base_url=served.url, cookies={COOKIE: cookie}) as client:
        page = client.get("/signout").text
    assert buttons(page) == ['<button type="submit" autofocus>Sign out</button>']


def test_enter_on_the_sign_out_page_signs_out(context: BrowserContext, served: Served) -> None:
    cookie = sign_in(served, "ana").cookies[COOKIE]
    assert cookie is not None
    context.add_cookies([{"name": COOKIE, "value": cookie, "url": served.url}])
    page = context.new_page()
    page.goto(f"{served.url}/signout")
    assert "Signed in as ana (agent)." in page.inner_text("body")
    with page.expect_navigation():
        page.keyboard.press("Enter")  # No Tab first.
    page.wait_for_selector("#password", timeout=30_000)
    assert on_the_sign_in_form(page)
    assert not signed_in_cookie(context)
