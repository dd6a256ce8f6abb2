"""What the desk and its store hand out: plain immutable models, never database rows.

A conversation is one append-only log of entries in a single total order (their ids): messages
(customer, bot, agent) and typed events with parameters (escalated, claimed, resolved, ...). Events
are never stored as sentences; front ends render them (`chatbot.notices`), so the stored history is
the same whatever language the reader speaks, and analytics can count them.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
)

from chatbot.desk.state import State as State  # Defined apart so the CLI needs no pydantic.
from chatbot.engine.models import Decision, Reason
from chatbot.i18n import DEFAULT_LOCALE, Locale


class Author(StrEnum):
    """Who wrote a message."""

    CUSTOMER = "customer"
    BOT = "bot"
    AGENT = "agent"


class Feedback(StrEnum):
    """The customer's verdict on one bot answer."""

    HELPFUL = "helpful"
    NOT_HELPFUL = "not-helpful"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)


# -- events ---------------------------------------------------------------------------------------


class EventType(StrEnum):
    """The kinds of event a conversation's log holds."""

    ESCALATED = "escalated"
    CLAIMED = "claimed"
    RELEASED = "released"
    RESOLVED = "resolved"
    HANDED_BACK = "handed-back"
    REOPENED = "reopened"
    FEEDBACK = "feedback"
    DECIDED = "decided"
    NOTE = "note"
    LOCALE_SET = "locale-set"
    PERSON_OFFERED = "person-offered"
    RATED = "rated"
    THANKED = "thanked"


class Escalated(_Frozen):
    """The conversation went to the handoff queue."""

    type: Literal[EventType.ESCALATED] = EventType.ESCALATED
    reason: Reason
    top_probability: float | None = None
    """The best probability of the decision behind the escalation, if any."""
    question_entry: int | None = None
    """The customer message that escalated (None: asked for a person before asking anything)."""


class Claimed(_Frozen):
    """An agent took the conversation from the queue."""

    type: Literal[EventType.CLAIMED] = EventType.CLAIMED
    agent: str


class Released(_Frozen):
    """The agent who owned the conversation put it back in the queue (or a colleague did, for a
    claim its agent left behind)."""

    type: Literal[EventType.RELEASED] = EventType.RELEASED
    agent: str
    """Who owned it."""
    by: str | None = None
    """The colleague who put it back, if not its owner."""
    away: bool = False
    """The desk put it back for its owner, who had not been seen for `agent.release_after_s`."""


class Resolved(_Frozen):
    """The agent who owned the conversation closed it."""

    type: Literal[EventType.RESOLVED] = EventType.RESOLVED
    agent: str


class HandedBack(_Frozen):
    """The agent who owned the conversation gave it back to the bot."""

    type: Literal[EventType.HANDED_BACK] = EventType.HANDED_BACK
    agent: str


class Reopened(_Frozen):
    """The customer wrote in a resolved conversation: the bot has it again. Not for a message
    that only thanked (`Thanked` with `resolved`): the conversation stays resolved."""

    type: Literal[EventType.REOPENED] = EventType.REOPENED


class FeedbackGiven(_Frozen):
    """The customer judged a bot answer."""

    type: Literal[EventType.FEEDBACK] = EventType.FEEDBACK
    entry: int
    """The bot answer judged."""
    value: Feedback


Outcome = Literal["answered", "escalated", "kept"]
"""What came of a decision: `kept` means a person had the conversation by then (claimed it, or it
waited in the queue with this very question, or the decision would have escalated it again), so
the decision is there for them only."""


class Decided(_Frozen):
    """The bot decided on a question; `outcome` says what came of it."""

    type: Literal[EventType.DECIDED] = EventType.DECIDED
    decision: int
    question_entry: int
    outcome: Outcome
    """`kept`: a person had the conversation by then, so the decision is there for them only (see
    `Outcome`)."""


class Note(_Frozen):
    """An agent's internal note: for agents only, never shown to the customer."""

    type: Literal[EventType.NOTE] = EventType.NOTE
    agent: str
    text: str


