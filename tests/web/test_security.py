"""What a browser (or anything else) cannot do to `helpdesk serve`: open the agent console or the
editor without signing in, guess passwords quickly, steer a session to somebody else's
conversation, or drive the desk from another site's page."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from aiohttp import ClientSession, WSServerHandshakeError
from playwright._impl._api_structures import SetCookieParam
from playwright.sync_api import Browser, BrowserContext

from chatbot.store.sqlite import SQLiteStore
from chatbot.web.security import CONTENT_SECURITY_POLICY
from tests.web.conftest import PASSWORD, VIEWPORT
from tests.web.harness import Served, run_async, wait_for
from tests.web.helpers import conversations_opened, open_chat, sign_in


def customer_cookie(context: BrowserContext) -> SetCookieParam:
    cookies = [c for c in context.cookies() if c["name"] == "helpdesk-chat"]
    assert len(cookies) == 1
    cookie = cookies[0]
    return {"name": cookie["name"], "value": cookie["value"], "url": "http://127.0.0.1"}


# -- plain HTTP ------------------------------------------------------------------------------------


def test_every_response_carries_the_security_headers(served: Served) -> None:
    with httpx.Client(base_url=served.url) as client:
        for path in ("/", "/agent", "/editor", "/static/js/textual.js", "/assets/web.css",
                     "/no-such-page", "/ws/chat"):  # fmt: skip
            response = client.get(path)
            assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY, path
            assert response.headers["x-content-type-options"] == "nosniff"
            assert response.headers["x-frame-options"] == "DENY"
    assert "script-src 'self';" in CONTENT_SECURITY_POLICY
    assert "unsafe-eval" not in CONTENT_SECURITY_POLICY
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY


def test_the_customer_cookie_is_signed_httponly_samesite(served: Served) -> None:
    response = httpx.get(served.url + "/")
    header = response.headers["set-cookie"]
    assert header.startswith("helpdesk-chat=")
    assert "HttpOnly" in header and "SameSite=Lax" in header and "Max-Age=" in header
    assert "conversation" not in response.text  # No id in the page for a script to change.


def test_a_head_request_starts_no_conversation(served: Served) -> None:
    # Every `curl -I /` (an uptime check) added an empty conversation to the desk's figures.
    with SQLiteStore.open(served.db) as store:
        before = len(store.conversations(limit=1000))
        response = httpx.head(served.url + "/")
        assert response.status_code == 200 and "set-cookie" not in response.headers
        assert len(store.conversations(limit=1000)) == before
        # A page view sets the cookie, and starts none either: the chat's websocket does, back
        # with the cookie (test_admission.py).
        assert "set-cookie" in httpx.get(served.url + "/").headers
        assert len(store.conversations(limit=1000)) == before


def test_a_sign_in_from_another_origin_is_refused(served: Served) -> None:
    form = {"name": "ana", "password": PASSWORD, "next": "/agent"}
    for origin in (None, "http://evil.example", "null", f"http://127.0.0.1:{served.port + 1}"):
        headers = {} if origin is None else {"Origin": origin}
        response = httpx.post(served.url + "/signin", data=form, headers=headers)
        assert response.status_code == 403, origin
        assert "set-cookie" not in response.headers


def test_a_session_cookie_is_strict_and_httponly(served: Served) -> None:
    response = httpx.post(
        served.url + "/signin",
        data={"name": "ana", "password": PASSWORD, "next": "/agent"},
        headers={"Origin": served.url},
    )
    assert response.status_code == 303 and response.headers["location"] == "/agent"
    header = response.headers["set-cookie"]
    assert header.startswith("helpdesk-session=")
    assert "HttpOnly" in header and "SameSite=Strict" in header and "Max-Age=43200" in header


def test_a_websocket_needs_our_origin_and_a_session(served: Served) -> None:
    cookie = httpx.get(served.url + "/").cookies["helpdesk-chat"]
    ws_url = served.url.replace("http://", "ws://") + "/ws/"
    attempts = [
        ("chat", "http://evil.example", {"helpdesk-chat": cookie}),
        ("chat", f"http://localhost.evil.example:{served.port}", {"helpdesk-chat": cookie}),
        # No cookie at all: the page is sent to say cookies are needed (test_admission.py).
        ("chat", served.url, {"helpdesk-chat": cookie + "x"}),
        ("agent", served.url, {"helpdesk-chat": cookie}),  # A customer reaches neither.
        ("editor", served.url, {"helpdesk-chat": cookie}),
    ]

    async def statuses() -> list[int]:
        found = []
        async with ClientSession() as session:
            for area, origin, cookies in attempts:
                headers = {"Origin": origin, "Cookie": _jar(cookies)}
                try:
                    socket = await session.ws_connect(ws_url + area, headers=headers)
                except WSServerHandshakeError as refused:
                    found.append(refused.status)
                else:
                    await socket.close()
                    found.append(101)
        return found

    assert run_async(statuses()) == [403] * len(attempts)
    assert conversations_opened(served) == []  # A refused handshake starts no process.


def _jar(cookies: dict[str, str]) -> str:
    return "; ".join(f"{name}={value}" for name, value in cookies.items())


# -- in the browser --------------------------------------------------------------------------------


def test_agent_and_editor_show_the_sign_in_page(context: BrowserContext, served: Served) -> None:
    page = context.new_page()
    for area, title in (("agent", "agent console"), ("editor", "knowledge-base editor")):
        page.goto(f"{served.url}/{area}")
        assert page.locator("form#signin").is_visible()
        assert page.inner_text("p.lead") == f"Sign in to open the {title}."
        assert page.evaluate("document.activeElement.id") == "name"
    assert served.sessions() == []


def test_a_wrong_password_is_refused(context: BrowserContext, served: Served) -> None:
    page = context.new_page()
    assert sign_in(page, served, "agent", "eddie", "not the password") == 401
    assert page.inner_text("p.error") == "Wrong name or password."
    assert page.locator("form#signin").is_visible()
    # The name came back filled in: the cursor waits in the password, not at the name's end.
    assert page.input_value("#name") == "eddie"
    assert page.evaluate("document.activeElement.id") == "password"
    assert not [c for c in context.cookies() if c["name"] == "helpdesk-session"]


def test_an_agent_cannot_open_the_editor(
    context: BrowserContext, served: Served, artifacts: object
) -> None:
    page = context.new_page()
    assert sign_in(page, served, "agent", "ana", PASSWORD) == 200
    page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
    console = wait_for(lambda: [s for s in served.sessions() if s.area == "agent"], what="it")
    assert console[0].account == "ana"
    response = page.goto(f"{served.url}/editor")
    assert response is not None and response.status == 403
    assert "cannot open the knowledge-base editor" in page.inner_text("p.lead")
    # The page the account can open is offered, not only "Sign out".
    page.click("a.button")
    page.wait_for_url(f"{served.url}/agent")


def test_the_sixth_wrong_password_in_a_minute_is_refused_without_checking(
    context: BrowserContext, fresh_server: Served
) -> None:
    """Five wrong passwords, then the right one: still refused, so it was never checked."""
    page = context.new_page()
    for _ in range(5):
        assert sign_in(page, fresh_server, "agent", "ana", "wrong password") == 401
    assert sign_in(page, fresh_server, "agent", "ana", PASSWORD) == 429
    assert page.inner_text("p.error").startswith("Too many failed sign-ins. Try again in ")
    assert not [c for c in context.cookies() if c["name"] == "helpdesk-session"]
    # Another account from the same address is not: five failures lock ana from this address
    # alone (an address is refused only after 20 failures, whatever the names).
    assert sign_in(page, fresh_server, "editor", "eddie", PASSWORD) == 200
    assert any(c["name"] == "helpdesk-session" for c in context.cookies())


def test_a_copied_customer_cookie_opens_only_its_own_conversation(
    browser: Browser, served: Served
) -> None:
    contexts = [browser.new_context(viewport=VIEWPORT) for _ in range(4)]
    try:
        first, second, copy, forged = contexts
        open_chat(first, served)
        mine = wait_for(lambda: conversations_opened(served), what="the first chat")[0]
        open_chat(second, served)
        theirs = wait_for(
            lambda: [c for c in conversations_opened(served) if c != mine], what="a second chat"
        )[0]
        assert theirs != mine

        # The cookie copied into another browser opens the conversation it names, no other.
        cookie = customer_cookie(first)
        copy.add_cookies([cookie | {"url": served.url}])
        open_chat(copy, served)
        wait_for(lambda: conversations_opened(served).count(mine) == 2, what="the copy's chat")
        assert customer_cookie(copy)["value"] == cookie["value"]

        # Naming the other conversation in the cookie breaks its signature: a new conversation.
        payload, stamp, signature = cookie["value"].split(".")
        other = base64.urlsafe_b64encode(json.dumps({"c": theirs}).encode()).rstrip(b"=")
        forged_value = f"{other.decode()}.{stamp}.{signature}"
        forged.add_cookies([cookie | {"value": forged_value, "url": served.url}])
        open_chat(forged, served)
        fresh = customer_cookie(forged)["value"]
        assert fresh != cookie["value"]
        running: list[int] = wait_for(
            lambda: conversations_opened(served) if len(conversations_opened(served)) == 4 else [],
            what="the forged cookie's chat",
        )
        assert running.count(theirs) == 1 and running.count(mine) == 2
        assert max(running) > max(mine, theirs)
    finally:
        for context in contexts:
            context.close()
    wait_for(lambda: conversations_opened(served) == [], what="the chats to end")


class _EvilPage(BaseHTTPRequestHandler):
    """A page on another origin (same host, other port) that tries to drive the customer chat."""

    target = ""

    def do_GET(self) -> None:  # noqa: N802 (the http.server API)
        body = (
            "<!DOCTYPE html><title>evil</title><script>"
            f"const ws = new WebSocket({json.dumps(self.target)});"
            "ws.onopen = () => { document.title = 'opened'; };"
            "ws.onclose = () => { if (document.title !== 'opened') document.title = 'refused'; };"
            "</script>"
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # Chromium drops the connections it opened ahead of time: not worth a traceback.


@pytest.fixture
def evil_site(served: Served) -> Iterator[str]:
    _EvilPage.target = served.url.replace("http://", "ws://") + "/ws/chat"
    server = _QuietServer(("127.0.0.1", 0), _EvilPage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_a_websocket_from_another_origin_is_refused(
    context: BrowserContext, served: Served, evil_site: str
) -> None:
    """The customer has a chat cookie, and the other page is same-site (127.0.0.1, another port),
    so the browser sends the cookie: only the Origin check stands in the way."""
    httpx_cookie = httpx.get(served.url + "/").cookies["helpdesk-chat"]
    context.add_cookies([{"name": "helpdesk-chat", "value": httpx_cookie, "url": served.url}])
    page = context.new_page()
    page.goto(evil_site)
    wait_for(lambda: page.title() in ("opened", "refused"), what="the websocket to settle")
    assert page.title() == "refused"
    assert conversations_opened(served) == []
    evil_origin = evil_site.rstrip("/")
    # The server's warning is read from its stderr by a thread: it may land after the browser
    # saw the socket close.
    refused = f"websocket from origin '{evil_origin}' refused"
    wait_for(lambda: any(refused in line for line in served.output), what="the server's warning")


def test_signing_out_in_one_tab_ends_the_browsers_open_console(
    context: BrowserContext, served: Served
) -> None:
    """Signed out in a second tab, the first went on claiming and replying as the account."""
    console = context.new_page()
    assert sign_in(console, served, "agent", "ana", PASSWORD) == 200
    console.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
    wait_for(lambda: [s for s in served.sessions() if s.account == "ana"], what="the console")
    other = context.new_page()
    other.goto(f"{served.url}/signout")
    with other.expect_navigation():
        other.click("button[type=submit]")
    console.wait_for_selector("body.-closed", state="attached", timeout=30_000)
    # The page says why (it said only "This session has ended", whatever ended it).
    why = console.locator(".closed-dialog .why")
    why.wait_for(state="visible", timeout=10_000)
    assert why.inner_text() == "You were signed out: sign in again to go on."
    # Done already: no "Sign out" offered beside "Start again" (a tester found it there).
    assert not console.locator(".closed-dialog form.sign-out").is_visible()
    assert console.locator(".closed-dialog a.button").is_visible()
    wait_for(
        lambda: not [s for s in served.sessions() if s.account == "ana"],
        what="the console's process to end",
    )
