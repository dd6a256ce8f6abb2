"""The desk service: the only way to change a conversation, for every front end and bot worker.

Each change reads the conversation, asks the state machine (`states`) where the move leads, and
writes through the store on the condition that the state it read still holds. Losing that race
means someone else moved first: the service reads again and decides again, so a rule is checked
against the state the write actually lands on. Results are typed models; refusals are one-line
`HelpdeskError`s.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol, TypeVar

from chatbot.desk.models import (
    MAX_NOTE_CHARS,
    MAX_REPLY_CHARS,
    RATINGS,
    AskResult,
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
    FeedbackResult,
    HandedBack,
    HandoffResult,
    Leased,
    LocaleSet,
    Page,
    PendingQuestion,
    PersonOffered,
    QueueItem,
    Rated,
    Released,
    Reopened,
    Resolved,
    SearchHit,
    State,
    StoredDecision,
    Thanked,
)
from chatbot.desk.states import Move, Refused, Role, bot_answers, bot_judges, next_state
from chatbot.desk.stats import STAT_THRESHOLDS, DeskStats
from chatbot.engine.models import Answer, Decision, Reason
from chatbot.engine.question import check_question
from chatbot.errors import HelpdeskError
from chatbot.i18n import DEFAULT_LOCALE, Locale, detect_locale, written_clearly_in
from chatbot.store.interface import (
    ChangeFeed,
    ConversationNotFound,
    ConversationStore,
    LeaseLost,
    NotTheLatestAnswer,
    StaleState,
    StoreError,
    UnseenMessage,
)
from chatbot.text import is_blank, searched_number

if TYPE_CHECKING:
    from chatbot.knowledge_base.models import Passage

T = TypeVar("T")

RETRIES = 8
"""Reads-and-writes one change may take when others keep moving the conversation first."""
EARLIER_COUNTED = 1000
"""How far back a page counts the entries before it: beyond this, "over 1,000" is all a reader
needs, and counting every one made opening a long conversation grow with its length."""
TYPING_S = 6.0
"""How long one "typing" signal lasts: a front end sends it again every few seconds while the
person types (the app's `TYPING_EVERY_S`), so it lapses soon after they stop."""
TAKE_BATCH = 10
"""Waiting conversations read at a time by an agent taking the next one: more than agents who
take at the same instant, so one read almost always finds one left."""
JUDGED_LOOKBACK = 20
"""Newest entries read for a question still being judged that a customer asks again."""
ASKED_PAGE = 20
"""Customer messages read at a time, newest first, for the question a customer who asks for a
person hands over (`_asked_last`): past a "thanks!" or two, it is almost always on the first."""
REPLY_PAGE = 100
"""Log entries read at a time, newest first, back to the last reply, for the question a
hand-back gives the bot (`question_for_bot`): a reply is almost always on the first page."""
LOCALE_PAGE = 100
"""Log entries read at a time, newest first, back to the latest `locale-set` event, for whether
the customer chose their conversation's language (`_chosen_by_customer`)."""


PRESENCE_EVERY_S = 30.0
"""How often an open agent console says its agent is here (`agent_seen`), and sweeps for claims
of agents who left (`release_away_claims`). A write per console per half minute costs the
database next to nothing, and an agent who closed the tab shows as away within a minute
(`AWAY_AFTER_S`); a shorter period buys little more and wakes SQLite's change feeds more often."""
AWAY_AFTER_S = 2 * PRESENCE_EVERY_S
"""Not seen for longer than this, an agent shows as away beside their claims: two periods, so one
tick late (a busy loop, a slow database) never says it of an agent who is there."""
RELEASE_AFTER_S = 600.0
"""The default grace before the claims of an agent who left go back to the queue (the
`agent.release_after_s` setting; a reload, a restart or a dropped link comes back well within
it)."""

EMPTY_KEPT_S = 24 * 3600.0
"""How long a conversation nobody wrote in (a browser visitor who only looked: their page starts
one, for its id to go in their cookie) is kept after it started or an open page last kept it
(`keep_conversations`) before `prune_empty_conversations` deletes it. A day: a visitor who comes
back within it finds the same conversation; one who comes back later gets a new one, which is
all an empty one could give them."""
PRUNE_EVERY_S = 3600.0
"""How often a process sweeps for empty conversations once it has read them all: each sweep
reads only what is newer than what it has settled, a day's worth or so."""
PRUNE_BATCH = 1000
"""Conversations read at a time by the sweep."""
PRUNE_BATCHES = 20
"""Batches read per call at most: a process's first sweep over a large database goes on at the
next call, without holding the desk's thread for seconds."""

RESOLUTION_PAGE = 50
"""Log entries read at a time, newest first, looking for the resolution a rating is for."""


class RatingRefused(HelpdeskError):
    """A rating for a conversation that is not resolved, or a second one."""


class WroteMeanwhile(HelpdeskError):
    """A resolve or hand-back refused: the customer wrote after what the agent had on screen."""

    def __init__(self, message: str, *, move: Move = Move.RESOLVE) -> None:
        super().__init__(message)
        self.move = move


class FeedbackRefused(HelpdeskError):
    """Feedback on an answer that is not the conversation's latest, or a second time."""


class PassageCheck(Protocol):
    """Whether the passage a bot answer came from still reads as it did, in the knowledge base a
    conversation in `locale` is answered from (a translation's, for a language that has one).
    False when it changed, is gone, or cannot be read: the bot then judges the question again.
    Called on the desk's thread, only when a customer repeats an answered question."""

    def __call__(self, locale: Locale, answer: Answer) -> bool: ...

    def close(self) -> None:
        """Let go of what the checks opened (a knowledge base's connection)."""
        ...


class DeskService:
    """Every conversation change, checked against the state machine and written atomically.

    Synchronous and bound to its store's thread; event loops use `AsyncDesk`.
    """

    def __init__(
        self,
        store: ConversationStore,
        *,
        max_attempts: int = 3,
        release_after_s: float = RELEASE_AFTER_S,
        empty_kept_s: float = EMPTY_KEPT_S,
        passage_check: PassageCheck | None = None,
    ) -> None:
        self.store = store
        self.passage_check = passage_check
        """Asked before a repeated question gets "you asked this before" instead of the bot: an
        editor may have changed the passage the earlier answer came from since. None: the
        earlier answer is taken to stand (no knowledge base at hand; tests of the desk alone)."""
        self.max_attempts = max_attempts
        """How many times workers may take one question before it goes to a person."""
        self.release_after_s = release_after_s
        """Seconds an agent may be unseen before `release_away_claims` lets go of their claims
        for them (0: never)."""
        self._sightings: dict[str, tuple[datetime, datetime]] = {}
        """Per agent, their newest sighting as stored and when this process first read it so, by
        its own clock: how long an agent has been away is measured here, never by comparing
        another host's clock with this one's."""
        self.empty_kept_s = empty_kept_s
        """Seconds a conversation nobody wrote in is kept (0: for ever); see `EMPTY_KEPT_S`."""
        self._prune_settled = 0
        """Every conversation up to this id is written in or gone: later sweeps start after it."""
        self._prune_scan: int | None = None
        """Where the sweep under way goes on (None: none is under way)."""
        self._prune_whole = True
        """The sweep under way has settled every conversation it read so far."""
        self._prune_due: datetime | None = None
        """When the next sweep starts (None: at the first call)."""

    def close(self) -> None:
        try:
            if self.passage_check is not None:
                self.passage_check.close()
        finally:
            self.store.close()

    def open_feed(self) -> ChangeFeed:
        return self.store.open_feed()

    def _settle(self, attempt: Callable[[], T]) -> T:
        """Run read-decide-write until the write lands on the state that was read."""
        for _ in range(RETRIES):
            try:
                return attempt()
            except StaleState:
                continue
        raise StoreError(f"the conversation kept changing; gave up after {RETRIES} tries")

    # -- the customer's side ----------------------------------------------------------------------

    def start_conversation(self) -> Conversation:
        return self.store.create_conversation()

    def keep_conversations(self, conversation_ids: Sequence[int]) -> int:
        """The empty ones of these conversations are shown on open pages: they stay another
        `empty_kept_s` (see `prune_empty_conversations`). Returns how many were empty."""
        return self.store.keep_conversations(conversation_ids)

    def prune_empty_conversations(self) -> list[int]:
        """Delete the conversations nobody wrote in (no message, no event: not even a language
        chosen) that were started, or last kept by an open page, more than `empty_kept_s` ago;
        returns their ids. A browser's page starts a conversation before its visitor writes, so
        every visit that only looked left one, for ever. Run on every `helpdesk bot` worker's
        presence tick: a sweep every `PRUNE_EVERY_S`, each reading only the conversations after
        those this process already settled (written in, or deleted), a batch at a time."""
        if self.empty_kept_s <= 0:
            return []
        now = self.store.now()
        if self._prune_scan is None:
            if self._prune_due is not None and now < self._prune_due:
                return []
            self._prune_scan, self._prune_whole = self._prune_settled, True
        deleted: list[int] = []
        for _ in range(PRUNE_BATCHES):
            sweep = self.store.prune_empty_conversations(
                idle_s=self.empty_kept_s, after_id=self._prune_scan, limit=PRUNE_BATCH
            )
            deleted += sweep.deleted
            if self._prune_whole:
                self._prune_settled = sweep.settled
                self._prune_whole = sweep.settled == sweep.last
            self._prune_scan = sweep.last
            if not sweep.more:
                self._prune_scan = None
                self._prune_due = now + timedelta(seconds=PRUNE_EVERY_S)
                break
        return deleted

    def ask(
        self,
        conversation_id: int | None,
        text: str,
        *,
        locale: Locale | None = None,
        to_person: bool = False,
    ) -> AskResult:
        """Store what the customer wrote, first of all: a question for the bot (`pending`) while
        the bot has the conversation, a message for the person otherwise. Starts a conversation
        when `conversation_id` is None, in the same transaction. The first message sets the
        conversation's language: `locale` if the customer chose one, else the one the message is
        written in (a conversation with no `locale-set` event is in English). A later message
        clearly written in another language (`written_clearly_in`: not a mixed or one-word one)
        switches it, so the bot searches that language's passages and the customer's chat
        follows; unless the customer chose the language in force (F9), which stays.

        `to_person`: the customer wants a person to answer this (reason `customer-asked`), not
        the bot; the conversation goes to the queue with the message as its question, unless a
        person has it already. Start, message and escalation are then one write.

        A message that only asks for a person ("talk to a person", "agent", "转人工": see
        `asks_for_person`), written while the bot has the conversation, does what "talk to a
        person" does (`talk_to_person`), in the same one write: the bot could only have said the
        help center has no answer to it. With a person on the conversation it is a message.

        A message that only thanks, acknowledges or says goodbye ("thanks!", "got it, bye",
        "谢谢": see `says_thanks`), written while the bot has the conversation, is no question:
        the bot judges nothing, nothing escalates, and the desk replies in kind (a `thanked`
        event after the message, in the same one write). Written after a person resolved the
        conversation, the same, and the conversation stays resolved (`Move.THANK`: not
        reopened, its rating still to give); any other message reopens it for the bot. With a
        person on the conversation it is a message for them."""
        text = check_question(text)  # As stored and asked: without the spaces around it.
        cid = conversation_id

        def attempt() -> AskResult:
            state, current, judging = State.BOT, None, 0
            if cid is not None:
                conversation = self.store.conversation(cid)
                state, current = conversation.state, conversation.locale
                judging = conversation.pending
            # "agent thanks" asks for a person: that wins, as below.
            thanks = not to_person and not asks_for_person(text) and says_thanks(text)
            move = Move.THANK if thanks else Move.WRITE
            to = next_state(state, move, role=Role.CUSTOMER, conversation_id=cid)
            reopens = state is State.RESOLVED and to is not State.RESOLVED
            events: list[EventData] = [Reopened()] if reopens else []
            if locale is not None and current is None:
                events.append(LocaleSet(locale=locale, chosen_by_customer=True))
            elif current is None and (cid is None or self.store.latest_question(cid) is None):
                # English, the default, needs no event: most conversations carry none.
                if (detected := detect_locale(text)) != DEFAULT_LOCALE:
                    events.append(LocaleSet(locale=detected))
            elif (
                cid is not None
                and locale is None  # A chat passes the language its customer picked.
                and not thanks  # "thank you so much" is courtesy, not the language they read.
                and not asks_for_person(text)
                and (switched := self._switched_locale(cid, text, current)) is not None
            ):
                events.append(LocaleSet(locale=switched))
            pending, then = bot_judges(state), list[EventData]()
            escalation, as_question = None, True
            if to_person and _allowed(to, Move.ESCALATE):
                pending, escalation = False, Escalation(reason=Reason.CUSTOMER_ASKED)
            elif pending and asks_for_person(text):
                # Asks nothing: the question the person takes up is the one asked before it.
                pending, escalation, as_question = False, self._handoff(cid), False
            elif pending and thanks:
                # Nothing to answer, and "no-passages" would send a customer who only said
                # thanks to the queue: a courteous word back instead. After a resolution, the
                # conversation stays as the agent left it (no one's queue, the rating still due).
                pending, then = False, [Thanked(resolved=to is State.RESOLVED)]
            elif pending and cid is not None:
                speaks = next((e.locale for e in events if isinstance(e, LocaleSet)), current)
                earlier = self._earlier_answer(cid, text, locale=speaks or DEFAULT_LOCALE)
                if earlier is not None:
                    # The same answer again would not help: offer a person instead, and leave
                    # the choice to the customer (the conversation stays with the bot).
                    offer = PersonOffered(
                        answer_entry=earlier.id,
                        not_helpful=earlier.feedback is Feedback.NOT_HELPFUL,
                    )
                    pending, then = False, [offer]
                elif judging and self._being_judged(cid, text):
                    # Asked again while the bot still judges it (a slow Valen, an impatient
                    # customer): one answer serves both, where each got the same answer.
                    pending = False
            conversation, message = self.store.add_customer_message(
                cid, text, expect=state, to=to, pending=pending, events=events, then=then,
                escalation=escalation, as_question=as_question,
            )  # fmt: skip
            return AskResult(conversation=conversation, message=message)

        return self._settle(attempt)

    def _switched_locale(
        self, conversation_id: int, text: str, current: Locale | None
    ) -> Locale | None:
        """The language a later message switches its conversation to, or None: the one it is
        clearly written in, when that is not the conversation's (`current`, None for English)
        and the customer did not choose the conversation's themselves. A question searched in
        the passages of another language found none ("电动车电池能骑多远？" in an English
        conversation: "in no passage", a content gap, while a Chinese passage answers it)."""
        written = written_clearly_in(text)
        if written is None or written == (current or DEFAULT_LOCALE):
            return None
        if current is None:
            return written  # No `locale-set` event at all (English): nothing was chosen.
        return None if self._chosen_by_customer(conversation_id) else written

    def _chosen_by_customer(self, conversation_id: int) -> bool:
        """Whether the conversation's latest `locale-set` event is the customer's choice. Read
        a page at a time, newest first: the event is often the log's first entry, but this is
        asked only of a message in another language than the conversation's."""
        before: int | None = None
        while True:
            page = self.store.entries(conversation_id, before_id=before, limit=LOCALE_PAGE)
            for entry in reversed(page):
                if isinstance(entry, ChatEvent) and isinstance(entry.event, LocaleSet):
                    return entry.event.chosen_by_customer
            if len(page) < LOCALE_PAGE:
                return False
            before = page[0].id

    def set_locale(
        self, conversation_id: int, locale: Locale, *, chosen: bool = True
    ) -> Conversation:
        """The language of the customer's chat: a `locale-set` event in any state; nothing is
        written if it is the one in force already. `chosen`: the customer picked it (else it is
        the one their terminal or browser asked for, kept with a conversation that starts with
        no message to tell its language)."""

        def attempt() -> Conversation:
            conversation = self.store.conversation(conversation_id)
            if conversation.locale == locale:
                return conversation
            event = LocaleSet(locale=locale, chosen_by_customer=chosen)
            self.store.add_event(conversation_id, event, expect=conversation.state)
            return self.store.conversation(conversation_id)

        return self._settle(attempt)

    def _being_judged(self, conversation_id: int, text: str) -> bool:
        """Whether a question in this conversation the bot has not decided yet is the same as
        `text` (compared as `question_key`s). Only the newest entries are read: a question waits
        for the bot seconds, not pages."""
        key = question_key(text)
        return bool(key) and any(
            isinstance(entry, ChatMessage) and entry.pending and question_key(entry.text) == key
            for entry in self.store.entries(conversation_id, limit=JUDGED_LOOKBACK)
        )

    def _earlier_answer(
        self, conversation_id: int, text: str, *, locale: Locale
    ) -> ChatMessage | None:
        """The bot's latest answer, in this conversation, to the same question as `text`
        (compared as `question_key`s), if it answered one from a passage that still reads as it
        did in the knowledge base the conversation's `locale` is answered from (else the bot
        judges the question again: an editor changed what the help center says)."""
        key = question_key(text)
        same = {
            stored.id: stored.decision.answer
            for stored in self.store.decisions(conversation_id)
            if stored.decision.answer is not None and question_key(stored.decision.question) == key
        }
        if not key or not same:
            return None
        # Only now the log: a decision answered only if its answer reached the customer (a
        # person may have had the conversation by then).
        for entry in reversed(self.store.entries(conversation_id)):
            if isinstance(entry, ChatMessage) and entry.author is Author.BOT:
                answer = same.get(entry.decision_id) if entry.decision_id is not None else None
                if answer is not None:
                    return entry if self._still_says(locale, answer) else None
        return None

    def _still_says(self, locale: Locale, answer: Answer) -> bool:
        """Whether the passage `answer` came from is unchanged (see `PassageCheck`)."""
        if self.passage_check is None:
            return True
        try:
            return self.passage_check(locale, answer)
        except Exception:  # noqa: BLE001 - the customer's message is stored whatever happens.
            # A check is not to raise; one that does leaves the question to the bot.
            return False

    def talk_to_person(self, conversation_id: int | None) -> HandoffResult:
        """Hand the conversation to a person (reason `customer-asked`), whatever the bot is
        doing; `escalated` is False when a person already has it. None: a customer who asks for
        a person before writing anything; the conversation starts in the same write."""

        def attempt() -> HandoffResult:
            state = State.BOT
            if conversation_id is not None:
                conversation = self.store.conversation(conversation_id)
                state = conversation.state
                try:
                    next_state(state, Move.ESCALATE, role=Role.CUSTOMER)
                except Refused:
                    return HandoffResult(conversation=conversation, escalated=False)
            escalation = self._handoff(conversation_id)
            escalated = self.store.escalate(conversation_id, expect=state, escalation=escalation)
            return HandoffResult(conversation=escalated, escalated=True)

        return self._settle(attempt)

    def _handoff(self, conversation_id: int | None) -> Escalation:
        """The escalation of a customer who asks for a person: with their latest real question
        as the one the person takes up (and the top probability of its latest decision), walking
        back past messages that only asked for a person or only said thanks ("thanks!", then
        "talk to a person", after an answer); without one if there is none (those would become
        content gaps)."""
        latest = None if conversation_id is None else self._asked_last(conversation_id)
        if latest is None:
            return Escalation(reason=Reason.CUSTOMER_ASKED)
        question, top = latest
        return Escalation(
            reason=Reason.CUSTOMER_ASKED,
            top_probability=top,
            question_entry=question.id,
            question=question.text,
        )

    def _asked_last(self, conversation_id: int) -> tuple[ChatMessage, float | None] | None:
        """The customer's newest message that is a real question, neither a request for a person
        (`asks_for_person`) nor a thank-you (`says_thanks`), with the top probability of its
        latest decision; None if there is none. Read a page of their messages at a time, newest
        first: a long conversation is not read whole for the question near its end."""
        before: int | None = None
        while True:
            page = self.store.latest_questions(conversation_id, before_id=before, limit=ASKED_PAGE)
            for message, top in page:
                if not asks_for_person(message.text) and not says_thanks(message.text):
                    return message, top
            if len(page) < ASKED_PAGE:
                return None
            before = page[-1][0].id

    def feedback(self, conversation_id: int, *, entry_id: int, value: Feedback) -> FeedbackResult:
        """The customer's verdict on the conversation's latest bot answer, once. "Not helpful"
        hands the conversation to a person (reason `not-helpful`) unless one has it already."""

        def attempt() -> FeedbackResult:
            conversation = self.store.conversation(conversation_id)
            latest = self.store.latest_answer(conversation_id)
            if latest is None or latest.id != entry_id:
                raise FeedbackRefused("feedback applies to the latest answer only")
            if latest.feedback is not None:
                raise FeedbackRefused("this answer has feedback already")
            escalation = None
            if value is Feedback.NOT_HELPFUL and _allowed(conversation.state, Move.ESCALATE):
                escalation = self._not_helpful(latest)
            try:
                updated, message = self.store.record_feedback(
                    conversation_id,
                    entry_id=entry_id,
                    value=value,
                    expect=conversation.state,
                    escalation=escalation,
                )
            except NotTheLatestAnswer as error:  # A newer answer or a verdict landed meanwhile.
                raise FeedbackRefused(str(error)) from None
            return FeedbackResult(
                conversation=updated, message=message, escalated=escalation is not None
            )

        return self._settle(attempt)

    def _not_helpful(self, answer: ChatMessage) -> Escalation:
        """The question the unhelpful answer was for becomes the escalation's question."""
        if answer.decision_id is None:
            return Escalation(reason=Reason.NOT_HELPFUL)
        stored = self.store.decision(answer.decision_id)
        return Escalation(
            reason=Reason.NOT_HELPFUL,
            top_probability=stored.decision.top_probability,
            question_entry=stored.message_id,
            question=stored.decision.question,
        )

    def rating_due(self, conversation_id: int) -> ChatEvent | None:
        """The `resolved` event the customer may still rate: the conversation is resolved and
        this resolution has no rating yet. None otherwise."""
        conversation = self.store.conversation(conversation_id)
        if conversation.state is not State.RESOLVED:
            return None
        resolved, rated = self._resolution(conversation_id)
        return None if rated else resolved

    def rate(self, conversation_id: int, *, rating: int) -> ChatEvent:
        """The customer's 1–5 rating of how a person resolved the conversation: once per
        resolution, while it stays resolved."""
        if isinstance(rating, bool) or rating not in RATINGS:
            raise HelpdeskError(
                f"a rating is a whole number from {RATINGS.start} to {RATINGS.stop - 1}"
            )

        def attempt() -> ChatEvent:
            conversation = self.store.conversation(conversation_id)
            if conversation.state is not State.RESOLVED:
                raise RatingRefused("only a resolved conversation can be rated")
            resolved, rated = self._resolution(conversation_id)
            if resolved is None or not isinstance(resolved.event, Resolved):
                raise RatingRefused("only a resolved conversation can be rated")
            if rated:
                raise RatingRefused("this conversation is rated already")
            event = Rated(rating=rating, resolved_entry=resolved.id, agent=resolved.event.agent)
            return self.store.add_event(conversation_id, event, expect=State.RESOLVED)

        return self._settle(attempt)

    def _resolution(self, conversation_id: int) -> tuple[ChatEvent | None, bool]:
        """The latest `resolved` event, and whether a rating of it follows it."""
        rated: set[int] = set()
        before: int | None = None
        while True:  # Newest first, a page at a time: the resolution is almost always near.
            entries = self.store.entries(conversation_id, before_id=before, limit=RESOLUTION_PAGE)
            for entry in reversed(entries):
                if not isinstance(entry, ChatEvent):
                    continue
                if isinstance(entry.event, Rated):
                    rated.add(entry.event.resolved_entry)
                elif isinstance(entry.event, Resolved):
                    return entry, entry.id in rated
            if len(entries) < RESOLUTION_PAGE:
                return None, False
            before = entries[0].id

    # -- the agent's side -------------------------------------------------------------------------

    def claim(self, conversation_id: int, *, agent: str) -> ClaimResult:
        """Take a waiting conversation. Of agents racing for it, exactly one wins; the others get
        `won=False` and the conversation as the winner left it."""
        conversation = self.store.conversation(conversation_id)
        try:
            next_state(conversation.state, Move.CLAIM, role=Role.AGENT)
        except Refused:
            return ClaimResult(won=False, conversation=conversation)
        return self.store.claim(conversation_id, agent=agent, expect=conversation.state)

    def reply(
        self, conversation_id: int, *, agent: str, text: str, passage: Passage | None = None
    ) -> ChatMessage:
        """The owner's reply to the customer: typed text, or a knowledge-base passage."""
        if is_blank(text):
            raise HelpdeskError("a reply needs some text")
        if len(text) > MAX_REPLY_CHARS:
            raise HelpdeskError(f"a reply is longer than {MAX_REPLY_CHARS} characters")

        def attempt() -> ChatMessage:
            conversation = self.store.conversation(conversation_id)
            next_state(
                conversation.state,
                Move.REPLY,
                role=Role.AGENT,
                agent=agent,
                owner=conversation.agent,
                conversation_id=conversation_id,
            )
            return self.store.reply(
                conversation_id,
                agent=agent,
                expect=conversation.state,
                text=text,
                passage_id=None if passage is None else passage.id,
                passage_title=None if passage is None else (passage.title or None),
            )

        return self._settle(attempt)

    def resolve(self, conversation_id: int, *, agent: str) -> Conversation:
        """Close a conversation the agent owns (they stay on record as who closed it).

        `WroteMeanwhile` if the customer wrote after what the agent has read (their console's
        read marker): closed then, the message would be answered by nobody, and the customer
        asked to rate a conversation that ignored it."""
        try:
            return self._let_go(
                conversation_id, agent, Move.RESOLVE, Resolved(agent=agent), seen=True
            )
        except UnseenMessage:
            raise WroteMeanwhile(
                "The customer has just written again: read it, then resolve"
            ) from None

    def hand_back(self, conversation_id: int, *, agent: str) -> Conversation:
        """Give a conversation the agent owns back to the bot; the bot answers the customer's
        latest question since the last reply (`question_for_bot`), if there is one, else waits
        for their next message. `WroteMeanwhile` if the customer wrote after what the agent has
        read, as for `resolve`: the console quotes the message the bot will answer, and one that
        came after the quote went to the bot unseen."""
        try:
            return self._let_go(
                conversation_id, agent, Move.HAND_BACK, HandedBack(agent=agent), seen=True
            )
        except UnseenMessage:
            raise WroteMeanwhile(
                "The customer has just written again: read it, then hand back",
                move=Move.HAND_BACK,
            ) from None

    def release(self, conversation_id: int, *, agent: str) -> Conversation:
        """Put a conversation the agent owns back in the queue for someone else."""
        return self._let_go(conversation_id, agent, Move.RELEASE, Released(agent=agent))

    def take_back(self, conversation_id: int, *, agent: str, owner: str) -> Conversation:
        """Put a colleague's claimed conversation back in the queue: one who quit keeping their
        claims (or went home) left its customer told a person was helping, and only they could
        let it go. `owner` is who held it when `agent` asked: a claim that changed hands since is
        refused, never taken from someone else."""
        if owner == agent:
            return self.release(conversation_id, agent=agent)

        def attempt() -> Conversation:
            conversation = self.store.conversation(conversation_id)
            if conversation.state is State.CLAIMED and conversation.agent != owner:
                raise Refused(
                    f"conversation {conversation_id} is claimed by {conversation.agent} now",
                    state=conversation.state,
                    move=Move.RELEASE,
                )
            to = next_state(conversation.state, Move.RELEASE, role=Role.AGENT, agent=owner,
                            owner=conversation.agent, conversation_id=conversation_id)  # fmt: skip
            return self.store.release(
                conversation_id, agent=owner, expect=conversation.state, to=to,
                event=Released(agent=owner, by=agent),
            )  # fmt: skip

        return self._settle(attempt)

    def release_claims(self, agent: str, *, only: Collection[int] | None = None) -> list[int]:
        """Put every conversation `agent` owns back in the queue (an agent who left), or those
        of them in `only` (the ones one of their consoles took, as it closes); returns the ones
        released."""
        released = []
        for conversation_id in self.store.claimed_by(agent):
            if only is not None and conversation_id not in only:
                continue
            try:
                self.release(conversation_id, agent=agent)
            except Refused:
                continue  # Resolved or handed back meanwhile.
            released.append(conversation_id)
        return released

    def agent_seen(self, agent: str, *, session: str | None = None) -> None:
        """`agent`'s console is open: called as it opens and every `PRESENCE_EVERY_S` while it
        stays open. Ending a session frees nothing (a reload ends one too): an agent whose
        consoles all stop saying so is away, and after `release_after_s` their claims go back to
        the queue (`release_away_claims`). `session` says which of the agent's consoles this is
        (an id it made as it opened), so that one closing can tell whether another is still open
        (`other_sessions`); consoles not seen for `AWAY_AFTER_S` are forgotten meanwhile."""
        if not agent.strip():
            raise HelpdeskError("presence needs the agent's name")
        self.store.agent_seen(agent, session=session, forget_s=AWAY_AFTER_S)

    def other_sessions(
        self, agent: str, *, session: str, excluding_sign_in: str | None = None
    ) -> int:
        """How many consoles of `agent` besides `session` are open: seen within `AWAY_AFTER_S`
        (by the store's clock, as the team view's "away" is). A console of a helpdesk from before
        sessions were kept is not counted, nor, with `excluding_sign_in`, one of that browser
        sign-in (a session named "tag.random", see `AsyncDesk.session`): signing out ends them."""
        now = self.store.now()
        same_sign_in = None if excluding_sign_in is None else f"{excluding_sign_in}."
        return sum(
            1
            for other, seen in self.store.sessions_seen(agent).items()
            if other != session
            and (same_sign_in is None or not other.startswith(same_sign_in))
            and (now - seen).total_seconds() <= AWAY_AFTER_S
        )

    def session_ended(self, agent: str, *, session: str) -> None:
        """That console of `agent` is closing (quit, signed out): not counted as open from now."""
        self.store.session_ended(agent, session=session)

    def still_claimed(self, agent: str, claims: Mapping[int, datetime | None]) -> list[int]:
        """Those of `claims` (conversation id: when it was claimed) that `agent` holds still by
        that same claim, in order: not let go and claimed again since (by another console of
        theirs, whose claim it now is)."""
        held = []
        for conversation_id, claimed_at in sorted(claims.items()):
            try:
                conversation = self.store.conversation(conversation_id)
            except ConversationNotFound:
                continue
            if (
                conversation.state is State.CLAIMED
                and conversation.agent == agent
                and conversation.claimed_at == claimed_at
            ):
                held.append(conversation_id)
        return held

    def agents_seen(self) -> dict[str, datetime]:
        """When each agent ever seen was last seen: past `AWAY_AFTER_S`, they are away."""
        return self.store.agents_seen()

    def release_away_claims(self, *, here: str | None = None) -> list[int]:
        """Put back in the queue the claims of agents whose newest sighting this process has
        watched stay the same for longer than `release_after_s` (by its own clock; the store
        also checks the sighting's age by its clock), each as its owner's release (the
        customer is told the agent stepped away); returns the ones released. `here`: the agent
        of the console asking, whose claims are never released by it (a process waking from a
        sleep longer than the grace saw no sighting of them meanwhile: its own had stopped).
        An agent never seen (claims from the command line, or from before presence was kept)
        keeps theirs.

        Measured here rather than by the sighting's time alone: a console on a host whose clock
        runs ahead of the agent's read a fresh sighting as old, and released the claims of an
        agent at their desk. A process that starts watching waits the whole grace first.

        Every open console runs this on its presence tick, so two may race for one claim: each
        release is conditional on the claim, its owner and the sighting watched, so one lands and
        the other's is stale, skipped, with one `released` event between them."""
        if self.release_after_s <= 0:
            return []
        now = self.store.now()
        for agent, seen in self.store.agents_seen().items():
            watched = self._sightings.get(agent)
            if watched is None or watched[0] != seen:
                self._sightings[agent] = (seen, now)
        gone = {
            agent: seen
            for agent, (seen, since) in self._sightings.items()
            if agent != here and (now - since).total_seconds() > self.release_after_s
        }
        if not gone:
            return []
        released = []
        for conversation_id, owner in self.store.away_claims(away_s=self.release_after_s):
            if owner not in gone:
                continue  # Seen again lately, by this process's clock.
            try:
                to = next_state(State.CLAIMED, Move.RELEASE, role=Role.AGENT, agent=owner,
                                owner=owner, conversation_id=conversation_id)  # fmt: skip
                self.store.release(
                    conversation_id, agent=owner, expect=State.CLAIMED, to=to,
                    event=Released(agent=owner, away=True), away_s=self.release_after_s,
                    last_seen=gone[owner],
                )  # fmt: skip
            except StaleState:
                continue  # Released by another console, moved meanwhile, or the agent is back.
            released.append(conversation_id)
        return released

    def reopen(self, conversation_id: int, *, agent: str) -> ClaimResult:
        """Take a resolved conversation up again as its owner, to follow up with the customer.
        `Refused` unless it is resolved; `won=False` if it moved meanwhile (the customer wrote
        again, or another agent reopened it first)."""
        conversation = self.store.conversation(conversation_id)
        next_state(conversation.state, Move.REOPEN, role=Role.AGENT,
                   conversation_id=conversation_id)  # fmt: skip
        return self.store.claim(conversation_id, agent=agent, expect=State.RESOLVED)

    def take_next(self, *, agent: str) -> ClaimResult | None:
        """Claim the conversation that has waited longest, for an agent working the queue in
        order; None when nobody waits. One another agent takes first is passed over for the
        next, so two agents taking at once get two conversations."""
        while ids := self.store.longest_waiting(TAKE_BATCH):
            for conversation_id in ids:
                result = self.claim(conversation_id, agent=agent)
                if result.won:
                    return result
        return None

    def claimed_by(self, agent: str) -> list[int]:
        """The conversations `agent` holds a claim on."""
        return self.store.claimed_by(agent)

    def add_note(self, conversation_id: int, *, agent: str, text: str) -> ChatEvent:
        """An internal note on the conversation, for agents only: any agent, in any state."""
        if is_blank(text):
            raise HelpdeskError("a note needs some text")
        if len(text) > MAX_NOTE_CHARS:
            raise HelpdeskError(f"a note is longer than {MAX_NOTE_CHARS} characters")
        if not agent.strip():
            raise HelpdeskError("a note needs the agent's name")
        return self.store.add_note(conversation_id, agent=agent, text=text)

    def set_typing(self, conversation_id: int, *, author: Author, typing: bool = True) -> None:
        """`author` is typing in the conversation (for the next `TYPING_S`), or has stopped: the
        other side shows it. Only a customer or an agent types."""
        if author is Author.BOT:
            raise HelpdeskError("the bot does not type")
        self.store.set_typing(conversation_id, author=author, seconds=TYPING_S if typing else None)

    def typing(self, conversation_id: int) -> dict[Author, datetime]:
        """Who is typing in the conversation now, and until when."""
        return self.store.typing(conversation_id)

    def mark_read(self, conversation_id: int, *, agent: str, entry_id: int) -> None:
        """`agent` has seen the conversation up to `entry_id` (the marker never moves back)."""
        self.store.mark_read(conversation_id, agent=agent, entry_id=entry_id)

    def _let_go(
        self, conversation_id: int, agent: str, move: Move, event: EventData, *, seen: bool = False
    ) -> Conversation:
        def attempt() -> Conversation:
            conversation = self.store.conversation(conversation_id)
            to = next_state(
                conversation.state,
                move,
                role=Role.AGENT,
                agent=agent,
                owner=conversation.agent,
                conversation_id=conversation_id,
            )
            # Back to the bot, the question it answers, chosen from the log as read now: the
            # store refuses it (`StaleState`, and this reads again) if the customer writes since.
            question = self._bot_question(conversation_id) if to is State.BOT else None
            return self.store.release(
                conversation_id, agent=agent, expect=conversation.state, to=to, event=event,
                seen=seen, question=question,
            )  # fmt: skip

        return self._settle(attempt)

    def question_for_bot(self, conversation_id: int) -> ChatMessage | None:
        """The customer message the bot would answer if the conversation were handed back now
        (see the function `question_for_bot`); None: none, it would wait for the next one."""
        entries, _ = self._since_reply(conversation_id)
        return question_for_bot(entries)

    def _bot_question(self, conversation_id: int) -> BotQuestion:
        entries, read_to = self._since_reply(conversation_id)
        chosen = question_for_bot(entries)
        return BotQuestion(entry=None if chosen is None else chosen.id, read_to=read_to)

    def _since_reply(self, conversation_id: int) -> tuple[list[Entry], int]:
        """The log from its newest reply (a bot answer or an agent's message) on, the whole log
        if it has none; and the id of its newest entry (0: it is empty). Read a page at a time,
        newest first: a long conversation is not read whole for its end."""
        read: list[Entry] = []
        before: int | None = None
        while True:
            page = self.store.entries(conversation_id, before_id=before, limit=REPLY_PAGE)
            read[:0] = page
            if len(page) < REPLY_PAGE or any(_is_reply(entry) for entry in page):
                return read, read[-1].id if read else 0
            before = page[0].id

    # -- the bot's side ---------------------------------------------------------------------------

    def take(self, worker: str, *, limit: int, lease_s: float) -> Leased:
        """Up to `limit` questions for `worker` to judge, each held for `lease_s` seconds.

        A question taken more than `max_attempts` times has killed the workers that took it (or
        their hosts); it goes to a person instead of being judged again, and is listed apart.
        """
        leased = self.store.lease_questions(worker=worker, limit=limit, lease_s=lease_s)
        fresh = []
        failed = []
        for question in leased:
            if question.attempts > self.max_attempts:
                failed.append(
                    (question, self.fail_question(worker, question, reason=Reason.BOT_FAILED))
                )
            else:
                fresh.append(question)
        return Leased(questions=fresh, failed=failed)

    def lease(self, worker: str, *, limit: int, lease_s: float) -> list[PendingQuestion]:
        """`take`'s questions to judge."""
        return self.take(worker, limit=limit, lease_s=lease_s).questions

    def extend_leases(self, worker: str, question_ids: list[int], *, lease_s: float) -> list[int]:
        """Heartbeat: keep judging; returns the questions still held."""
        return self.store.extend_leases(worker=worker, question_ids=question_ids, lease_s=lease_s)

    def release_leases(self, worker: str, question_ids: list[int]) -> int:
        """A worker stopping gives back what it has not judged, for another worker to take."""
        return self.store.release_leases(worker=worker, question_ids=question_ids)

    def next_lease_expiry(self) -> float | None:
        return self.store.next_lease_expiry()

    def bot_holds(self) -> int:
        """Questions a bot holds now (its lease not run out): with others waiting past
        `bot_stalled_after`, the bots are busy rather than absent."""
        return self.store.bot_holds()

    def bot_backlog(self) -> tuple[int, float | None]:
        """Questions no bot holds now, and the seconds the oldest of them has waited: past
        `bot_stalled_after` the Valen budget, no bot is answering."""
        return self.store.bot_backlog()

    def record_decision(
        self, worker: str, question: PendingQuestion, decision: Decision
    ) -> DecisionResult:
        """Act on the engine's decision: the bot's answer, or an escalation with the decision's
        reason. If a person has the conversation by now (claimed, or resolved), the decision is
        kept for them, unsaid. Waiting in the queue, nobody owns it yet: an answer to another
        question than the one it waits with (its `question_entry`) is said as usual, and it
        stays waiting; a decision on that question, or one that would escalate, is kept.
        `lost` when the lease passed to another worker: nothing is stored, so no question is
        ever answered twice."""

        def attempt() -> DecisionResult:
            conversation = self.store.conversation(question.conversation_id)
            state = conversation.state
            answer, escalation = False, None
            if (
                state is State.WAITING
                and decision.answer is not None
                and conversation.question_entry != question.id
            ):
                # Questions asked together, judged in any order: the first escalated, and the
                # customer waiting for a person would hear nothing of those the bot can answer.
                answer = True
            elif bot_answers(state):
                if decision.answer is not None:
                    next_state(state, Move.ANSWER, role=Role.BOT)
                    answer = True
                else:
                    next_state(state, Move.ESCALATE, role=Role.BOT)
                    escalation = Escalation(
                        reason=decision.reason or Reason.LOW_SCORE,
                        top_probability=decision.top_probability,
                        question_entry=question.id,
                        question=decision.question,
                    )
            return self.store.record_decision(
                question.id,
                worker=worker,
                expect=state,
                decision=decision,
                answer=answer,
                escalation=escalation,
            )

        try:
            return self._settle(attempt)
        except LeaseLost:
            return DecisionResult(outcome="lost")

    def fail_question(
        self, worker: str, question: PendingQuestion, *, reason: Reason
    ) -> DecisionResult:
        """No decision could be made (the engine failed, or workers kept dying on it): a person
        takes the question, never the customer left waiting on nothing."""

        def attempt() -> DecisionResult:
            state = self.store.conversation(question.conversation_id).state
            escalation = None
            if bot_answers(state):
                next_state(state, Move.ESCALATE, role=Role.BOT)
                escalation = Escalation(
                    reason=reason, question_entry=question.id, question=question.text
                )
            return self.store.record_decision(
                question.id,
                worker=worker,
                expect=state,
                decision=None,
                answer=False,
                escalation=escalation,
            )

        try:
            return self._settle(attempt)
        except LeaseLost:
            return DecisionResult(outcome="lost")

    # -- content gaps -----------------------------------------------------------------------------

    def content_gaps(self, *, include_handled: bool = True, limit: int = 200) -> list[ContentGap]:
        """One per question, as `stats` counts them (the store's `content_gaps`)."""
        return self.store.content_gaps(include_handled=include_handled, limit=limit)

    def mark_gap_handled(self, gap_id: int, *, passage_id: str) -> None:
        """Record that passage `passage_id` was written to fill this gap: every escalation of its
        question, however often and in whatever case, spacing or punctuation it was asked."""
        self.store.mark_gap_handled(gap_id, passage_id=passage_id)

    # -- reading ----------------------------------------------------------------------------------

    def conversation(self, conversation_id: int) -> Conversation:
        return self.store.conversation(conversation_id)

    def conversations(
        self,
        *,
        state: State | None = None,
        after_id: int = 0,
        limit: int = 100,
        include_empty: bool = True,
    ) -> list[Conversation]:
        """Keyset pages of conversations; without `include_empty`, only those anything was
        written in (what a person listing them wants: not every page a visitor only looked at)."""
        return self.store.conversations(
            state=state, after_id=after_id, limit=limit, include_empty=include_empty
        )

    def page(self, conversation_id: int, *, before_id: int | None = None, limit: int = 100) -> Page:
        """The newest `limit` entries (before `before_id`), and how many lie before them."""
        entries = self.store.entries(conversation_id, before_id=before_id, limit=limit)
        if not entries:
            return Page(entries=(), earlier=0)
        earlier = self.store.count_entries(
            conversation_id, before_id=entries[0].id, limit=EARLIER_COUNTED + 1
        )
        return Page(
            entries=tuple(entries),
            earlier=min(earlier, EARLIER_COUNTED),
            earlier_exact=earlier <= EARLIER_COUNTED,
        )

    def entries_after(self, conversation_id: int, after_id: int) -> list[Entry]:
        """What is new in the log since the entry `after_id`."""
        return self.store.entries(conversation_id, after_id=after_id)

    def entries(self, conversation_id: int) -> list[Entry]:
        """The whole log, for exports and scripts; screens read pages."""
        return self.store.entries(conversation_id)

    def entries_of(self, conversation_ids: Sequence[int]) -> dict[int, list[Entry]]:
        """The whole logs of a page of conversations, read together (an export's)."""
        return self.store.entries_of(conversation_ids)

    def messages(self, conversation_id: int) -> list[ChatMessage]:
        """The messages of the log alone."""
        return [e for e in self.store.entries(conversation_id) if isinstance(e, ChatMessage)]

    def decision(self, decision_id: int) -> StoredDecision:
        return self.store.decision(decision_id)

    def decisions(self, conversation_id: int) -> list[StoredDecision]:
        return self.store.decisions(conversation_id)

    def decisions_of(self, conversation_ids: Sequence[int]) -> dict[int, list[StoredDecision]]:
        return self.store.decisions_of(conversation_ids)

    def latest_decision(self, conversation_id: int) -> StoredDecision | None:
        return self.store.latest_decision(conversation_id)

    def decisions_since(self, conversation_id: int, message_id: int) -> list[StoredDecision]:
        """The decisions on the conversation's customer questions from `message_id` on, oldest
        first: for one waiting for a person, those on its `question_entry` and after."""
        return self.store.decisions_since(conversation_id, message_id)

    def queue(self, *, agent: str | None = None) -> list[QueueItem]:
        return self.store.queue(agent=agent)

    def waiting_ahead(self, conversation_id: int) -> int | None:
        """How many customers wait ahead of this conversation's (None: it is not waiting)."""
        return self.store.waiting_ahead(conversation_id)

    def queue_items(self, conversation_ids: list[int], *, agent: str | None) -> list[QueueItem]:
        """The queue's items among `conversation_ids` (the others have left it)."""
        return self.store.queue_items(conversation_ids, agent=agent)

    def claims(self) -> list[QueueItem]:
        """Every agent's claims, by agent: the team view."""
        return self.store.claims()

    def search(self, text: str, *, state: State | None = None, limit: int = 50) -> list[SearchHit]:
        """Conversations whose messages contain `text` (ignoring case), newest first; `#12` or
        `12` also finds conversation 12 itself, first, if anything was written in it."""
        number = searched_number(text)
        if number is None:
            return self.store.search(text.strip(), state=state, limit=limit)
        # The number standing alone in the words, not inside another.
        hits = self.store.search(number, state=state, limit=limit, number=True)
        if len(number) < 19:
            try:
                found = self.store.conversation(int(number))
            except ConversationNotFound:
                return hits
            # One nobody wrote in (a browser visitor who only looked) is nothing to find.
            if found.last_entry and (state is None or found.state is state):
                latest = self.store.latest_question(found.id)
                exact = SearchHit(
                    conversation_id=found.id,
                    state=found.state,
                    agent=found.agent,
                    updated_at=found.updated_at,
                    entry_id=0 if latest is None else latest[0].id,
                    text="" if latest is None else latest[0].text,
                )
                hits = [exact, *(h for h in hits if h.conversation_id != found.id)][:limit]
        return hits

    def stats(self, *, since: datetime | None = None, threshold: float | None = None) -> DeskStats:
        """How the desk is doing since `since` (None: ever). `threshold`, the answer threshold in
        force, is added to the thresholds `would_answer` compares and recorded with the figures,
        so a chart can mark it."""
        thresholds = sorted({*STAT_THRESHOLDS, *([] if threshold is None else [threshold])})
        figures = self.store.stats(since, thresholds=thresholds)
        return figures.model_copy(update={"threshold": threshold})

    def last_entry_id(self) -> int:
        """Where a reader of `changes` starts: the newest log entry now."""
        return self.store.last_entry_id()

    def changes(self, *, after: int) -> Changes:
        """Which conversations have log entries after the cursor `after`: a screen can redraw
        only those."""
        return self.store.changes(after=after)


def question_key(text: str) -> str:
    """What two wordings of one question share: its words, case-folded and compatibility-
    normalised, so "Can I get a REFUND?" and "can i get a refund" are the same question."""
    words = re.findall(r"\w+", unicodedata.normalize("NFKC", text).casefold())
    return " ".join(words)


def _squeezed(words: Sequence[str]) -> frozenset[str]:
    """`words`, each without its spaces, as a message is compared (`says_thanks`)."""
    return frozenset(word.replace(" ", "") for word in words)


# What a request for a person is made of, in order (see `asks_for_person`): a greeting, a
# "please", then who they want (alone, after "talk to", after "I want"), then "please", "thanks".
_GREETINGS = ("hi", "hello", "hey", "你好", "您好")
_PLEASE = ("please", "pls", "plz", "kindly", "请", "麻烦", "麻烦你", "帮我", "请帮我", "给我")
_WISH = (
    "i want to", "i wanna", "i need to", "i would like to", "id like to", "i d like to", "can i",
    "could i", "may i", "can i please", "let me", "i must", "i have to",
)  # fmt: skip
_TALK = ("talk to", "talk with", "speak to", "speak with", "chat with", "chat to")
_HAVE = (
    "i want", "i need", "i would like", "id like", "i d like", "want", "need", "get me", "give me",
    "find me", "connect me to", "connect me with", "transfer me to", "put me through to",
    "can i have", "can i get", "could i have", "could i get", "may i have", "take me to",
)  # fmt: skip
_SOMEONE = (
    "person", "human", "human being", "real person", "real human", "live person", "live human",
    "live agent", "agent", "human agent", "real agent", "support agent", "live support",
    "human support", "operator", "representative", "customer service", "customer support",
    "customer service agent", "customer service representative", "someone real", "real one",
)  # fmt: skip
"""Who a customer asks for with these words alone ("agent", "a human please")."""
_ANYONE = (
    *_SOMEONE, "someone", "somebody", "anyone", "anybody", "rep", "support", "staff",
    "member of staff", "support team", "manager", "supervisor", "someone from support",
)  # fmt: skip
"""Who a customer asks to talk to, or to have ("speak to someone", "get me a manager")."""
_ARTICLES = ("an", "a", "the", "your", "my")
_AFTER = (
    "please", "pls", "plz", "now", "right now", "thanks", "thank you", "thx", "asap", "already",
    "吧", "谢谢", "可以吗", "好吗", "好不好", "呢", "啊", "呀", "一下",
)  # fmt: skip
_ZH_ASK = ("我要", "我想", "我想要", "我需要", "要", "想", "需要")
_ZH_TO = ("转", "转接", "转到", "转给", "找", "联系", "接", "呼叫", "换", "叫")
_ZH_SOMEONE = (
    "人工", "人工客服", "人工服务", "人工坐席", "真人", "真人客服", "活人", "客服", "客服人员",
    "在线客服", "工作人员",
)  # fmt: skip
_Part = tuple[frozenset[str], bool, bool]
"""One step of a request for a person: its words (without their spaces), whether it may be left
out, and whether it may repeat."""


def _part(words: Sequence[str], *, optional: bool = False, repeats: bool = False) -> _Part:
    return _squeezed(words), optional, repeats


_PERSON_REQUEST: tuple[tuple[_Part, ...], ...] = tuple(
    (_part(_GREETINGS, optional=True), _part(_PLEASE, optional=True, repeats=True), *middle,
     _part(_PLEASE, optional=True), _part(_AFTER, optional=True, repeats=True))
    for middle in (
        (_part(_WISH, optional=True), _part(_PLEASE, optional=True), _part(_TALK),
         _part(_ARTICLES, optional=True), _part(_ANYONE)),
        (_part(_HAVE), _part(_ARTICLES, optional=True), _part(_ANYONE)),
        (_part(_ARTICLES, optional=True), _part(_SOMEONE)),
        (_part(_ZH_ASK, optional=True), _part(_ZH_TO, optional=True), _part(_ZH_SOMEONE)),
    )
)  # fmt: skip
"""The ways a request for a person is put together, each a sequence of parts."""


def _made_of(squeezed: str, way: Sequence[_Part]) -> bool:
    """Whether `squeezed` is wholly `way`'s parts, in order. Worked out as the set of positions
    each part can end at, never by trying every way of splitting the text: "请帮我" is "请" and
    "帮我" too, and a regular expression tried the splits of "请帮我"×26 for minutes (any
    customer's message could stall the desk)."""
    at = {0}
    for words, optional, repeats in way:
        reached: set[int] = set(at) if optional else set()
        frontier = at
        while frontier:
            frontier = {
                start + len(word)
                for start in frontier
                for word in words
                if squeezed.startswith(word, start)
            } - reached
            reached |= frontier
            if not repeats:
                break
        at = reached
    return len(squeezed) in at


PERSON_REQUEST_CHARS = 80
"""Longer than this (without spaces and punctuation), a message says more than "a person"."""


def asks_for_person(text: str) -> bool:
    """Whether `text` does nothing but ask for a person: "talk to a person", "a human please",
    "agent", "Can I speak to someone?", "转人工", "人工客服". Case, punctuation and spaces are
    ignored; a question that mentions a person ("Can an agent refund me?", "talk to a person
    about my refund") is a question, for the bot."""
    squeezed = "".join(re.findall(r"\w+", _without_apostrophes(text)))
    return len(squeezed) <= PERSON_REQUEST_CHARS and any(
        _made_of(squeezed, way) for way in _PERSON_REQUEST
    )


def _without_apostrophes(text: str) -> str:
    """`text` compatibility-normalised and case-folded, its apostrophes dropped ("I'd" as "id")."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return folded.replace("'", "").replace("\u2019", "")


# What a message that only thanks, acknowledges or says goodbye is made of (see `says_thanks`):
# any run of these, in any order ("ok great, thank you", "got it, bye", "好的，谢谢"); a word
# repeated ("ok ok", "bye bye", "嗯嗯") is a run too.
_THANK = (
    "thanks", "thank you", "thank u", "thankyou", "thanx", "thnx", "thnks", "thx", "tks", "ty",
    "tysm", "tyvm", "many thanks", "much appreciated", "appreciated", "appreciate it",
    "i appreciate it", "i appreciate that", "cheers", "you are the best", "youre the best",
    "you rock", "you are a star", "youre a star", "great help", "big help",
)  # fmt: skip
_BYE = (
    "bye", "goodbye", "see you", "see ya", "cya", "later",
    "take care", "have a nice day", "have a good day", "have a great day", "have a good one",
    "have a nice weekend", "have a good weekend", "good night", "goodnight", "all the best",
)  # fmt: skip
_ACKNOWLEDGE = (
    "ok", "okay", "okey", "okie", "k", "alright", "all right", "right", "sure",
    "fine", "got it", "gotcha", "i see", "i understand", "understood", "noted", "makes sense",
    "that makes sense", "great", "perfect", "awesome", "excellent", "brilliant", "cool", "nice",
    "good", "very good", "lovely", "wonderful", "super", "amazing", "fantastic", "sounds good",
    "that helps", "that helped", "that was helpful", "helpful", "very helpful", "it works",
    "it worked", "that works", "that worked", "works now", "it works now", "all good", "all set",
    "i am all set", "im all set", "that is all", "thats all", "that is it", "thats it",
    "nothing else", "no more questions", "will do", "i will try that", "ill try that", "solved",
    "problem solved", "oh", "ah", "yay",
)  # fmt: skip
_FOR = (
    "so much", "very much", "a lot", "a ton", "a bunch", "a million", "again", "anyway",
    "for your help", "for the help", "for helping", "for helping me", "for that", "for this",
    "for everything", "for the info", "for the information", "for the answer", "for your time",
    "for the quick reply", "for your quick reply", "for the reply",
)  # fmt: skip
"""What follows a thank-you ("thanks so much", "thank you for your help")."""
_JOINING = ("and", "then", "so", "well", "really", "too", "now", "all", "you", "very", "much")
"""Words between the others ("got it and thanks", "ok then"), never the first."""
_ZH_THANK = (
    "谢谢", "谢谢你", "谢谢您", "谢啦", "谢了", "多谢", "感谢", "感谢你", "感谢您", "非常感谢",
    "太感谢了", "太谢谢了", "万分感谢", "辛苦了", "辛苦", "谢谢帮助", "谢谢帮忙", "谢谢你的帮助",
    "谢谢您的帮助", "麻烦了", "麻烦你了",
)  # fmt: skip
_ZH_BYE = ("再见", "拜拜", "拜", "回头见", "下次见")
_ZH_ACKNOWLEDGE = (
    "好", "好的", "好吧", "好滴", "好嘞", "好哒", "嗯", "哦", "噢", "喔", "行",
    "可以", "可以了", "没问题", "明白", "明白了", "知道了", "懂了", "了解", "了解了", "收到",
    "清楚了", "解决了", "问题解决了", "没事了", "没有了", "没有别的问题了", "没有其他问题了",
    "太好了", "很好", "太棒了",
)  # fmt: skip
_ZH_PARTICLES = ("啊", "呀", "哈", "啦", "了", "呢", "吧")
_THANKS_WORDS = _squeezed((*_THANK, *_BYE, *_ZH_THANK, *_ZH_BYE))
"""Words that thank or say goodbye: what a message needs besides a name ("thanks Wendy")."""
_COURTESY_WORDS = _squeezed((*_ACKNOWLEDGE, *_ZH_ACKNOWLEDGE))
_AFTER_WORDS = _squeezed((*_ZH_PARTICLES, *_JOINING))
_FOR_WORDS = _squeezed(_FOR)
_LONGEST = max(map(len, _THANKS_WORDS | _COURTESY_WORDS | _FOR_WORDS | _AFTER_WORDS))
THANKS_CHARS = 60
"""Longer than this (without spaces and punctuation), a message says more than "thanks"."""
NAME_CHARS = 20
"""The longest word taken for a name after a thank-you ("thanks Wendy")."""
_NOT_A_NAME = frozenset(
    "what why how when where who whom whose which can could would should is are am was were do "
    "does did will may might must shall but however though although still not no dont doesnt "
    "didnt cant cannot wont isnt arent wasnt help please and also".split()
)
"""Words that, next to a thank-you, begin or turn to something else: never taken for a name."""


def says_thanks(text: str) -> bool:
    """Whether `text` does nothing but thank, acknowledge or say goodbye: "thanks!", "ok great,
    thank you", "got it, bye", "Thanks Wendy 👍", "👍", "谢谢", "好的，谢谢". Case, punctuation,
    emoji and spaces are ignored; anything with more in it is a question ("thanks, how do I reset
    my password?", "ok but it still does not unlock", "谢谢，怎么退款？"). A thank-you may name
    who it thanks, one word first or last ("thanks Wendy", "Wendy, thanks"; not in Chinese,
    written without spaces). A message that asks something ("ok?", "fine?") is a question."""
    folded = _without_apostrophes(text)
    words = re.findall(r"\w+", folded)
    squeezed = "".join(words)
    asks = "?" in text or "？" in text
    if not squeezed:
        # Only emoji ("👍", "🙏"): an acknowledgement; punctuation alone ("?") is not one.
        return not asks and any(unicodedata.category(c) == "So" for c in folded)
    if len(squeezed) > THANKS_CHARS or asks:
        return False  # "ok?", "fine?": asked, not said; left to the bot like any question.
    if _courtesy(squeezed):
        return True
    if len(words) < 2:
        return False
    return any(
        name.isalpha()
        and len(name) <= NAME_CHARS
        # A word with no spaces in Chinese is a whole clause ("请问头盔在哪里"), never a name.
        and not any(unicodedata.east_asian_width(c) in "WF" for c in name)
        and name not in _NOT_A_NAME
        and True in _courtesy("".join(rest))
        for name, rest in ((words[-1], words[:-1]), (words[0], words[1:]))
    )


def _courtesy(squeezed: str) -> set[bool]:
    """For each way `squeezed` is made wholly of courtesy words (`says_thanks`), whether one of
    them thanks or says goodbye; empty when it is not. Worked out position by position, never by
    trying every way of splitting it: "kkkk…" splits into "k"s in more ways than a regular
    expression could try in a lifetime before failing on a last letter."""
    size = len(squeezed)
    reached: list[set[tuple[bool, bool]]] = [set() for _ in range(size + 1)]
    reached[0].add((False, False))  # (just after a thank-you, thanked at all)
    for start in range(size):
        for after_thanks, thanked in reached[start]:
            for end in range(start + 1, min(size, start + _LONGEST) + 1):
                word = squeezed[start:end]
                if word in _THANKS_WORDS:
                    reached[end].add((True, True))
                if after_thanks and word in _FOR_WORDS:  # "thanks so much", not "so much".
                    reached[end].add((True, thanked))
                if word in _COURTESY_WORDS or (start > 0 and word in _AFTER_WORDS):
                    reached[end].add((False, thanked))
    return {thanked for _, thanked in reached[size]}


def question_for_bot(entries: Sequence[Entry]) -> ChatMessage | None:
    """The customer message the bot answers when a person hands the conversation back: of those
    written after the last reply in `entries` (a bot answer or an agent's message), the latest
    that is a real question, neither a request for a person (`asks_for_person`) nor a thank-you
    (`says_thanks`); None if there is none (the bot then waits for the customer's next message).
    `entries` are oldest first, reaching back to that reply (or to the start of the log).

    The desk's hand-back (`DeskService.hand_back`) and the agent console's confirmation before it
    both ask this, so the console quotes the message the bot will answer."""
    for entry in reversed(entries):
        if not isinstance(entry, ChatMessage):
            continue
        if _is_reply(entry):
            return None  # What came before the reply was answered.
        if not asks_for_person(entry.text) and not says_thanks(entry.text):
            return entry
    return None


def _is_reply(entry: Entry) -> bool:
    """A bot answer or an agent's message: what the customer wrote before it was answered."""
    return isinstance(entry, ChatMessage) and entry.author is not Author.CUSTOMER


def _allowed(state: State, move: Move) -> bool:
    try:
        next_state(state, move, role=Role.CUSTOMER)
    except Refused:
        return False
    return True
