"""The conversation store's interface: what the desk service needs from storage, and its errors.

Backend-neutral on purpose: no SQL types, no connections. Every write is one whole use case in one
transaction. Writes that move a conversation take the state the service read (`expect`, and the
owning agent where it matters) and succeed only if it still holds (`StaleState` otherwise), so the
state machine's rules live in the service (`chatbot.desk.states`) and never in a backend; claims
and bot leases are single conditional updates, so two agents or two workers never both win.
Timestamps come from the clock the store was opened with.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple, Protocol

from chatbot.desk.models import (
    Author,
    BotQuestion,
    Changes,
    ChatEvent,
    ChatMessage,
    ClaimResult,
    ContentGap,
    Conversation,
    DecisionResult,
    Entry,
    Escalation,
    EventData,
    Feedback,
    PendingQuestion,
    QueueItem,
    SearchHit,
    State,
    StoredDecision,
)
from chatbot.desk.stats import STAT_THRESHOLDS, DeskStats
from chatbot.engine.models import Decision
from chatbot.errors import HelpdeskError
from chatbot.pgslots import NoConnectionToSpare
from chatbot.text import printable


class StoreError(HelpdeskError):
    """The database cannot be opened or used."""


class DatabaseFull(StoreError, NoConnectionToSpare):
    """The server refused a connection: every one it allows is in use. An outage like any other
    for whoever was using the store (`unreachable`), said with its cause."""


def unreachable(error: HelpdeskError) -> bool:
    """The database itself failed (cannot be reached, busy, refused to write), as opposed to the
    desk refusing a move in the store's words (a conversation not found, someone else got there
    first, the customer wrote meanwhile, a lease lost): those subclass `StoreError`, and each
    says its own (`DatabaseFull` is an outage, with its cause). The consoles and the bot workers
    tell the two apart by this."""
    return type(error) in (StoreError, DatabaseFull)


class OlderSchema(StoreError):
    """The database's schema is older than this code's, and whoever opened it only reads, so it
    was left as it is: the next process that writes upgrades it."""


class ForeignDatabase(StoreError):
    """The database holds tables, none of them the help desk's: most likely another
    application's, named by mistake. Nothing is made or changed in it."""

    def __init__(self, where: str, tables: list[str]) -> None:
        self.tables = tables
        shown = ", ".join(printable(name) for name in tables[:NAMED_TABLES])
        if len(tables) > NAMED_TABLES:
            shown += f" and {len(tables) - NAMED_TABLES:,} more"
        super().__init__(
            f"{where}: holds {len(tables):,} table{'s' if len(tables) != 1 else ''} ({shown}) and"
            " none of the help desk's: is it the right database (--db, HELPDESK_DB)? Nothing was"
            " changed there"
        )


NAMED_TABLES = 3
"""Another application's tables named in `ForeignDatabase`'s message: enough to recognise it."""


class ConversationNotFound(StoreError):
    """No conversation has the id asked for."""


class StaleState(StoreError):
    """The conversation is no longer in the state the write expected: someone got there first."""


class UnseenMessage(StoreError):
    """The customer wrote after what the agent letting go had on screen: they should read it."""


class LeaseLost(StoreError):
    """The bot worker no longer holds the question's lease: another worker took it over."""


class NotTheLatestAnswer(StoreError):
    """Feedback on a bot answer that is not the conversation's latest, or already judged."""


class EmptySweep(NamedTuple):
    """One batch of `prune_empty_conversations`."""

    deleted: list[int]
    """The empty conversations deleted."""
    settled: int
    """Every conversation up to this id that was read is done with for good: written in (a
    log entry stays for ever) or deleted. A later sweep may start after it."""
    last: int
    """The last id read (`after_id` if none): where the next batch of this sweep starts."""
    more: bool
    """The batch was full: there may be more after `last`."""


def swept(
    rows: Sequence[tuple[int, bool, bool]], deleted: Sequence[int], *, after_id: int, limit: int
) -> EmptySweep:
    """A batch's `EmptySweep`, from the rows read in id order, each (id, started before the
    cut, written in), and the ids deleted. `settled` stops at the first row left: one still
    empty (it may be written in or pruned later), or started within the period (a conversation
    with a smaller id may still be committing on PostgreSQL; one a period old has long since)."""
    gone = set(deleted)
    settled = after_id
    for conversation_id, old, used in rows:
        if not (conversation_id in gone or (old and used)):
            break
        settled = conversation_id
    last = rows[-1][0] if rows else after_id
    return EmptySweep(deleted=sorted(gone), settled=settled, last=last, more=len(rows) >= limit)