class LocaleSet(_Frozen):
    """The language the customer's side of the conversation is shown in, from now on: detected
    from their first message or a later one clearly in another language, or chosen by them in
    the chat."""

    type: Literal[EventType.LOCALE_SET] = EventType.LOCALE_SET
    locale: Locale
    chosen_by_customer: bool = False
    """False: detected from what they wrote."""


class PersonOffered(_Frozen):
    """The customer asked again what the bot had answered already: instead of repeating that
    answer, the bot offered a person. Follows the repeated question in the log."""

    type: Literal[EventType.PERSON_OFFERED] = EventType.PERSON_OFFERED
    answer_entry: int
    """The bot's earlier answer to the same question."""
    not_helpful: bool = False
    """The customer had marked that answer not helpful (a person had the conversation since, and
    handed it back): the offer says so, not that the answer "above" is what the help center
    says, nor "if it did not help"."""

    @model_serializer(mode="wrap")
    def _not_helpful_only_if_so(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """Stored without `not_helpful` unless it is true: every other offer keeps the form it
        always had (`{"type": "person-offered", "answer_entry": …}`). The CLI's JSON always
        carries the key (`event_json`), so scripts need not know that."""
        data: dict[str, object] = handler(self)
        if not self.not_helpful:
            data.pop("not_helpful", None)
        return data


class Thanked(_Frozen):
    """The customer's message only thanked, acknowledged or said goodbye ("thanks!", "got it,
    bye", "谢谢"), written while the bot had the conversation or after a person resolved it: no
    question for the bot, which judged nothing; the desk said "you're welcome" instead. Follows
    that message in the log."""

    type: Literal[EventType.THANKED] = EventType.THANKED
    resolved: bool = False
    """Written in a resolved conversation, which stayed resolved (its rating still to give)."""


RATINGS = range(1, 6)
"""A satisfaction rating: 1 (very unhappy) to 5 (very happy)."""
MAX_NOTE_CHARS = 4000
"""An internal note is a few lines for colleagues, not a document."""
MAX_REPLY_CHARS = 4000
"""An agent's reply, as long as the longest passage (which a reply can be): a log or a document
pasted by mistake would otherwise reach the customer's chat whole."""
BOT_STALLED_S = 30.0
"""The least time after which a question no bot has taken or decided has none answering it (none
running, or every one busy): see `bot_stalled_after`."""


def bot_stalled_after(budget_s: float) -> float:
    """How long a question may wait before no bot is answering it: longer than a bot spends on
    Valen for one (`valen.budget_s`, 20 s by default) with 10 s for retrieval and the store, and
    never under `BOT_STALLED_S`. The chat then offers the customer a person, the queue says how
    many wait, and `helpdesk doctor` asks whether a bot runs."""
    return max(BOT_STALLED_S, budget_s + 10.0)


class Rated(_Frozen):
    """The customer rated how a person resolved their conversation, once per resolution."""

    type: Literal[EventType.RATED] = EventType.RATED
    rating: int = Field(ge=RATINGS.start, le=RATINGS.stop - 1)
    resolved_entry: int
    """The `resolved` event rated."""
    agent: str | None = None
    """Who resolved it."""


EventData = Annotated[
    Escalated
    | Claimed
    | Released
    | Resolved
    | HandedBack
    | Reopened
    | FeedbackGiven
    | Decided
    | Note
    | LocaleSet
    | PersonOffered
    | Rated
    | Thanked,
    Field(discriminator="type"),
]
EVENT_DATA: TypeAdapter[EventData] = TypeAdapter(EventData)
"""Reads an event's stored parameters back into its model."""


# -- the log --------------------------------------------------------------------------------------


class ChatMessage(_Frozen):
    """A message in a conversation's log."""

    kind: Literal["message"] = "message"
    id: int
    conversation_id: int
    created_at: datetime
    author: Author
    text: str
    agent: str | None = None
    """The agent's name, for agent messages."""
    passage_id: str | None = None
    """The knowledge-base passage this message quotes (bot answers, passages sent by an agent)."""
    passage_title: str | None = None
    decision_id: int | None = None
    """The decision that produced a bot answer."""
    feedback: Feedback | None = None
    """The customer's verdict, on a bot answer."""
    pending: bool = False
    """A customer question the bot has not decided on yet."""

    @property
    def source(self) -> str | None:
        """How the quoted passage is named to a customer: title and id, or the id alone."""
        if self.passage_id is None:
            return None
        return (
            f"{self.passage_title} ({self.passage_id})" if self.passage_title else self.passage_id
        )


class ChatEvent(_Frozen):
    """A typed event in a conversation's log."""

    kind: Literal["event"] = "event"
    id: int
    conversation_id: int
    created_at: datetime
    event: EventData


Entry = Annotated[ChatMessage | ChatEvent, Field(discriminator="kind")]


class Conversation(_Frozen):
    """One customer's conversation and where it stands."""

    id: int
    state: State
    created_at: datetime
    updated_at: datetime
    agent: str | None = None
    """The agent who claimed it (kept after a resolve, cleared on hand back and release)."""
    reason: Reason | None = None
    """Why it was last escalated."""
    top_probability: float | None = None
    """The best probability of the decision behind the last escalation, if any."""
    waiting_since: datetime | None = None
    """When it last entered the queue."""
    claimed_at: datetime | None = None
    """When the agent claimed it."""
    question_entry: int | None = None
    """The customer message that escalated it last (the question the queue shows)."""
    pending: int = 0
    """Customer questions the bot has still to decide on."""
    last_entry: int = 0
    """The id of its newest log entry: anything newer is news."""
    locale: Locale | None = None
    """The customer's language (the latest `locale-set` event); None: English, the default
    (their first message was English, or they have not written yet)."""

    def shown_locale(self, offered: Locale) -> Locale:
        """The language to show its customer: theirs once set; else, while nothing is written,
        `offered` (what their browser or terminal asks for; the first message decides); else
        English."""
        if self.locale is not None:
            return self.locale
        return DEFAULT_LOCALE if self.last_entry > 0 else offered


class Page(_Frozen):
    """A stretch of a conversation's log, oldest first, and how many shown entries lie before it."""

    entries: tuple[ChatMessage | ChatEvent, ...]
    earlier: int
    """Entries before this page, not counting the bookkeeping `decided` and `locale-set`
    events; counted up to a cap (`earlier_exact` False beyond it), so a page costs the same at
    any length."""
    earlier_exact: bool = True


class StoredDecision(_Frozen):
    """The engine's decision on one customer question, as it was made."""

    id: int
    conversation_id: int
    message_id: int
    """The customer question decided on."""
    created_at: datetime
    worker: str | None = None
    """The bot worker that made it."""
    decision: Decision


class QueueItem(_Frozen):
    """A conversation waiting for, or owned by, a person, as the queue panel lists it."""

    conversation_id: int
    state: State
    waiting_since: datetime
    question: str
    """The customer question that escalated it ("" when they asked for a person first)."""
    question_entry: int | None
    reason: Reason | None
    top_probability: float | None
    agent: str | None
    claimed_at: datetime | None = None
    last_customer_entry: int = 0
    """The id of the customer's newest message (0: none yet)."""
    read_entry: int = 0
    """How far the agent the queue was read for has read the conversation (0: never opened)."""

    @property
    def unread(self) -> bool:
        """The customer wrote since that agent last read the conversation."""
        return self.last_customer_entry > self.read_entry


class SearchHit(_Frozen):
    """A conversation whose messages match a search, with the newest matching message."""

    conversation_id: int
    state: State
    agent: str | None
    """Who claimed it last (for a resolved one: who resolved it)."""
    updated_at: datetime
    entry_id: int
    """The newest matching message."""
    text: str
    """That message's text."""
    note_by: str | None = None
    """The agent whose internal note it is, when the newest match is a note (agents search
    them too); None for a message. Front ends say it is a note, in the reader's language."""


class ContentGap(_Frozen):
    """A question the knowledge base could not answer well enough: every escalation of it (the
    same `question_key`, however worded), seen as its latest one, as the figures count it."""

    id: int
    """The latest escalation's; marking it handled marks every escalation of the gap."""
    conversation_id: int
    question: str
    """As the latest escalation worded it."""
    reason: Reason
    top_probability: float | None
    created_at: datetime
    """When it was last escalated."""
    agent_reply: str | None
    """The first thing an agent wrote in the conversation after the latest escalation that has
    a reply, if any has."""
    handled: bool
    passage_id: str | None
    """The passage written from this gap, once handled."""
    count: int = 1
    """How many times customers asked it: customer messages, not escalations (a message the
    bot judged again after a hand-back, and escalated again, was asked once)."""


class PendingQuestion(_Frozen):
    """A customer question waiting for the bot, as a bot worker leases it."""

    id: int
    """The customer message's entry id."""
    conversation_id: int
    text: str
    asked_at: datetime
    attempts: int
    """How many times a worker has taken it (this lease included)."""
    lease_owner: str | None = None
    lease_until: datetime | None = None
    locale: Locale | None = None
    """The conversation's language: which knowledge base answers it."""


class Changes(_Frozen):
    """Which conversations have new log entries since a cursor, and the cursor to ask with next."""

    cursor: int
    conversation_ids: tuple[int, ...]


# -- what the service is given and returns ---------------------------------------------------------


class Escalation(_Frozen):
    """Why and with what a conversation goes to the queue: the event's parameters plus the
    question text that becomes a content gap."""

    reason: Reason
    top_probability: float | None = None
    question_entry: int | None = None
    question: str | None = None
    """The escalating question's text; None: no content gap (nothing was asked)."""

    def event(self) -> Escalated:
        return Escalated(
            reason=self.reason,
            top_probability=self.top_probability,
            question_entry=self.question_entry,
        )


class BotQuestion(_Frozen):
    """What a hand-back gives the bot to answer, as the service chose it from the log
    (`chatbot.desk.service.question_for_bot`). The store makes `entry` the bot's question only if
    the customer wrote nothing after `read_to`: a message written since the service read the log
    was not considered, and the service chooses again."""

    entry: int | None
    """The customer message the bot answers (None: none; the bot waits for their next one)."""
    read_to: int
    """The newest log entry read to choose it (0: the log was empty)."""


class AskResult(_Frozen):
    """A customer message, stored: `message.pending` says whether the bot will judge it."""

    conversation: Conversation
    message: ChatMessage


class HandoffResult(_Frozen):
    """ "Talk to a person": `escalated` is False when a person already had the conversation."""

    conversation: Conversation
    escalated: bool


class FeedbackResult(_Frozen):
    """Feedback stored on the latest answer; "not helpful" may have escalated the conversation."""

    conversation: Conversation
    message: ChatMessage
    escalated: bool


class Leased(_Frozen):
    """What a bot worker took: questions to judge, and those sent to a person instead."""

    questions: list[PendingQuestion]
    failed: list[tuple[PendingQuestion, DecisionResult]]
    """Taken more than `max_attempts` times (they kept killing their workers): escalated with
    `bot-failed`, each with what came of it, so the worker can report them."""


class ClaimResult(_Frozen):
    """The outcome of a claim attempt: exactly one of two racing agents gets `won=True`."""

    won: bool
    conversation: Conversation


class DecisionResult(_Frozen):
    """What came of a bot worker's decision (or failure) on a leased question."""

    outcome: Outcome | Literal["lost"]
    """`kept`: stored for the agent only; `lost`: the lease had passed to another worker, so
    nothing was stored (that worker answers instead)."""
    conversation: Conversation | None = None
    decision: StoredDecision | None = None
