"""Typing always reaches the reply box of the conversation an agent has open, theirs or not yet.

A tester found every key typed on an unclaimed conversation ("hello dog owner" on #7) dropped
without a word: the box was disabled until the claim. Then, with the database file held by
another process (`BEGIN EXCLUSIVE` for 20 s), Ctrl+L said nothing while it waited, its failure
line was taken away by the keys typed meanwhile, and those keys ("LOCKTEST reply during lock",
Enter) were dropped as they reached the still disabled box.

Now what is typed stays in the box; an Enter on a conversation that is not the agent's sends
nothing and says why; a move that waits on the desk says so after a moment; its failure line
stays while the agent types. The desk is held by a store whose claim waits on the test (as a
locked database does): keys go in through the driver, as a terminal sends them, since Pilot's
`press` waits for a view that is, here, waiting on the desk.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.models import Author
from chatbot.desk.service import DeskService
from chatbot.store.interface import StoreError
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.agent_console import AgentConsole
from chatbot.tui.widgets.conversation_view import ConversationView
from tests.tui.conftest import MakeApp
from tests.tui.driver_helpers import keys, until
from tests.tui.helpers import flat, screen_text, type_text, wait_until

WAITING = "Waiting for the desk's database… What you type stays in the box."
NOT_DONE = "Not done: the desk's database cannot be reached. Try again in a moment."
LOCKED = "/srv/helpdesk.sqlite3: database is busy: database is locked"
REPLY = "LOCKTEST reply during lock"


class HeldClaims:
    """Stands in for a desk service's store: a claim waits (on the desk's thread, as on a locked
    database file) until `let_go`, then goes through, or fails as SQLite's busy timeout does."""

    def __init__(self, service: DeskService) -> None:
        self._real = service.store
        self.held = threading.Event()
        """Set once a claim waits here."""
        self._gate = threading.Event()
        self._fail = False
        service.store = self

    @classmethod
    def of(cls, desk: AsyncDesk) -> HeldClaims:
        return cls(desk._service)

    def let_go(self, *, fail: bool = False) -> None:
        self._fail = fail
        self._gate.set()

    def claim(self, *args: Any, **kwargs: Any) -> Any:
        self.held.set()
        self._gate.wait(timeout=60)
        if self._fail:
            raise StoreError(LOCKED)
        return self._real.claim(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@contextmanager
def held_claims(app: HelpDeskApp) -> Iterator[HeldClaims]:
    """The app's claims held in the block; let go as it ends, whatever happened in it (the app's
    desk thread, and so its closing, would wait on them)."""
    claims = HeldClaims.of(app.services.desk)
    try:
        yield claims
    finally:
        claims.let_go()


def waiting(desk: DeskService, question: str = "My dog chewed the saddle. Who pays?") -> int:
    """A customer in another process who asked for a person."""
    conversation = desk.start_conversation().id
    desk.talk_to_person(conversation)
    desk.ask(conversation, question)
    return conversation


def hint(app: HelpDeskApp, view: ConversationView) -> str:
    """The line above the reply box."""
    return flat(screen_text(app, view.query_one("#reply-hint")))


def agent_replies(desk: DeskService, conversation: int) -> list[str]:
    return [m.text for m in desk.messages(conversation) if m.author is Author.AGENT]


async def test_keys_typed_on_an_unclaimed_conversation_wait_in_the_box_until_it_is_claimed(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = waiting(other)
    app = make_app("agent", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: view.check_action("claim", ()) is True)
        assert view.transcript.has_focus
        await type_text(pilot, "hello dog owner")
        await wait_until(pilot, lambda: view.reply_input.value == "hello dog owner")
        assert view.reply_input.has_focus
        await pilot.press("enter")
        said = "Not sent. Claim this conversation (Ctrl+L) to reply."
        await wait_until(pilot, lambda: hint(app, view) == said)
        assert view.reply_input.value == "hello dog owner"  # Nothing typed is lost.
        assert agent_replies(other, conversation) == []
        assert other.conversation(conversation).agent is None

        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: view.is_mine)
        assert view.reply_input.value == "hello dog owner"
        await pilot.press("enter")
        await wait_until(pilot, lambda: agent_replies(other, conversation) == ["hello dog owner"])
        assert view.reply_input.value == ""


async def test_a_reply_typed_on_a_colleagues_claim_is_kept_and_its_enter_says_whose_it_is(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = waiting(other)
    other.claim(conversation, agent="ben")
    app = make_app("agent", bot=False)
    async with app.run_test(size=(100, 30)) as pilot:
        console = app.screen.query_one(AgentConsole)
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: view.conversation is not None)
        await type_text(pilot, "Ben, the saddle is covered")
        await wait_until(pilot, lambda: view.reply_input.value == "Ben, the saddle is covered")
        await pilot.press("enter")
        said = "Not sent. ben owns this conversation: only they can reply."
        await wait_until(pilot, lambda: hint(app, view) == said)
        assert agent_replies(other, conversation) == []
        # Kept like any draft: back to the queue and in again, it is there.
        await pilot.press("escape")
        await wait_until(pilot, lambda: console.open_view is None)
        again = await app.open_conversation(conversation)
        assert again.reply_input.value == "Ben, the saddle is covered"
        assert agent_replies(other, conversation) == []


async def test_a_claim_held_by_the_database_says_so_and_the_reply_typed_meanwhile_goes(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = waiting(other)
    app = make_app("agent", bot=False)
    async with app.run_test(size=(80, 24)):
        view = await app.open_conversation(conversation)
        await until(lambda: view.check_action("claim", ()) is True)
        with held_claims(app) as claims:
            keys(app, "ctrl+l", REPLY, "enter")
            await until(lambda: claims.held.is_set())
            await until(lambda: hint(app, view) == WAITING)
            claims.let_go()  # The lock ends: the claim lands, then the Enter typed after it.
            await until(lambda: agent_replies(other, conversation) == [REPLY])
        assert other.conversation(conversation).agent == "ana"
        await until(lambda: hint(app, view) != WAITING and view.reply_input.value == "")


async def test_a_claim_that_fails_on_the_database_says_so_and_keeps_what_was_typed_meanwhile(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = waiting(other)
    app = make_app("agent", bot=False)
    async with app.run_test(size=(100, 30)):
        view = await app.open_conversation(conversation)
        await until(lambda: view.check_action("claim", ()) is True)
        with held_claims(app) as claims:
            keys(app, "ctrl+l", REPLY, "enter")
            await until(lambda: claims.held.is_set())
            await until(lambda: hint(app, view) == WAITING)
            guard = view.reply_input.guard
            before = guard.revision
            claims.let_go(fail=True)  # SQLite's busy timeout ran out.
            await until(lambda: guard.revision > before)  # The Enter was read, its words kept.
        # The keys typed while it waited came after the failure: its line stays, the words in
        # the box, and their Enter sent nothing.
        assert view.reply_input.value == REPLY
        assert hint(app, view) == NOT_DONE
        assert agent_replies(other, conversation) == []
        assert other.conversation(conversation).agent is None
        assert view.reply_input.has_focus

        # Once the database answers, the claim and then the words go.
        keys(app, "ctrl+l")
        await until(lambda: view.is_mine)
        keys(app, "enter")
        await until(lambda: agent_replies(other, conversation) == [REPLY])
