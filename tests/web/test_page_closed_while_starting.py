"""A chat or console whose page closes as it starts ends without a word in serve's log.

Opening a customer's chat and closing its websocket within a second printed a traceback into
serve's log (`NoMatches: '#chat-status'`, `'HeaderTitle'`), and anyone could open and close
chats to fill it. Here a real `helpdesk serve` has its chat (and an agent's console) opened and
closed again and again, each time after a little more of the first screen was drawn; then every
session has ended, and serve's log has nothing but their starts and ends.
"""

from __future__ import annotations

import aiohttp
import httpx

from chatbot.web.server import CUSTOMER_COOKIE
from tests.web.conftest import PASSWORD
from tests.web.harness import ENDED, STARTED, Served, run_async, wait_for
from tests.web.log_helpers import BOT_LINE

DRAWN_BYTES = (0, 1, 100, 400, 1000, 2000, 3000, 4000)
"""How much of the first screen the page has been sent when it closes: from nothing (closed at
once) to most of a chat's first screen (about 4 KB)."""
ROUNDS = 2


async def open_and_close(served: Served, area: str) -> None:
    """Opens `area`'s websocket and closes it once `DRAWN_BYTES` of output came, for each in
    turn, `ROUNDS` times; a customer's chat gets a new conversation (cookie) each time."""
    # The agent's sign-in cookie is kept; each customer's is the test's own.
    jar = aiohttp.CookieJar(unsafe=True) if area == "agent" else aiohttp.DummyCookieJar()
    async with aiohttp.ClientSession(cookie_jar=jar) as client:
        origin = {"Origin": served.url}
        if area == "agent":
            form = {"name": "ana", "password": PASSWORD, "next": "/agent"}
            async with client.post(
                served.url + "/signin", data=form, headers=origin, allow_redirects=False
            ) as response:
                assert response.status == 303, await response.text()
        for drawn in DRAWN_BYTES * ROUNDS:
            headers = dict(origin)
            if area == "chat":
                cookie = httpx.get(served.url + "/").cookies[CUSTOMER_COOKIE]
                headers["Cookie"] = f"{CUSTOMER_COOKIE}={cookie}"
            url = served.url.replace("http://", "ws://") + f"/ws/{area}?width=80&height=24"
            async with client.ws_connect(url, headers=headers) as websocket:
                received = 0
                while received < drawn:
                    message = await websocket.receive(timeout=60)
                    assert message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY), (
                        f"the session ended by itself: {message}"
                    )
                    if message.type == aiohttp.WSMsgType.BINARY:
                        received += len(message.data)


def said_while(served: Served, area: str) -> list[str]:
    """Serve's log lines from opening and closing `area`'s page again and again until each of
    those sessions has ended (its process gone, all it wrote to stderr logged before)."""
    start = len(served.output)
    run_async(open_and_close(served, area))

    def all_ended() -> bool:
        lines = served.output[start:]
        started = {m.group(1) for line in lines if (m := STARTED.search(line))}
        ended = {m.group(1) for line in lines if (m := ENDED.search(line))}
        return bool(started) and started <= ended

    wait_for(all_ended, timeout=60, what="every session to end")
    return served.output[start:]


def anything_else(said: list[str]) -> list[str]:
    """The lines that are no session's start or end (nor the bot workers' own, which say when
    they started)."""
    sessions = [line for line in said if STARTED.search(line) or ENDED.search(line)]
    return [line for line in said if line not in sessions and not line.startswith(BOT_LINE)]


def test_a_customers_chat_closed_as_it_starts(served: Served) -> None:
    said = said_while(served, "chat")
    conversations = {m.group(4) for line in said if (m := STARTED.search(line))}
    assert len(conversations) > len(DRAWN_BYTES)  # A chat of its own each time, mostly.
    assert anything_else(said) == []


def test_an_agents_console_closed_as_it_starts(served: Served) -> None:
    said = said_while(served, "agent")
    assert anything_else(said) == []
