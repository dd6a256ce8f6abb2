"""A websocket message `helpdesk serve` cannot use is dropped (or mended), and the session goes on.

A lone surrogate in a keystroke message (`["stdin","\\ud800abc"]`, JSON that parses) could not
be encoded, and 5,000 nested `[` ran the parser out of recursion: each ended the sender's
session with a traceback in serve's log. Sent here from an aiohttp client to a real
`helpdesk serve` on 127.0.0.1, the customer then typing a question that must reach the store.
"""

from __future__ import annotations

import asyncio
import time

import aiohttp
import httpx

from chatbot.web.server import CUSTOMER_COOKIE
from tests.web.harness import Served, Session, run_async, transcript
from tests.web.log_helpers import logged_since

WAIT_S = 60.0
SCREEN_BYTES = 4000
"""Output enough for the chat's first screen."""


async def typed_after(served: Served, hostile: str, typed: str) -> list[str]:
    """Opens a customer's chat, sends `hostile` once the app has drawn, then types `typed` and
    Enter. Returns the customer's messages stored, once one arrives. Fails if the session ends,
    or if serve logged a traceback from the chat's start until then."""
    cookie = httpx.get(served.url + "/").cookies[CUSTOMER_COOKIE]
    before = {session.number for session in served.sessions()}
    start = len(served.output)
    async with aiohttp.ClientSession() as client:
        async with client.ws_connect(
            served.url.replace("http://", "ws://") + "/ws/chat?width=80&height=24",
            headers={"Origin": served.url, "Cookie": f"{CUSTOMER_COOKIE}={cookie}"},
        ) as websocket:
            await drawn(websocket)
            session = await started(served, before)
            assert session.conversation is not None
            await websocket.send_json(["focus"])  # Keys reach an app whose page has the focus.
            await websocket.send_str(hostile)
            await websocket.send_json(["stdin", typed + "\r"])
            deadline = time.monotonic() + WAIT_S
            while time.monotonic() < deadline:
                sent = [
                    text
                    for author, text, _ in transcript(served.db, session.conversation)
                    if author == "customer"
                ]
                if sent:
                    said = "".join(logged_since(served, start))
                    assert "Traceback" not in said, said
                    assert f"session {session.number} ended" not in said, said
                    return sent
                try:
                    message = await websocket.receive(timeout=0.2)
                except TimeoutError:
                    continue
                assert message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY), (
                    f"the session ended: {message}"
                )
            raise AssertionError("what the customer typed never reached the store")


async def drawn(websocket: aiohttp.ClientWebSocketResponse) -> None:
    """Waits for the app to draw its screen (a few KB of output), ready for keys."""
    received = 0
    while received < SCREEN_BYTES:
        message = await websocket.receive(timeout=WAIT_S)
        assert message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY), message
        if message.type == aiohttp.WSMsgType.BINARY:
            received += len(message.data)


async def started(served: Served, before: set[int]) -> Session:
    """The session serve says it started, not one of `before`."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        for session in served.sessions():
            if session.number not in before and session.conversation is not None:
                return session
        await asyncio.sleep(0.05)
    raise AssertionError("serve never said the session started")


def test_a_lone_surrogate_is_mended_and_the_session_goes_on(served: Served) -> None:
    sent = run_async(typed_after(served, '["stdin","\\ud800abc"]', " my printer jams"))
    assert sent == ["\ufffdabc my printer jams"], sent


def test_a_message_nested_5000_deep_is_dropped(served: Served) -> None:
    sent = run_async(typed_after(served, "[" * 5000, "my printer jams"))
    assert sent == ["my printer jams"], sent


def test_the_page_keys_still_reach_the_app(served: Served) -> None:
    # The well-formed messages the page sends, beside the dropped ones.
    sent = run_async(typed_after(served, '["resize",{"width":100,"height":30}]', "hi"))
    assert sent == ["hi"], sent
