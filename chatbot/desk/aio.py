"""The desk service for an event loop, and the change feed that wakes it.

Every service call runs on one thread of its own (the only thread that touches the store's
connection), so a busy database can slow an answer but never freeze a UI or a bot worker's loop.
A second thread waits on the store's change feed (its own connection) and wakes the loop when
anyone, in any process, commits; this process's own writes wake it at once.

One thread means one call at a time: while the database does not answer (a table locked, a
server gone silent), each call waits its whole deadline, and the calls queued behind it waited
for all of those before theirs. An agent's reply queued behind a queue read, a bot's poll and a
presence tick was told nothing for a minute and a half, and then stored late. So the calls that
were waiting while one failed because the database could not be used fail with it, untried: no
call waits longer than the one ahead of it did, nor runs after its caller was told it failed.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar, ParamSpec, TypeVar

from chatbot.desk.models import (
    AskResult,
    Author,
    Changes,
    ChatEvent,
    ChatMessage,
    ClaimResult,
    ContentGap,
    Conversation,
    DecisionResult,
    Entry,
    Feedback,
    FeedbackResult,
    HandoffResult,
    Leased,
    Page,
    PendingQuestion,
    QueueItem,
    SearchHit,
    State,
    StoredDecision,
)
from chatbot.desk.service import DeskService
from chatbot.desk.stats import DeskStats
from chatbot.engine.models import Decision, Reason
from chatbot.errors import HelpdeskError
from chatbot.i18n import Locale
from chatbot.store.interface import ChangeFeed
from chatbot.store.interface import (  # For front ends: they may not import the store.
    ConversationNotFound as ConversationNotFound,
)
from chatbot.store.interface import (
    StoreError as StoreError,
)
from chatbot.store.interface import (
    unreachable as unreachable,
)

if TYPE_CHECKING:
    from chatbot.knowledge_base.models import Passage

P = ParamSpec("P")
T = TypeVar("T")

FEED_WAIT_S = 0.05
"""How long the watcher thread waits on the feed before checking whether it should stop: closing
never waits for it (it ends by itself within this)."""

log = logging.getLogger("helpdesk.desk")


class AsyncDesk:
    """`DeskService` for coroutines: `await desk.ask(...)`. Subscribers hear of every commit."""

    browser_sign_in: ClassVar[str | None] = None
    """The browser sign-in this process's app was opened with, as a tag the server derived from
    it (`chatbot.web.child --sign-in`); None in a terminal. Signing out ends every console of that
    sign-in, so its desks' sessions are named after it (`other_sessions`)."""

    def __init__(self, executor: ThreadPoolExecutor, service: DeskService) -> None:
        self._executor = executor
        self._service = service
        self._subscribers: list[Callable[[int], None]] = []
        self._reach_subscribers: list[Callable[[bool], None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watcher: threading.Thread | None = None
        self._feed: ChangeFeed | None = None
        """The change feed opened ahead of `watch` (`open_feed`), until the watcher takes it."""
        self._stop = threading.Event()
        self._closed = False
        self.version = 0
        """Counts the changes this process heard of; grows on every notice."""
        self._failures = 0
        """Calls the database failed (`unreachable`) so far; written on the desk thread only."""
        self._failure: StoreError | None = None
        """The latest of them."""
        self.sign_in = self.browser_sign_in
        self.session = secrets.token_hex(8)
        """Which console this is, in the presence it reports (`agent_seen`): one process runs
        one app, so another console of the same agent (a second terminal, a browser's second
        tab) has another. A browser's begins with its sign-in's tag: "tag.random"."""
        if self.sign_in is not None:
            self.session = f"{self.sign_in}.{self.session}"
        self._claimed: dict[int, datetime | None] = {}
        """The claims won here (conversation id: when claimed), for `claimed_here`."""

    @classmethod
    def open(cls, open_service: Callable[[], DeskService]) -> AsyncDesk:
        """Start the desk thread and open the service on it. Bad settings (an unusable database)
        raise here, before any loop runs."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="desk")
        try:
            service = executor.submit(open_service).result()
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(executor, service)

    # -- running calls ----------------------------------------------------------------------------

    async def _run(self, function: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor,
            functools.partial(self._call, self._failures, function, *args, **kwargs),
        )

    def _call(
        self, failures: int, function: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """`function(*args, **kwargs)` on the desk thread, unless a call ahead of it failed on
        the database since it was asked for (`failures` then): it waited behind that one, and
        fails with it rather than wait as long again."""
        if self._failures != failures and (failure := self._failure) is not None:
            raise StoreError(f"{failure} (not tried: the call before it failed so)")
        try:
            return function(*args, **kwargs)
        except StoreError as error:
            if unreachable(error):
                self._failure = error
                self._failures += 1
            raise

    async def _write(self, function: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """A call that changes something: subscribers here hear of it without waiting for the
        feed to notice."""
        try:
            return await self._run(function, *args, **kwargs)
        finally:
            self._changed()

    def call_blocking(self, function: Callable[[DeskService], T]) -> T:
        """Run `function(service)` on the desk thread and wait for it: for setup, before the
        loop that will await this desk runs (never from a UI's handlers)."""
        return self._executor.submit(function, self._service).result()

    # -- change notices ---------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[int], None]) -> Callable[[], None]:
        """Call `callback(version)` on the loop after every change anyone commits; returns the
        function that unsubscribes."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    def subscribe_reach(self, callback: Callable[[bool], None]) -> Callable[[], None]:
        """Call `callback(False)` on the loop when the change feed loses the database, and
        `callback(True)` when it has it again: a screen left idle through an outage otherwise
        heard nothing, as it reads only when told of a change."""
        self._reach_subscribers.append(callback)
        return lambda: (
            self._reach_subscribers.remove(callback)
            if callback in self._reach_subscribers
            else None
        )

    def _reached(self, reachable: bool) -> None:
        for callback in list(self._reach_subscribers):
            callback(reachable)

    def open_feed(self) -> None:
        """Open the change feed now, for `watch` to use: a database that refuses its connection
        (one with none to spare) fails here, as the desk's own would, before the app is up, where
        `watch` failed inside a running app. For setup, as `call_blocking`."""
        if self._feed is None and self._watcher is None:
            self._feed = self._executor.submit(self._service.open_feed).result()

    async def watch(self) -> None:
        """Start the watcher thread: from now on other processes' commits notify too."""
        if self._watcher is not None:
            return
        self._loop = asyncio.get_running_loop()
        feed, self._feed = self._feed, None
        if feed is None:
            feed = await self._run(self._service.open_feed)
        self._watcher = threading.Thread(
            target=self._watch, args=(feed,), name="desk-feed", daemon=True
        )
        self._watcher.start()

    def _watch(self, feed: ChangeFeed) -> None:
        loop = self._loop
        assert loop is not None
        lost = False
        try:
            while not self._stop.is_set():
                try:
                    changed = feed.wait(FEED_WAIT_S)
                except HelpdeskError as error:
                    # Said once, not at every retry: an outage of an hour was thousands of lines
                    # from every app and worker.
                    if not lost:
                        log.warning("change feed: %s (retrying every second)", error)
                        lost = True
                        if not self._tell(loop, self._reached, False):
                            return
                    self._stop.wait(1.0)
                    continue
                if lost:
                    log.warning("change feed: back")
                    lost = False
                    if not self._tell(loop, self._reached, True):
                        return
                if changed and not self._stop.is_set() and not self._tell(loop, self._changed):
                    return
        finally:
            feed.close()

    @staticmethod
    def _tell(
        loop: asyncio.AbstractEventLoop, callback: Callable[..., None], *args: object
    ) -> bool:
        """Run `callback(*args)` on the loop; False once the loop has closed under us."""
        try:
            loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:
            return False
        return True

    def _changed(self) -> None:
        self.version += 1
        for callback in list(self._subscribers):
            callback(self.version)

    # -- closing ----------------------------------------------------------------------------------

    def _close_unwatched_feed(self) -> None:
        """Close a feed `open_feed` opened that no watcher took (the app ended first)."""
        feed, self._feed = self._feed, None
        if feed is not None:
            feed.close()

    async def aclose(self) -> None:
        """Stop watching and close the store, on their threads."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()  # The watcher closes its own connection as it ends.
        self._close_unwatched_feed()
        # Not `_run`: closing is never skipped for a call that failed before it.
        await asyncio.get_running_loop().run_in_executor(self._executor, self._service.close)
        self._executor.shutdown(wait=False)

    def close(self) -> None:
        """`aclose` for code without an event loop."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._close_unwatched_feed()
        self._executor.submit(self._service.close).result()
        self._executor.shutdown(wait=True)

    # -- the service, awaitable -------------------------------------------------------------------
    # One line each, so the service stays the one place the behaviour is written.

    async def start_conversation(self) -> Conversation:
        return await self._write(self._service.start_conversation)

    async def ask(
        self,
        conversation_id: int | None,
        text: str,
        *,
        locale: Locale | None = None,
        to_person: bool = False,
    ) -> AskResult:
        return await self._write(
            self._service.ask, conversation_id, text, locale=locale, to_person=to_person
        )

    async def set_locale(
        self, conversation_id: int, locale: Locale, *, chosen: bool = True
    ) -> Conversation:
        return await self._write(self._service.set_locale, conversation_id, locale, chosen=chosen)

    async def talk_to_person(self, conversation_id: int | None) -> HandoffResult:
        return await self._write(self._service.talk_to_person, conversation_id)

    async def feedback(
        self, conversation_id: int, *, entry_id: int, value: Feedback
    ) -> FeedbackResult:
        return await self._write(
            self._service.feedback, conversation_id, entry_id=entry_id, value=value
        )

    async def rating_due(self, conversation_id: int) -> ChatEvent | None:
        return await self._run(self._service.rating_due, conversation_id)

    async def rate(self, conversation_id: int, *, rating: int) -> ChatEvent:
        return await self._write(self._service.rate, conversation_id, rating=rating)

    async def claim(self, conversation_id: int, *, agent: str) -> ClaimResult:
        return self._won(await self._write(self._service.claim, conversation_id, agent=agent))

    async def reply(
        self, conversation_id: int, *, agent: str, text: str, passage: Passage | None = None
    ) -> ChatMessage:
        return await self._write(
            self._service.reply, conversation_id, agent=agent, text=text, passage=passage
        )

    async def resolve(self, conversation_id: int, *, agent: str) -> Conversation:
        return await self._write(self._service.resolve, conversation_id, agent=agent)

    async def hand_back(self, conversation_id: int, *, agent: str) -> Conversation:
        return await self._write(self._service.hand_back, conversation_id, agent=agent)

    async def question_for_bot(self, conversation_id: int) -> ChatMessage | None:
        return await self._run(self._service.question_for_bot, conversation_id)

    async def release(self, conversation_id: int, *, agent: str) -> Conversation:
        return await self._write(self._service.release, conversation_id, agent=agent)

    async def take_back(self, conversation_id: int, *, agent: str, owner: str) -> Conversation:
        return await self._write(self._service.take_back, conversation_id, agent=agent, owner=owner)

    async def release_claims(self, agent: str, *, only: list[int] | None = None) -> list[int]:
        return await self._write(self._service.release_claims, agent, only=only)

    async def agent_seen(self, agent: str) -> None:
        # Not `_write`: presence adds nothing to any log, and screens read it on their own timer.
        await self._run(self._service.agent_seen, agent, session=self.session)

    async def other_sessions(self, agent: str, *, signing_out: bool = False) -> int:
        """How many other consoles of `agent` are open now (this one aside). `signing_out`: those
        of this browser's sign-in are not counted either, as signing out ends them too."""
        return await self._run(
            self._service.other_sessions,
            agent,
            session=self.session,
            excluding_sign_in=self.sign_in if signing_out else None,
        )

    async def session_ended(self, agent: str) -> None:
        """This console is closing: another of `agent`'s no longer counts it as open."""
        await self._run(self._service.session_ended, agent, session=self.session)

    async def claimed_here(self, agent: str) -> list[int]:
        """The conversations `agent` holds by a claim this console made (F6, Ctrl+L, a reopen),
        not let go and claimed again since."""
        return await self._run(self._service.still_claimed, agent, dict(self._claimed))

    async def agents_seen(self) -> dict[str, datetime]:
        return await self._run(self._service.agents_seen)

    async def release_away_claims(self, *, here: str | None = None) -> list[int]:
        # Subscribers here hear of it only when something was released: the sweep runs every
        # presence tick and almost always finds nothing.
        released = await self._run(self._service.release_away_claims, here=here)
        if released:
            self._changed()
        return released

    async def keep_conversations(self, conversation_ids: list[int]) -> int:
        # Not `_write`: no log entry, nothing for a screen to show.
        return await self._run(self._service.keep_conversations, conversation_ids)

    async def prune_empty_conversations(self) -> list[int]:
        # Not `_write`: nobody shows a conversation nobody wrote in.
        return await self._run(self._service.prune_empty_conversations)

    async def reopen(self, conversation_id: int, *, agent: str) -> ClaimResult:
        return self._won(await self._write(self._service.reopen, conversation_id, agent=agent))

    async def take_next(self, *, agent: str) -> ClaimResult | None:
        result = await self._write(self._service.take_next, agent=agent)
        return None if result is None else self._won(result)

    def _won(self, result: ClaimResult) -> ClaimResult:
        if result.won:
            conversation = result.conversation
            self._claimed[conversation.id] = conversation.claimed_at
        return result

    async def claimed_by(self, agent: str) -> list[int]:
        return await self._run(self._service.claimed_by, agent)

    async def add_note(self, conversation_id: int, *, agent: str, text: str) -> ChatEvent:
        return await self._write(self._service.add_note, conversation_id, agent=agent, text=text)

    async def set_typing(
        self, conversation_id: int, *, author: Author, typing: bool = True
    ) -> None:
        # Not `_write`: nothing needs it at once, and the change feed wakes whoever shows it (in
        # this process too) within a poll.
        await self._run(self._service.set_typing, conversation_id, author=author, typing=typing)

    async def typing(self, conversation_id: int) -> dict[Author, datetime]:
        return await self._run(self._service.typing, conversation_id)

    async def mark_read(self, conversation_id: int, *, agent: str, entry_id: int) -> None:
        # Not `_write`: a read marker adds nothing to any log, and only the reader's own queue
        # shows it (it updates that row itself), so nobody here needs waking.
        await self._run(self._service.mark_read, conversation_id, agent=agent, entry_id=entry_id)

    async def take(self, worker: str, *, limit: int, lease_s: float) -> Leased:
        # Not `_write`: a lease taken would wake the worker that took it, which would look again.
        # Only a question sent to a person changes what others see.
        leased = await self._run(self._service.take, worker, limit=limit, lease_s=lease_s)
        if leased.failed:
            self._changed()
        return leased

    async def lease(self, worker: str, *, limit: int, lease_s: float) -> list[PendingQuestion]:
        return (await self.take(worker, limit=limit, lease_s=lease_s)).questions

    async def extend_leases(
        self, worker: str, question_ids: list[int], *, lease_s: float
    ) -> list[int]:
        return await self._run(self._service.extend_leases, worker, question_ids, lease_s=lease_s)

    async def release_leases(self, worker: str, question_ids: list[int]) -> int:
        return await self._write(self._service.release_leases, worker, question_ids)

    async def next_lease_expiry(self) -> float | None:
        return await self._run(self._service.next_lease_expiry)

    async def bot_backlog(self) -> tuple[int, float | None]:
        return await self._run(self._service.bot_backlog)

    async def bot_holds(self) -> int:
        return await self._run(self._service.bot_holds)

    async def record_decision(
        self, worker: str, question: PendingQuestion, decision: Decision
    ) -> DecisionResult:
        return await self._write(self._service.record_decision, worker, question, decision)

    async def fail_question(
        self, worker: str, question: PendingQuestion, *, reason: Reason
    ) -> DecisionResult:
        return await self._write(self._service.fail_question, worker, question, reason=reason)

    async def content_gaps(
        self, *, include_handled: bool = True, limit: int = 200
    ) -> list[ContentGap]:
        return await self._run(
            self._service.content_gaps, include_handled=include_handled, limit=limit
        )

    async def mark_gap_handled(self, gap_id: int, *, passage_id: str) -> None:
        await self._write(self._service.mark_gap_handled, gap_id, passage_id=passage_id)

    async def conversation(self, conversation_id: int) -> Conversation:
        return await self._run(self._service.conversation, conversation_id)

    async def conversations(
        self, *, state: State | None = None, after_id: int = 0, limit: int = 100
    ) -> list[Conversation]:
        return await self._run(
            self._service.conversations, state=state, after_id=after_id, limit=limit
        )

    async def page(
        self, conversation_id: int, *, before_id: int | None = None, limit: int = 100
    ) -> Page:
        return await self._run(
            self._service.page, conversation_id, before_id=before_id, limit=limit
        )

    async def entries_after(self, conversation_id: int, after_id: int) -> list[Entry]:
        return await self._run(self._service.entries_after, conversation_id, after_id)

    async def decisions(self, conversation_id: int) -> list[StoredDecision]:
        return await self._run(self._service.decisions, conversation_id)

    async def latest_decision(self, conversation_id: int) -> StoredDecision | None:
        return await self._run(self._service.latest_decision, conversation_id)

    async def decisions_since(self, conversation_id: int, message_id: int) -> list[StoredDecision]:
        return await self._run(self._service.decisions_since, conversation_id, message_id)

    async def queue(self, *, agent: str | None = None) -> list[QueueItem]:
        return await self._run(self._service.queue, agent=agent)

    async def waiting_ahead(self, conversation_id: int) -> int | None:
        return await self._run(self._service.waiting_ahead, conversation_id)

    async def queue_items(
        self, conversation_ids: list[int], *, agent: str | None
    ) -> list[QueueItem]:
        return await self._run(self._service.queue_items, conversation_ids, agent=agent)

    async def claims(self) -> list[QueueItem]:
        return await self._run(self._service.claims)

    async def search(
        self, text: str, *, state: State | None = None, limit: int = 50
    ) -> list[SearchHit]:
        return await self._run(self._service.search, text, state=state, limit=limit)

    async def stats(
        self, *, since: datetime | None = None, threshold: float | None = None
    ) -> DeskStats:
        return await self._run(self._service.stats, since=since, threshold=threshold)

    async def last_entry_id(self) -> int:
        return await self._run(self._service.last_entry_id)

    async def changes(self, *, after: int) -> Changes:
        return await self._run(self._service.changes, after=after)