class ChangeFeed(Protocol):
    """Wakes a waiter when anyone (any process) commits a change. Used from one thread."""

    def wait(self, timeout: float) -> bool:
        """Block until a commit newer than the last one reported (True) or `timeout` (False)."""
        ...

    def close(self) -> None: ...


SAME_REPLY_S = 10.0
"""How soon an agent's reply, identical to their last one and with nothing between, is the same
reply sent twice, not a second one: two browser tabs that held the same kept reply both pressed
Enter at once, and the customer got it twice."""


def same_reply(
    latest: ChatMessage | ChatEvent | None,
    *,
    agent: str,
    text: str,
    passage_id: str | None,
    now: float,
) -> ChatMessage | None:
    """`latest`, the conversation's newest entry, if it is this reply already written by this
    agent within `SAME_REPLY_S` (see `ConversationStore.reply`). Read in the reply's own write,
    after the conversation is locked, so two of them at once cannot both miss it."""
    if (
        isinstance(latest, ChatMessage)
        and latest.author is Author.AGENT
        and latest.agent == agent
        and latest.text == text
        and latest.passage_id == passage_id
        and now - latest.created_at.timestamp() <= SAME_REPLY_S
    ):
        return latest
    return None


class ConversationStore(Protocol):
    """Conversations, their logs, pending questions and leases, decisions, the queue and content
    gaps. One instance is used from one thread at a time."""

    def close(self) -> None: ...

    def now(self) -> datetime:
        """The time by the clock the store was opened with (this host's, or a test's)."""
        ...

    def open_feed(self) -> ChangeFeed:
        """A change feed of its own (its own connection), for a watcher thread."""
        ...

    # -- the customer's side ----------------------------------------------------------------------

    def create_conversation(self) -> Conversation: ...

    def keep_conversations(self, conversation_ids: Sequence[int]) -> int:
        """Those of `conversation_ids` with no log entry yet count as in use now (their
        `updated_at` moves to the store's clock), so `prune_empty_conversations` leaves them
        for another full period: a browser still showing one. Others are untouched (their last
        change stays what was written). Writes no log entry, and nothing at all when none is
        empty. Returns how many were kept."""
        ...

    def prune_empty_conversations(
        self, *, idle_s: float, after_id: int = 0, limit: int = 1000
    ) -> EmptySweep:
        """Delete the conversations after `after_id` (the first `limit` by id are read) that
        hold nothing at all (no log entry: no message, no event of any kind; a question, a
        decision or an escalation comes with one) and were neither started nor kept
        (`keep_conversations`) in the last `idle_s` seconds: what a browser visitor who never
        wrote leaves behind. The newest conversation is always kept, so SQLite never hands its id
        out again (a cookie or a saved draft may still name it). Each is deleted only if still
        empty at the write, so one written in meanwhile stays."""
        ...

    def add_customer_message(
        self,
        conversation_id: int | None,
        text: str,
        *,
        expect: State,
        to: State,
        pending: bool,
        events: Sequence[EventData] = (),
        then: Sequence[EventData] = (),
        escalation: Escalation | None = None,
        as_question: bool = True,
    ) -> tuple[Conversation, ChatMessage]:
        """Append what the customer wrote (after `events`, before `then`), moving the
        conversation `expect` → `to`; `pending` makes it a question for the bot. With
        `escalation` the conversation then goes to the queue with this message as its question
        (and content gap); unless not `as_question` (the message only asks for a person), when
        `escalation` is stored as given. A `conversation_id` of None starts the conversation
        (`expect` is then the bot). Committed, in one transaction, before anything can fail."""
        ...

    def escalate(
        self, conversation_id: int | None, *, expect: State, escalation: Escalation
    ) -> Conversation:
        """Put the conversation in the queue with an `escalated` event (and a content gap when
        there is a question); None starts a conversation in the same transaction."""
        ...

    def record_feedback(
        self,
        conversation_id: int,
        *,
        entry_id: int,
        value: Feedback,
        expect: State,
        escalation: Escalation | None,
    ) -> tuple[Conversation, ChatMessage]:
        """Judge the conversation's latest bot answer, once (`NotTheLatestAnswer` otherwise), and
        escalate with it when `escalation` is given."""
        ...

    # -- the agent's side -------------------------------------------------------------------------

    def claim(self, conversation_id: int, *, agent: str, expect: State) -> ClaimResult:
        """Take the conversation if its state is still `expect`: one conditional update, so of
        two agents racing, exactly one wins."""
        ...

    def reply(
        self,
        conversation_id: int,
        *,
        agent: str,
        expect: State,
        text: str,
        passage_id: str | None = None,
        passage_title: str | None = None,
    ) -> ChatMessage:
        """An agent's message, if the state is still `expect` and `agent` still holds the claim
        (`StaleState` otherwise). A quoted passage's text is stored once, however often sent.
        The same reply again (`same_reply`) is not written twice: the one written is returned."""
        ...

    def release(
        self,
        conversation_id: int,
        *,
        agent: str,
        expect: State,
        to: State,
        event: EventData,
        seen: bool = False,
        away_s: float | None = None,
        last_seen: datetime | None = None,
        question: BotQuestion | None = None,
    ) -> Conversation:
        """The owner lets go (resolve, hand back, release): state `to` and `event`, if the state
        is still `expect` and `agent` still holds the claim.

        `seen`: only if `agent` has read every customer message (`UnseenMessage` otherwise), by
        their read marker; an agent with no marker is not checked.

        `question`: back to the bot (`to` is `bot`), the customer message the service chose for
        the bot to answer (`question.entry`; None: none) becomes its question, unless it is one
        already; only if the customer wrote nothing after `question.read_to` (`StaleState`
        otherwise: the service reads the log again and chooses again). Without it, nothing
        becomes a question.

        `away_s`: the desk lets go for an agent who left (see `away_claims`): only if `agent`
        has a presence row and neither it nor the claim is newer than `away_s` seconds ago
        (`StaleState` otherwise), so an agent back meanwhile keeps the claim; with `last_seen`,
        also only if their presence row holds no sighting newer than it (the one the caller
        watched go stale by its own clock)."""
        ...

    def claimed_by(self, agent: str) -> list[int]:
        """The conversations `agent` holds a claim on."""
        ...

    def add_note(self, conversation_id: int, *, agent: str, text: str) -> ChatEvent:
        """Append an agent's internal note (a `note` event), in any state, by any agent; the
        conversation's state is untouched. Notes are for agents: front ends never show them to
        the customer."""
        ...

    def add_event(self, conversation_id: int, event: EventData, *, expect: State) -> ChatEvent:
        """Append `event` to the log while the conversation is in state `expect` (`StaleState`
        otherwise); it moves nothing."""
        ...

    def mark_read(self, conversation_id: int, *, agent: str, entry_id: int) -> None:
        """Record that `agent` has seen the conversation's log up to `entry_id`. One marker per
        (conversation, agent), and it only moves forward: an older `entry_id` (another host of the
        same agent, a late write) leaves a newer marker as it is. Writes no log entry."""
        ...

    def agent_seen(
        self, agent: str, *, session: str | None = None, forget_s: float | None = None
    ) -> None:
        """`agent`'s console is open now (by the store's clock): one row per agent, holding the
        newest time, and with `session` (which of their consoles it is) one per console too, in
        the same transaction; with `forget_s`, the console rows of any agent not seen for longer
        are deleted. Writes no log entry, and wakes no change feed where the backend can help
        it (PostgreSQL sends no NOTIFY for it; any SQLite commit moves `data_version`)."""
        ...

    def agents_seen(self) -> dict[str, datetime]:
        """When each agent who was ever seen was last seen."""
        ...

    def sessions_seen(self, agent: str) -> dict[str, datetime]:
        """When each console of `agent` that said so with its session, and was not forgotten or
        ended since, was last seen."""
        ...

    def session_ended(self, agent: str, *, session: str) -> None:
        """That console of `agent` is closing: its row goes (nothing if it has none)."""
        ...

    def away_claims(self, *, away_s: float) -> list[tuple[int, str]]:
        """Claimed conversations, (id, agent), whose agent has a presence row and was last seen
        more than `away_s` seconds ago, claimed more than `away_s` seconds ago too (a claim is a
        sign of life). An agent with no presence row is never away."""
        ...

    # -- the bot's side ---------------------------------------------------------------------------

    def set_typing(self, conversation_id: int, *, author: Author, seconds: float | None) -> None:
        """`author` (the customer, or the agent holding the conversation) is typing, for the next
        `seconds` by the store's clock; None: stopped. `ConversationNotFound` for an unknown id."""
        ...

    def typing(self, conversation_id: int) -> dict[Author, datetime]:
        """Who is typing in the conversation now (by the store's clock), and until when."""
        ...

    def lease_questions(self, *, worker: str, limit: int, lease_s: float) -> list[PendingQuestion]:
        """Take up to `limit` pending questions nobody holds (or whose lease ran out), oldest
        first, for `lease_s` seconds; each take counts as an attempt."""
        ...

    def extend_leases(
        self, *, worker: str, question_ids: Sequence[int], lease_s: float
    ) -> list[int]:
        """Push the leases `worker` still holds `lease_s` seconds from now; returns their ids."""
        ...

    def release_leases(self, *, worker: str, question_ids: Sequence[int]) -> int:
        """Give back leases unjudged (a worker shutting down): not counted as attempts."""
        ...

    def next_lease_expiry(self) -> float | None:
        """Seconds until the earliest lease held runs out (None: no lease held)."""
        ...

    def bot_holds(self) -> int:
        """Questions a bot holds now: leased, and the lease not run out (a live worker's
        heartbeat keeps renewing it). With questions waiting past `bot_stalled_after`, some held
        means the bots run but are busy, not that none runs."""
        ...

    def bot_backlog(self) -> tuple[int, float | None]:
        """Questions no bot holds now (never taken, given back, or their lease ran out), and the
        seconds since the oldest of them was asked (None: there is none)."""
        ...

    def record_decision(
        self,
        question_id: int,
        *,
        worker: str,
        expect: State,
        decision: Decision | None,
        answer: bool,
        escalation: Escalation | None,
    ) -> DecisionResult:
        """Settle a leased question in one transaction, if `worker` still holds its lease
        (`LeaseLost` otherwise): store `decision` (with a `decided` event) when there is one, then
        the bot's answer (`answer`) or the escalation; neither leaves it for the agent."""
        ...

    # -- content gaps -----------------------------------------------------------------------------

    def content_gaps(self, *, include_handled: bool = True, limit: int = 200) -> list[ContentGap]:
        """Escalated questions no passage answers, newest first: one per question (its
        escalations of one `question_key`, as the figures count them), how many times it was
        asked, its latest wording and time, and the agent's reply that followed, if any (see
        `chatbot.store.stats_sql.content_gaps`)."""
        ...

    def mark_gap_handled(self, gap_id: int, *, passage_id: str) -> None:
        """Passage `passage_id` was written for the gap whose escalation is `gap_id`: that one and
        every open escalation of the same question (`question_key`) are handled. `StoreError` if
        there is no such escalation."""
        ...

    # -- reading ----------------------------------------------------------------------------------

    def conversation(self, conversation_id: int) -> Conversation: ...

    def conversations(
        self,
        *,
        state: State | None = None,
        after_id: int = 0,
        limit: int = 100,
        include_empty: bool = True,
    ) -> list[Conversation]:
        """Conversations in id order after `after_id` (keyset pages), optionally in one state;
        without `include_empty`, only those with at least one log entry (a browser visitor who
        never wrote has an empty one)."""
        ...

    def entries(
        self,
        conversation_id: int,
        *,
        after_id: int = 0,
        before_id: int | None = None,
        limit: int | None = None,
    ) -> list[Entry]:
        """Log entries oldest first: those after `after_id`, or with `before_id`/`limit` the
        newest `limit` before `before_id` (keyset pagination; never the whole log to show its
        end)."""
        ...

    def entries_of(self, conversation_ids: Sequence[int]) -> dict[int, list[Entry]]:
        """Each conversation's whole log, oldest first, as `entries` reads it, for a page of
        conversations at once (an export's): a few queries, not one per conversation. Every id
        asked for is a key; a conversation with no entries (or none at all) has an empty list."""
        ...

    def count_entries(
        self, conversation_id: int, *, before_id: int, limit: int | None = None
    ) -> int:
        """Entries before `before_id`, not counting the bookkeeping `decided` and `locale-set`
        events; with `limit`, counting stops there (reading at most about that many rows, newest
        first)."""
        ...

    def latest_answer(self, conversation_id: int) -> ChatMessage | None:
        """The conversation's newest bot answer."""
        ...

    def latest_question(self, conversation_id: int) -> tuple[ChatMessage, float | None] | None:
        """The newest customer message and the top probability of its latest decision."""
        ...

    def latest_questions(
        self, conversation_id: int, *, before_id: int | None = None, limit: int
    ) -> list[tuple[ChatMessage, float | None]]:
        """The customer's messages newest first, as `latest_question` gives the newest: at most
        `limit` of those before `before_id` (None: from the newest on), each with the top
        probability of its latest decision. For walking back a page at a time past messages
        that asked nothing, without reading the rest of the log (bot answers, events)."""
        ...

    def decision(self, decision_id: int) -> StoredDecision: ...

    def decisions(self, conversation_id: int) -> list[StoredDecision]: ...

    def decisions_of(self, conversation_ids: Sequence[int]) -> dict[int, list[StoredDecision]]:
        """Each conversation's decisions in id order, as `decisions` reads them, for a page of
        conversations at once; every id asked for is a key."""
        ...

    def latest_decision(self, conversation_id: int) -> StoredDecision | None: ...

    def decisions_since(self, conversation_id: int, message_id: int) -> list[StoredDecision]:
        """The decisions on `conversation_id`'s customer questions from `message_id` on (its own
        included), oldest first: for a conversation a person has, the one behind its escalation
        (`message_id` its `question_entry`) and those the bot kept silent on later questions.
        Found from those questions (an index range), not from every decision of the conversation."""
        ...

    def queue(self, *, agent: str | None = None) -> list[QueueItem]:
        """Waiting conversations, longest wait first, then those `agent` has claimed. Each item's
        `last_customer_entry` is the customer's newest message, `read_entry` `agent`'s marker."""
        ...

    def waiting_ahead(self, conversation_id: int) -> int | None:
        """How many conversations wait ahead of this one (the queue's order: longest wait
        first); None when it is not waiting."""
        ...

    def longest_waiting(self, limit: int) -> list[int]:
        """The first `limit` waiting conversations' ids in the queue's order (longest wait, then
        id): what an agent taking the next conversation tries, in turn."""
        ...

    def queue_items(self, conversation_ids: Sequence[int], *, agent: str | None) -> list[QueueItem]:
        """The items `queue(agent=agent)` holds for those of `conversation_ids` that are in it, in
        any order; ids not returned are not in the queue (any more). What a queue panel reads
        when `changes` names a few conversations, instead of the whole queue."""
        ...

    def claims(self) -> list[QueueItem]:
        """Every claimed conversation, whoever holds it, by agent then claim time (the team
        view); `read_entry` is 0."""
        ...

    def search(
        self, text: str, *, state: State | None = None, limit: int = 50, number: bool = False
    ) -> list[SearchHit]:
        """Conversations (only those in `state`, if given) with a customer or agent message that
        contains `text` literally, ignoring case (no wildcards; "" matches every message), most
        recently active first, at most `limit`, each with its newest matching message. With
        `number`, `text` is digits and matches only where no digit stands next to it: #12 is
        not found in "2012" or "120 km"."""
        ...

    # -- analytics --------------------------------------------------------------------------------

    def stats(
        self, since: datetime | None, *, thresholds: Sequence[float] = STAT_THRESHOLDS
    ) -> DeskStats:
        """The desk's figures since `since` (None: everything), each computed by the database as
        an aggregate query over indexed columns (`chatbot.store.stats_sql` holds the SQL every
        backend shares); `would_answer` counts the decisions each of `thresholds` would have
        answered. What each figure means is documented on `DeskStats`."""
        ...

    def last_entry_id(self) -> int:
        """The newest log entry's id, of any conversation (0: none): where a reader of `changes`
        starts."""
        ...

    def changes(self, *, after: int) -> Changes:
        """The conversations with log entries after the cursor `after`, and the next cursor."""
        ...


__all__ = [
    "ChangeFeed",
    "ConversationNotFound",
    "ConversationStore",
    "EmptySweep",
    "LeaseLost",
    "NotTheLatestAnswer",
    "OlderSchema",
    "StaleState",
    "StoreError",
    "swept",
]
