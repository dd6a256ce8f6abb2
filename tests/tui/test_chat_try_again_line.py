"""A send that failed (the database locked past its busy timeout, or a server gone silent) says
"cannot be reached just now … try again" under the question kept in the box. That line stayed
until the customer sent again: after the lock was gone or the server answered again, and even
when the message had been stored after all (only the answer to its commit was lost), which a
second Enter then sent twice. Now the line says the desk is back, or goes with the message shown
as sent, as soon as it is so."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from textual.widgets import Input, Static

from chatbot.config import load_settings
from chatbot.desk.service import DeskService
from chatbot.store.postgres import NOTIFY_AND_COMMIT, PostgresStore
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.backends import postgres_server
from tests.freezing_relay import FreezingRelay
from tests.tui.conftest import Q1, Q2, Q3, SIZE, MakeApp
from tests.tui.helpers import ask, flat, screen_text, type_text, wait_until

TROUBLE = "The help desk cannot be reached just now. What you typed stays here"
BACK = "The help desk can be reached again, but what you typed was not sent"
DEADLINE_S = 0.5
GIVE_UP_S = 30.0
"""Far past any deadline or busy timeout (SQLite's is 5 s): only a line that never changes
fails here."""


def line(app: HelpDeskApp) -> str:
    """What the chat's error line says, or "" when it is hidden."""
    error = app.screen.query_one("#chat-error", Static)
    return flat(screen_text(app, error)) if error.display else ""


async def test_a_send_failed_by_a_lock_says_the_desk_is_back_once_writes_land(
    make_app: MakeApp, other: DeskService, db_path: Path
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1, wait=False)
        await wait_until(pilot, lambda: bool(other.messages(1)))
        panel = app.screen.query_one(ChatPanel)
        # Another process holds the database's write lock past the busy timeout.
        locker = sqlite3.connect(db_path, isolation_level=None)
        try:
            locker.execute("BEGIN IMMEDIATE")
            await type_text(pilot, Q2)
            await pilot.press("enter")
            await wait_until(pilot, lambda: TROUBLE in line(app), timeout=GIVE_UP_S)
        finally:
            locker.execute("ROLLBACK")
            locker.close()
        # Writes land again: another customer's question is stored.
        other.ask(None, Q3)
        await wait_until(pilot, lambda: BACK in line(app), timeout=GIVE_UP_S)
        assert panel.question.value == Q2  # Still unsent, and said to be.
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(other.messages(1)) == 2)
        await wait_until(pilot, lambda: line(app) == "")
        assert [m.text for m in other.messages(1)] == [Q1, Q2]


class CommitFreezingRelay(FreezingRelay):
    """Goes silent right after passing on a write's commit: the server commits, and its answer
    never reaches the client, whose call fails at its deadline."""

    def __init__(self, target: tuple[str, int]) -> None:
        super().__init__(target)
        self.freeze_at_commit = False

    def passed(self, data: bytes, *, to_server: bool) -> None:
        if to_server and self.freeze_at_commit and NOTIFY_AND_COMMIT in data:
            self.freeze_at_commit = False
            self.freeze()


@pytest.fixture
def relayed() -> Iterator[tuple[str, str, CommitFreezingRelay]]:
    """A database of its own, reached through a relay that can go silent (its URL), and
    directly (the other URL, for the test's own reads)."""
    server = postgres_server()
    url = server.create()
    parts = urlsplit(url)
    relay = CommitFreezingRelay((parts.hostname or "127.0.0.1", parts.port or 5432))
    netloc = parts.netloc.rsplit("@", 1)[0] + f"@127.0.0.1:{relay.port}"
    try:
        yield urlunsplit(parts._replace(netloc=netloc)), url, relay
    finally:
        relay.close()
        server.drop(url)


def stored(url: str) -> list[str]:
    """Every customer message in the database at `url`."""
    store = PostgresStore.open(url)
    try:
        return [
            entry.text
            for conversation in store.conversations()
            for entry in store.entries(conversation.id)
            if hasattr(entry, "text")
        ]
    finally:
        store.close()


async def test_a_send_failed_by_a_silent_server_says_the_desk_is_back_once_it_answers(
    relayed: tuple[str, str, CommitFreezingRelay],
) -> None:
    """No change notice comes when a silent server answers again: the chat reads again itself."""
    url, direct, relay = relayed
    settings = load_settings(store={"db": url, "timeout_s": DEADLINE_S})
    app = create_app(settings, mode="chat", timings=False, bot=False)
    async with app.run_test(size=SIZE) as pilot:
        field = app.screen.query_one("#question", Input)
        relay.freeze()
        field.focus()
        field.value = Q1
        await pilot.press("enter")
        await wait_until(pilot, lambda: TROUBLE in line(app), timeout=GIVE_UP_S)
        # An outage, not a blip: the chat's own reads fail too before the server answers again.
        panel = app.screen.query_one(ChatPanel)
        await wait_until(pilot, lambda: panel._reads_failing, timeout=GIVE_UP_S)
        relay.thaw()
        await wait_until(pilot, lambda: BACK in line(app), timeout=GIVE_UP_S)
        assert field.value == Q1 and stored(direct) == []
        await pilot.press("enter")
        await wait_until(pilot, lambda: line(app) == "", timeout=GIVE_UP_S)
    assert stored(direct) == [Q1]


async def test_a_message_stored_after_all_is_shown_sent_and_not_sent_twice(
    relayed: tuple[str, str, CommitFreezingRelay],
) -> None:
    url, direct, relay = relayed
    settings = load_settings(store={"db": url, "timeout_s": DEADLINE_S})
    app = create_app(settings, mode="chat", timings=False, bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.screen.query_one(ChatPanel)
        await ask(pilot, Q1, wait=False)
        relay.freeze_at_commit = True
        await type_text(pilot, Q2)
        await pilot.press("enter")
        # The commit reached the server; its answer did not come back.
        await wait_until(pilot, lambda: TROUBLE in line(app), timeout=GIVE_UP_S)
        assert stored(direct) == [Q1, Q2]
        relay.thaw()
        await wait_until(pilot, lambda: line(app) == "", timeout=GIVE_UP_S)
        assert panel.question.value == ""
        await wait_until(pilot, lambda: Q2 in flat(screen_text(app)))
        await pilot.press("enter")  # Nothing left to send.
    assert stored(direct) == [Q1, Q2]
