"""Signing out behind https left the sign-in cookie in the browser.

With `--public-url https://…` sign-in sets `__Host-helpdesk-session=…; Secure`, but sign-out's
deletion was `__Host-helpdesk-session=""; …; Max-Age=0; Path=/` without `Secure`, and a browser
ignores any `Set-Cookie` for a `__Host-` cookie without it: the cookie stayed (the server refused
it still, unless writing its revocation had failed). Every cookie the server deletes is now
deleted with the attributes it was set with. Chromium keeps `Secure` cookies from a loopback
address, so the server here speaks plain HTTP on 127.0.0.1 as it would behind a TLS proxy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext

from chatbot.web.server import ACCOUNT_COOKIE
from tests.web.conftest import PASSWORD, make_site
from tests.web.harness import Served, start_server

SECURE_COOKIE = f"__Host-{ACCOUNT_COOKIE}"


@pytest.fixture
def behind_https(tmp_path: Path) -> Iterator[Served]:
    home = tmp_path / "site"
    db, kb = make_site(home)
    extra = ["--bots", "0", "--public-url", "https://help.example.test"]
    server = start_server(home, db=db, kb=kb, extra=extra)
    yield server
    server.stop()


def sign_in_cookies(context: BrowserContext) -> list[str]:
    return [cookie["name"] for cookie in context.cookies() if ACCOUNT_COOKIE in cookie["name"]]


def test_signing_out_behind_https_removes_the_secure_cookie_from_the_browser(
    context: BrowserContext, behind_https: Served
) -> None:
    served = behind_https
    page = context.new_page()
    page.goto(f"{served.url}/agent")
    page.fill("#name", "ana")
    page.fill("#password", PASSWORD)
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert sign_in_cookies(context) == [SECURE_COOKIE]
    [kept] = [cookie for cookie in context.cookies() if cookie["name"] == SECURE_COOKIE]
    assert kept["secure"] and kept["httpOnly"] and kept["sameSite"] == "Strict"

    page.goto(f"{served.url}/signout")
    deletions: list[str] = []
    page.on(
        "response",
        lambda response: deletions.extend(
            value
            for header in response.headers_array()
            if header["name"].lower() == "set-cookie"
            for value in header["value"].splitlines()
        ),
    )
    with page.expect_navigation(url=f"{served.url}/agent"):
        page.click("button[type=submit]")
    assert sign_in_cookies(context) == []
    assert page.locator("#password").count() == 1  # The sign-in form.
    # Deleted with the attributes it was set with.
    [deletion] = [value for value in deletions if value.startswith(f"{SECURE_COOKIE}=")]
    attributes = {part.strip().split("=")[0].lower() for part in deletion.split(";")[1:]}
    assert {"secure", "httponly", "path", "samesite", "max-age"} <= attributes, deletion
