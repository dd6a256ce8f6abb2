"""Keys a browser sends one websocket message each reach the conversation Enter opens, in order.

A tester in a browser pressed Enter on a waiting row, then Ctrl+L: 3 tries in 5 opened the
conversation without claiming it (its header still "waiting"), where `tmux send-keys Enter C-l`
claimed every time, and a reply typed next lost its first letters. xterm.js sends each key as
its own message: Ctrl+L came once the conversation was on screen, before it had been read, and
was refused there. Here Enter goes once the queue shows the row; Ctrl+L, each letter of a reply
and its Enter go as soon as the conversation is drawn, most often before it has been read (the
old code failed within the first five tries in each of three runs). Every console is a new
session, so each conversation is opened in a view made for it. The server is `helpdesk serve`;
the console is the real app, in a process of its own."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path

import aiohttp

from chatbot.assembly import open_service
from chatbot.config import load_settings
from tests.web.harness import Served, agent_replies, conversation_state, run_async
from tests.web.server_helpers import agent_console

TRIES = 10
QUESTION = "Helmet {n}?"
"""Short: the queue shortens a question to fit 80 columns beside a claim's status."""
REPLY = "Hi, Ben here"
AGENT = "Ana P."
"""The display name of the account `ana`, which claims and replies go by."""
DRAWN = "Passages the bot considered"
"""A title of the conversation view, drawn as it is shown (before it has read anything)."""
CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]")
"""Terminal control sequences in the app's output, between the words it draws."""


def waiting(db: Path, question: str) -> int:
    """A customer who asked for a person, then asked `question`."""
    desk = open_service(load_settings(store={"db": db}))
    try:
        conversation = desk.start_conversation().id
        desk.talk_to_person(conversation)
        desk.ask(conversation, question)
        return conversation
    finally:
        desk.close()


class Screen:
    """What the console has drawn so far, as text without its control sequences."""

    def __init__(self, websocket: aiohttp.ClientWebSocketResponse) -> None:
        self._websocket = websocket
        self._drawn = ""

    async def shows(self, text: str, timeout: float = 30.0) -> None:
        """Read the console's output until it has drawn `text` since the last call."""
        try:
            async with asyncio.timeout(timeout):
                while text not in CONTROL.sub("", self._drawn):
                    message = await self._websocket.receive()
                    assert message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT)
                    if message.type == aiohttp.WSMsgType.BINARY:
                        self._drawn += message.data.decode("utf-8", "replace")
        except TimeoutError:
            drawn = CONTROL.sub("", self._drawn)[-2000:]
            raise AssertionError(f"{text!r} not drawn within {timeout:.0f}s: {drawn!r}") from None
        self._drawn = ""


async def eventually(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    try:
        async with asyncio.timeout(timeout):
            while not condition():
                await asyncio.sleep(0.05)
    except TimeoutError:
        raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}") from None


async def claim_and_reply(served: Served, conversation: int, question: str) -> None:
    """In a console of its own: Enter on the row, then Ctrl+L and the reply, one key a message."""
    async with agent_console(served.port) as (_, websocket):
        screen = Screen(websocket)
        await websocket.send_json(["focus"])  # As the page's terminal says once it has the keys.
        await screen.shows(question)
        await websocket.send_json(["stdin", "\r"])
        await screen.shows(DRAWN)
        for key in ["\x0c", *REPLY, "\r"]:
            await websocket.send_json(["stdin", key])
        await eventually(
            lambda: agent_replies(served.db, conversation) == [(AGENT, REPLY)],
            f"the reply in conversation {conversation}, claimed",
        )
        assert conversation_state(served.db, conversation) == ("claimed", AGENT)


def test_enter_then_ctrl_l_and_a_reply_each_in_a_message_of_its_own(served: Served) -> None:
    for n in range(TRIES):
        question = QUESTION.format(n=n)
        # The only one waiting: the row the queue's cursor starts on (the claimed ones after it).
        conversation = waiting(served.db, question)
        run_async(claim_and_reply(served, conversation, question))
