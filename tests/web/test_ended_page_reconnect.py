"""The page that says a session ended, served by a stand-in for the server (the real page and
its scripts, a websocket the test closes with the server's reasons), so that it can go down
and come back in a moment, and a session can fail to start without breaking an install:

- after a restart's SIGTERM, "Start again" has the keyboard: one Enter while the server was
  still down went to the browser's "cannot connect" page. The page now stays, says the help desk
  is restarting and that it is connecting, and goes once the server answers;
- a session whose process failed to start said "This session has ended. Everything you sent is
  saved.", though nothing had started and nothing typed was stored."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from typing import Any

import pytest
from aiohttp import WSCloseCode, web
from playwright.sync_api import Browser, Page

from chatbot.web.pages import app_page
from chatbot.web.server import ASSETS, TEXTUAL_SERVE_STATIC
from tests.web.conftest import VIEWPORT
from tests.web.harness import wait_for


class StandIn:
    """An HTTP server on a loop of its own: the app page with its assets, a websocket that sends
    `drawn` bytes, if any, then closes with `reason`, and `/healthz`."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.runner: web.AppRunner | None = None
        self.port = 0
        self.reason = b""
        self.drawn = b""
        self.close_now = asyncio.Event()

    def call(self, coroutine: Coroutine[Any, Any, None]) -> None:
        asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(30)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _page(self, request: web.Request) -> web.Response:
        page = app_page(area=None, path="/", websocket_url=f"ws://127.0.0.1:{self.port}/ws")
        return web.Response(text=page, content_type="text/html")

    async def _health(self, _request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def _session(self, request: web.Request) -> web.WebSocketResponse:
        websocket = web.WebSocketResponse()
        await websocket.prepare(request)
        if self.drawn:
            await websocket.send_bytes(self.drawn)
        await self.close_now.wait()
        await websocket.close(code=WSCloseCode.GOING_AWAY, message=self.reason)
        return websocket

    async def _start(self) -> None:
        app = web.Application()
        app.add_routes(
            [
                web.get("/", self._page),
                web.get("/healthz", self._health),
                web.get("/ws", self._session),
                web.static("/static", TEXTUAL_SERVE_STATIC),
                web.static("/assets", ASSETS),
            ]
        )
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", self.port)
        await site.start()
        self.port = self.runner.addresses[0][1]

    async def _stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None

    def start(self) -> None:
        """Listen (on the same port again, once it has)."""
        self.call(self._start())

    def stop(self) -> None:
        self.call(self._stop())

    def end_sessions(self, reason: bytes) -> None:
        self.reason = reason
        self.loop.call_soon_threadsafe(self.close_now.set)

    def close(self) -> None:
        self.end_sessions(b"")  # Their handlers would hold the server's cleanup for a minute.
        self.stop()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    server = StandIn()
    server.start()
    yield server
    server.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=VIEWPORT)
    yield context.new_page()
    context.close()


def test_start_again_waits_for_a_server_that_is_still_down(stand_in: StandIn, page: Page) -> None:
    stand_in.drawn = b"\x1b[2JThe app drew its first screen here."
    page.goto(stand_in.url + "/")
    page.wait_for_selector("body.-first-byte", state="attached", timeout=30_000)
    stand_in.end_sessions(b"helpdesk is shutting down")  # As serve on SIGTERM, then it is gone.
    page.wait_for_selector("body.-closed", state="attached", timeout=30_000)
    stand_in.stop()
    start_again = page.locator(".closed-dialog a")
    wait_for(lambda: page.evaluate("document.activeElement.matches('.closed-dialog a')"),
             what="the keyboard on Start again", timeout=10)  # fmt: skip

    page.keyboard.press("Enter")
    # It asked the server, which did not answer: the page stays, saying so.
    wait_for(lambda: start_again.inner_text() == "help desk: connecting…",
             what="the page to say it is connecting", timeout=10)  # fmt: skip
    assert page.url == stand_in.url + "/" and "-closed" in page.evaluate("document.body.className")
    why = page.locator(".closed-dialog .why")
    assert why.inner_text() == (
        "The help desk is restarting: this page starts again by itself once it is back."
    )
    assert page.locator(".closed-dialog .saved").is_visible()  # The app ran: it holds.

    stand_in.drawn = b""
    stand_in.loop.call_soon_threadsafe(stand_in.close_now.clear)  # New sessions stay open.
    stand_in.start()  # Back, on the same address: the page goes there by itself.
    page.wait_for_selector("body:not(.-closed) .intro-dialog", state="visible", timeout=30_000)


def test_a_session_that_failed_to_start_does_not_say_what_was_sent_is_saved(
    stand_in: StandIn, page: Page
) -> None:
    page.goto(stand_in.url + "/")
    page.wait_for_selector("body.-loaded", state="attached", timeout=30_000)
    stand_in.end_sessions(b"failed to start")
    page.wait_for_selector("body.-closed", state="attached", timeout=30_000)
    said = page.locator(".closed-dialog").inner_text()
    assert "The help desk cannot open now" in said, said
    assert "saved" not in said and "This session has ended" not in said, said
    assert page.locator(".closed-dialog a").inner_text() == "Try again"
    assert not page.locator(".intro-dialog").is_visible()  # No "connecting…" left beside it.
    with page.expect_navigation():  # The server answers: trying again goes.
        page.keyboard.press("Enter")
