"""The customer's side: ask a question, watch the bot work, read the answer or a person's reply.

Everything goes through the desk: a question is stored (pending) and this widget is done with it;
a bot worker, in this process or any other, answers it, and the answer arrives like any other
change, through the desk's change notices.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from rich.text import Text
from textual import events, getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input, Static

from chatbot.desk.aio import ConversationNotFound, StoreError
from chatbot.desk.models import (
    RATINGS,
    Author,
    ChatEvent,
    ChatMessage,
    Conversation,
    Feedback,
    FeedbackGiven,
    LocaleSet,
    PersonOffered,
    Rated,
    Resolved,
    State,
    Thanked,
)
from chatbot.engine.models import Decision
from chatbot.engine.question import MAX_QUESTION_CHARS, check_question
from chatbot.errors import HelpdeskError
from chatbot.i18n import DEFAULT_LOCALE, LANGUAGE_NAMES, LOCALES, N_, Locale, translations
from chatbot.notices import by_question, needs_decisions, notice, status_line
from chatbot.text import cells, clip, is_blank, printable
from chatbot.tui.commands import PaletteCommand
from chatbot.tui.localize import localize_bindings
from chatbot.tui.services import Services
from chatbot.tui.slow import DESK_STALL_S, if_longer
from chatbot.tui.suggestions import Suggestion
from chatbot.tui.typing_signal import TypingSignal
from chatbot.tui.widgets.bot_working import BotWorking
from chatbot.tui.widgets.chat_log import ChatLog
from chatbot.tui.widgets.chat_shell import PLACEHOLDER, WELCOME
from chatbot.tui.widgets.message_bubble import MessageBubble, NoticeBubble
from chatbot.tui.widgets.plain_input import joined_lines
from chatbot.tui.widgets.rating_prompt import RatingPrompt
from chatbot.tui.widgets.send_box import SendBox
from chatbot.tui.widgets.suggestion_list import PERSON_REPLIES, SuggestionList
from chatbot.tui.widgets.transcript import about_question
from chatbot.tui.widgets.typing_line import TypingLine

RATING_WORDS = {1: N_("1 (poor)"), 5: N_("5 (excellent)")}
"""The ends of the scale, named in the command palette (whose titles are only ever this text)."""
PAGE = 100
"""Entries shown when a conversation is reopened; a customer rarely scrolls further back."""
DESK_TROUBLE = N_(
    "The help desk cannot be reached just now. What you typed stays here: try again in a moment."
)
"""Said to a customer for database trouble with something unsent (whose own words are for the
operator)."""
DESK_TROUBLE_ACTION = N_(
    "The help desk cannot be reached just now, so that was not done. Try again in a moment."
)
"""Said when a key's move fails (a language, a person, a rating, feedback): it said "What you
typed stays here" over an empty box, and stayed after the desk was back."""
DESK_TROUBLE_READING = N_(
    "The help desk cannot be reached just now. What you sent is saved, and this chat catches up "
    "once it is back."
)
"""Said when only reading fails: with nothing unsent, "What you typed stays here: try again"
asked the customer to send again a question the desk already had."""
DESK_BACK_UNSENT = N_(
    "The help desk can be reached again, but what you typed was not sent: press Enter to send it."
)
"""Said in place of `DESK_TROUBLE` once the desk is back with the message still unsent: the line
said "cannot be reached just now" until the customer sent again, long after it could be."""
DESK_POLL_S = 1.0
"""How often the chat reads again while its reads fail, or while a message the desk could not
store is unsent: a server that went silent, then answers again, sends no change notice, nor does a
lock that ends, and their lines stayed until something else changed (or the customer pressed
Enter again)."""
SENDING = N_(
    "Sending… The help desk is slow to answer: what you typed stays here until it is saved."
)
"""Said above the box while a message waits on the desk longer than `SENDING_SAID_S` (a table
locked, a server slow to answer): for the whole deadline nothing showed that Enter was taken, and
an Enter pressed again did nothing, without a word."""
SENDING_SAID_S = 1.0
"""How long a message waits on the desk before the line says it is on its way: a quick send shows
no line at all."""
PERSON_HAS_IT = (State.WAITING, State.CLAIMED)
"""While a person has the conversation, or it waits for one, "Talk to a person" is not offered:
pressed, it could only say so ("A person already has this conversation.")."""
PERSON_READS = N_("A person will read this.")
"""Under the customer's newest message while a person has the conversation, or it waits for one:
the bot stays silent then, and a message (a suggestion tapped) showed nothing under it, as if
the bot had not heard."""
WRITE_TO_AGENT = N_("Write to {agent}, press Enter")
WRITE_TO_PERSON = N_("Write a message, press Enter")
"""The question box's placeholder while a person has the conversation (`WRITE_TO_AGENT`, named),
or it waits for one: "Type your question" read oddly beside "ana (support agent) is helping you."
and under "A person will read this."."""
RATE_OR_WRITE = N_("Rate 1 to 5, or write again")
"""The placeholder while the rating is asked: a number typed here rates (`TYPED_RATINGS`), other
words ask again, as the status says ("Resolved. Write again if you need anything else."). No
"press Enter": the question above says it, and beside the queue at 80 columns the box holds 33
characters."""
# Shorter forms of the placeholders, for a box too narrow for the whole (beside the queue at 60
# columns it holds 23 cells): the box wrapped a longer one at a word and showed its first line,
# "Write to Maximiliana", "Rate 1 to 5, or write".
ASK_SHORT = N_("Type your question")
WRITE_TO_AGENT_SHORT = N_("Write to {agent}")
WRITE_SHORT = N_("Write a message")
RATE_OR_WRITE_SHORT = N_("Rate 1–5, or write")
RATE_SHORT = N_("Rate 1–5")
NAME_KEPT = 4
"""The fewest cells of an agent's name a placeholder keeps, cut (with its …): fewer said nothing
of who reads ("Write to M…"), and the generic sentence is said in its place."""
TYPED_RATINGS = {str(rating): rating for rating in RATINGS} | {
    chr(ord("０") + rating): rating for rating in RATINGS
}
"""What the question box takes as a rating while the prompt asks for one (spaces around it
allowed): a digit 1-5, or its full-width form, as a Chinese keyboard types it. A customer whose
cursor was in the box typed `5` and Enter, and the 5 went out as a question that reopened the
conversation, took the prompt away and put a `5` in the agents' queue."""
RATED_ALREADY = N_(
    "This conversation is rated already, thank you. To ask something, write your question."
)
"""Said for a lone digit typed once the rating is given, if the rating is not known here: not
sent as a message."""
RATED_ALREADY_AS = N_("You already rated this conversation {rating} out of 5.")
RATING_RANGE = N_("A rating is a number from 1 to 5.")
"""Said for another lone number typed while the rating is asked (`7`, `10`): not sent, as it
reopened the conversation for a person."""
"""Said for a lone digit typed once the rating is given, above the question box: the box emptied
and nothing else showed."""
WITH_A_PERSON = N_(
    "This conversation is with a person now: Helpful and Not helpful are for the bot's answers. "
    "Write here what you need."
)
"""Said for Helpful or Not helpful pressed while a person has the conversation (or it waits for
one): they marked the bot's earlier answer, off screen, and said "a person will take a look"
to a customer a person was already chatting with."""
FEEDBACK_ACTIONS = ("feedback('helpful')", "feedback('not-helpful')")
"""Helpful and Not helpful, whose buttons stay on the answer: where the footer has no room for
every key (a phone's browser), it leaves these out first, measured from their labels in the
chat's language (see the footer's `GIVE_WAY_FIRST`). Their keys work all the same."""


class StatusLine(Widget):
    """Who answers the conversation, wrapped to as many lines as its CSS `max-height` allows
    (the last ending in "…" if it still does not fit): on a phone's 40 columns, and beside the
    agent console at 80, a one-line status lost the second half of its sentence ("Resolved.
    Write again if yo…"). One line when it fits. Drawn as plain text (an agent's name is shown
    literally)."""

    DEFAULT_CSS = """
    StatusLine {
        height: auto;
    }
    """

    def __init__(self, text: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = text

    def update(self, text: str) -> None:
        if text != self.text:
            self.text = text
            self.refresh(layout=True)

    def _most_lines(self) -> int:
        most = self.styles.max_height
        return max(1, int(most.value)) if most is not None and most.is_cells else 1

    def _lines(self, width: int) -> list[Text]:
        if width <= 0:
            return [Text(self.text)]
        most = self._most_lines()
        lines = list(Text(self.text).wrap(self.app.console, width, overflow="fold"))
        if len(lines) <= most:
            return lines
        # The lines that fit, then the rest of the sentence on the last one, cut with "…".
        kept = lines[: most - 1]
        shown = sum(len(line.plain) for line in kept)
        last = Text(self.text[shown:].lstrip())
        last.truncate(width, overflow="ellipsis")
        return [*kept, last]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines(width))

    def render(self) -> Text:
        return Text("\n").join(self._lines(self.content_size.width))


class LanguageSwitch(Static):
    """The language hint at the top right ("F9 中文"; in a browser, "中文" underlined), in the
    other language's own words: a click (a phone's tap: a phone has no F9) shows the chat in
    that language, as F9 does."""

    @dataclass
    class Pressed(Message):
        """The customer clicked the language hint."""

    def on_click(self, event: events.Click) -> None:
        event.stop()
        # A double tap is one gesture: its second tap would switch straight back.
        if event.chain == 1:
            self.post_message(self.Pressed())


def _cut_name(name: str, width: int) -> str:
    """`name` in `width` cells, cut with …, without a word's first letter or two left over at
    the end ("Maximiliana…", not "Maximiliana M…")."""
    kept = clip(name, width)[:-1]
    head, space, tail = kept.rpartition(" ")
    if space and head.strip() and len(tail) < 3:
        kept = head.rstrip()
    return kept + "…"


class ChatPanel(Vertical):
    """One customer conversation: transcript, working indicator, inline errors and the input."""

    BINDINGS = [
        Binding("ctrl+t", "talk_to_person", N_("Talk to a person")),
        # The same key while a person has the conversation (or it waits for one), where the
        # footer does not offer it (see `check_action`): a customer used to it is told so.
        Binding("ctrl+t", "talk_to_person('anyway')", show=False),
        Binding("ctrl+y", "feedback('helpful')", N_("Helpful")),
        Binding("ctrl+n", "feedback('not-helpful')", N_("Not helpful")),
        # The same keys with no answer to judge, where the footer leaves them out (see
        # `check_action`): pressed, they did nothing and said nothing.
        Binding("ctrl+y", "feedback('helpful', 'anyway')", show=False),
        Binding("ctrl+n", "feedback('not-helpful', 'anyway')", show=False),
        Binding(
            "ctrl+b", "new_conversation", N_("New chat"), tooltip=N_("Start a new conversation")
        ),
        # Not in the footer, which has no room left at 80 columns: the status line offers it, in
        # the other language's own words ("F9 中文", "F9 English"), so a reader who cannot read
        # the current language still finds theirs.
        Binding(
            "f9",
            "switch_locale",
            "Language",
            show=False,
            tooltip=N_("Show this chat in another language"),
        ),
    ]

    @dataclass
    class Sent(Message):
        """What the customer typed went out (less what they typed after it): a draft of it kept
        must go at once, or it comes back in the box to be sent twice."""

    @dataclass
    class LocaleChanged(Message):
        """The chat is shown in another language now (the customer's conversation says so)."""

        locale: Locale

    working: reactive[bool] = reactive(False)
    """True while the bot has the conversation and a question of it is still pending."""

    log_view = getters.query_one("#chat-log", ChatLog)
    question = getters.query_one("#question", SendBox)
    error = getters.query_one("#chat-error", Static)
    rating = getters.query_one("#rating", RatingPrompt)

    def __init__(
        self, services: Services, *, conversation_id: int | None = None, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.services = services
        self.conversation_id = conversation_id
        """Created with the first message, so opening the app leaves no empty conversations."""
        self.conversation: Conversation | None = None
        """The conversation as last read."""
        self._last_entry = 0
        self._answers: dict[int, MessageBubble] = {}
        self._latest_answer: MessageBubble | None = None
        self._loading = asyncio.Lock()
        self._starting = asyncio.Lock()
        """Held by each write that may start the conversation: Ctrl+T pressed while Enter's
        question is being stored must reach the conversation that question starts, not start
        a second, empty one that waits in the queue ahead of the customer."""
        self._typing = TypingSignal(services, Author.CUSTOMER)
        """Tells the agent holding the conversation that the customer types."""
        self._ahead: int | None = None
        """How many customers wait ahead of this one, while it waits for a person."""
        self._history_shown = conversation_id is None
        """Whether what the conversation held when the chat opened was shown: what arrives after
        is news (a reopened conversation's history is not)."""
        self._offered: Locale = services.customer_locale
        """What the chat is shown in before anything is written: the language the customer's
        browser (`helpdesk serve`) or terminal (`helpdesk chat`) asks for, else English."""
        opened = services.opened_locale if conversation_id is not None else None
        self.locale: Locale = opened or self._offered
        """The customer's language: their conversation's (set by their first message, or by
        their choice), until then the one offered; the agent's `--locale` is not theirs. A
        conversation the app opened is drawn in its own from the start."""
        self._chosen: Locale | None = None
        """A language the customer picked: before their first message, where it wins over
        detection; or the one their conversation was last set to by them (a `locale-set` event
        chosen by the customer), which a new chat (Ctrl+B) keeps as their choice."""
        self._desk_trouble = False
        """The error line says the desk cannot be reached: it goes once the desk answers."""
        self._unsent = False
        """A write failed, and nothing has been sent since: its line stays until one is."""
        self._unsent_words: tuple[str, str] | None = None
        """That message, as typed and as stored: the desk may have stored it after all, its
        answer lost on the way back (a server that went silent at the commit)."""
        self._unsent_after = 0
        """The last entry shown when it failed: it is looked for among the entries after it."""
        self._unsent_cursor: int | None = None
        """The desk's newest entry when first read after it failed: a newer one means writes
        land again (the lock or the outage that failed it is over)."""
        self._reads_failing = False
        """The last read failed, or the change feed lost the database."""
        self._stalled = False
        """A read since the unsent message failed waited over `DESK_STALL_S`: once a read
        answers, whatever held it (a lock) is over."""
        self._sends = 0
        """Messages on their way to the desk now: the line says so once one is slow (`SENDING`),
        and nothing said of what was sent before ("What you sent is saved") shows meanwhile."""
        self._desk_poll: Timer | None = None
        self._refused = False
        """The error line says why what was typed could not be sent (blank, too long): it goes
        once the box is cleared or within the limit again, or when the conversation moves on."""
        self._given: int | None = None
        """The rating of the conversation's latest resolution, as its transcript shows it."""
        self._told_rated = False
        """The error line says the conversation is rated already (a lone digit was typed): it
        goes as the customer types on, sends something else, or the conversation moves on."""
        self._error_said: str | None = None
        """The message id the error line says (in the chat's language), to say it again in
        another; None: it says the desk's own words, or a refusal (`_refused`)."""
        self._newest_is_customer = False
        """The newest entry shown is a message of the customer's (nothing answered it yet)."""
        self._acknowledgement: NoticeBubble | None = None
        """`PERSON_READS`, shown under that message."""
        self._localize_bindings()

    def gettext(self, message: str) -> str:
        """`message` in the customer's language."""
        return translations(self.locale).gettext(message)

    # -- a browser session's draft (kept by `ChatScreen` while `serve` restarts) ------------------

    def restore_draft(self, text: str) -> bool:
        """Put a draft back in the question box, unless something is typed there already;
        whether it was. Put back is not typed: the agent holding the conversation is not told
        the customer types (they saw "The customer is typing…" for 6 s as a chat opened), so
        the box says nothing of the change; the keys typed after it tell as any do."""
        if text and not self.question.value:
            with self.question.prevent(Input.Changed):
                self.question.value = text
            self.question.guard.edited(text)  # What the box's own handler of the change does.
            self.question.cursor_position = len(text)
            return True
        return False

    def compose(self) -> ComposeResult:
        with Horizontal(id="chat-top"):
            yield StatusLine(status_line(State.BOT, None, locale=self.locale), id="chat-status")
            yield LanguageSwitch(self._language_hint(), id="chat-language")
        with ChatLog(id="chat-log"):
            yield Static(Text(self.gettext(WELCOME)), classes="welcome", id="chat-welcome")
            if self.services.suggestions:
                yield SuggestionList(
                    self.services.suggestions,
                    locale=self.locale,
                    # A browser's bots are `serve`'s, on the same settings; `--no-bot`'s may not be.
                    known=self.services.bot_here or self.app.is_web,
                    classes="welcome",
                    id="chat-suggestions",
                )
        yield BotWorking(
            clock=self.services.clock,
            stalled_s=self.services.bot_stalled_s,
            locale=self.locale,
            id="bot-working",
        )
        yield TypingLine(self.services.clock, id="chat-typing")
        yield RatingPrompt(locale=self.locale, id="rating")
        yield Static(id="chat-error")
        # Not select-on-focus: coming back to a half-typed question continues it, whether by Tab
        # or by typing into the conversation (which sends the keys here).
        yield SendBox(placeholder=self.gettext(PLACEHOLDER), id="question", select_on_focus=False)

    def on_mount(self) -> None:
        self.query_one(BotWorking).stop()
        self.rating.display = False
        self.error.display = False
        self.services.changed.subscribe(self, self._store_changed)
        self.services.suggestions_changed.subscribe(self, self._suggestions_changed)
        self.services.reach_changed.subscribe(self, self._reach_changed)
        # After the mount: the footer hears of binding changes only from a mounted widget.
        self.call_later(self.refresh_log)

    def _suggestions_changed(self, suggestions: tuple[Suggestion, ...]) -> None:
        for shown in self.query(SuggestionList):
            shown.set_suggestions(suggestions)

    @on(ChatLog.Typed)
    async def _typed_aside(self, event: ChatLog.Typed) -> None:
        # Typed on the conversation: the characters and editing keys go to the question box, in
        # order, and so does the focus.
        event.stop()
        if event.character is not None:
            self._to_question(event.character)
        elif not self.question.disabled:
            self.question.focus()
            await self.question.press_key(event.key)

    def on_paste(self, event: events.Paste) -> None:
        # Pasted on the conversation or the rating (the question box keeps its own pastes): meant
        # for the question box too, where it used to be lost without a word.
        event.stop()
        if text := joined_lines(event.text):
            self._to_question(text)

    def _to_question(self, text: str) -> None:
        field = self.question
        if field.disabled:
            return
        field.focus()
        field.append(text)

    def watch_working(self, working: bool) -> None:
        if self.is_mounted:
            line = self.query_one(BotWorking)
            if working:
                line.start()
            else:
                line.stop()

    # -- reading ----------------------------------------------------------------------------------

    async def _store_changed(self, _version: int) -> None:
        await self.refresh_log()

    def _reach_changed(self, reachable: bool) -> None:
        """An idle chat hears of an outage too: it reads only when told of a change, so a
        customer waiting for a reply through one saw nothing amiss. The line goes, as a failed
        read's does, once reading works again (the feed reports a change on its return)."""
        if reachable:
            return
        if self.conversation_id is not None and not self.error.display and not self._sends:
            self._say_error(DESK_TROUBLE_READING)
            self._desk_trouble = True
        if self.error.display:
            self._reading_failed()

    def _reading_failed(self) -> None:
        """Reads fail: read again every `DESK_POLL_S` while the line shows, so it goes (or says
        the desk is back) once one works, change notice or not."""
        self._reads_failing = True
        self._poll()

    def _poll(self) -> None:
        if self._desk_poll is None:
            self._desk_poll = self.set_interval(DESK_POLL_S, self._poll_desk)

    def _awaiting_desk(self) -> bool:
        """The line says the desk could not store what the box holds: reads tell when it is back
        (`_unsent_check`), where no change notice comes when a lock ends."""
        return self._unsent and self._error_said == DESK_TROUBLE

    def _poll_desk(self) -> None:
        if not ((self._reads_failing or self._awaiting_desk()) and self.error.display):
            if self._desk_poll is not None:
                self._desk_poll.stop()
                self._desk_poll = None
        elif not self._loading.locked():  # A read on its way says as much.
            self.run_worker(self.refresh_log(), group="desk poll")

    @contextmanager
    def _stall_watch(self) -> Iterator[None]:
        """Reads in the block that wait over `DESK_STALL_S` while a message is unsent are noted
        (`_stalled`)."""

        def stalled() -> None:
            if self._unsent:
                self._stalled = True

        # With a message unsent, a stall that ends tells that the desk is back where no read
        # failed and nobody else wrote (a lock held a few seconds past the send's deadline).
        with if_longer(DESK_STALL_S, stalled):
            yield

    @contextmanager
    def _sending_said(self) -> Iterator[None]:
        """A message is on its way to the desk in the block: once it takes longer than
        `SENDING_SAID_S` the line says so (`SENDING`), until it is stored or fails."""
        if self._desk_trouble:
            # "What you sent is saved", said of what went before, is not said of this one while
            # it is still on its way (it said so over a message stored only seconds later).
            self._hide_error()
        self._sends += 1
        try:
            with if_longer(SENDING_SAID_S, self._say_sending):
                yield
        finally:
            self._sends -= 1
            if self._error_said == SENDING:
                self.error.display = False
                self._error_said = None

    def _say_sending(self) -> None:
        if self._sends and self.is_attached:
            self._say_error(SENDING)

    async def refresh_log(self) -> None:
        """Append what is new in the conversation (anyone's writes) and refresh the status."""
        if self.conversation_id is None:
            if self._unsent:  # The message that failed would have started the conversation.
                async with self._loading:  # One read at a time, polled or not.
                    await self._unsent_check((), came_back=self._reads_failing)
            return
        async with self._loading:  # One at a time, so each entry is shown once, in order.
            desk = self.services.desk
            with self._stall_watch():  # See `_stall_watch`: the reads a send makes too.
                try:
                    conversation = await desk.conversation(self.conversation_id)
                    entries: Sequence[ChatMessage | ChatEvent] = ()
                    if self._last_entry == 0:
                        entries = (await desk.page(self.conversation_id, limit=PAGE)).entries
                    elif conversation.last_entry > self._last_entry:
                        entries = await desk.entries_after(self.conversation_id, self._last_entry)
                    due = None
                    if conversation.state is State.RESOLVED:
                        due = await desk.rating_due(self.conversation_id)
                    # Read again at every change of the desk: the count falls as agents take
                    # others.
                    self._ahead = None
                    if conversation.state is State.WAITING:
                        self._ahead = await desk.waiting_ahead(self.conversation_id)
                    # Only an agent types here, and only while they hold the conversation.
                    typing = {}
                    if conversation.state is State.CLAIMED:
                        typing = await desk.typing(self.conversation_id)
                    if self._unsent and conversation.state is State.BOT:
                        # What a question sent now reads too (was it answered before?): a lock
                        # there holds this read as it held the send.
                        await desk.latest_decision(self.conversation_id)
                except HelpdeskError as error:
                    self._show_desk_error(error)
                    if isinstance(error, StoreError):
                        self._reading_failed()
                    return
            came_back, self._reads_failing = self._reads_failing, False
            shown_before = self._last_entry
            self._desk_answers()
            news = self._history_shown and any(
                isinstance(entry, ChatMessage) and entry.author is not Author.CUSTOMER
                for entry in entries
            )
            self._history_shown = True
            self.conversation = conversation
            wanted = conversation.locale or self._chosen or self._unwritten(conversation)
            if wanted != self.locale:
                # Everything shown so far is in the old language: say it all again.
                await self._clear_log()
                self._show_in(wanted)
                try:
                    entries = (await desk.page(self.conversation_id, limit=PAGE)).entries
                except HelpdeskError as error:
                    self._show_desk_error(error)
                    return
            self._show_status()
            self.working = conversation.state is State.BOT and conversation.pending > 0
            agent = printable(conversation.agent or "")
            self.query_one(TypingLine).show(
                self.gettext("{agent} is typing…").format(agent=agent), typing.get(Author.AGENT)
            )
            if due is not None and isinstance(due.event, Resolved):
                self.rating.ask(None if due.event.agent is None else printable(due.event.agent))
                self._show_placeholder()
            else:
                self._hide_rating()
            if conversation.state is not State.RESOLVED or (
                self.rating.display and self._error_said != RATING_RANGE
            ):
                self._hide_told_rated()  # Reopened, or resolved again: no longer rated.
            if entries:
                self._last_entry = entries[-1].id
                if self._last_entry > shown_before:  # Not the same ones again, in a new language.
                    self._hide_refusal()  # The conversation moved on below it.
                # The acknowledgement goes first, then comes back under the newest message if
                # still due: gone after, a frame showed it above an agent's reply.
                await self._unacknowledge()
                await self._show(entries)
            await self._acknowledge()
            if news and not self.app.app_focus:
                # A customer waiting in another window (or tab: the page marks its title) hears
                # that the bot or a person answered.
                self.app.bell()
            if self._unsent:
                await self._unsent_check(entries, came_back=came_back)
            self.refresh_bindings()

    async def _note_unsent_cursor(self) -> None:
        """The desk's newest entry just after the write failed (read at once, not by the next
        change notice, which may come from the very write that shows the desk is back)."""
        try:
            with self._stall_watch():
                newest = await self.services.desk.last_entry_id()
        except HelpdeskError:
            self._reading_failed()
            return
        if self._unsent and self._unsent_cursor is None:
            self._unsent_cursor = newest
        if self._awaiting_desk() and not self._loading.locked():
            # The first of the reads that tell when it is back (`_poll`), at once: a lock that
            # ends just after the send gave up is over before the next poll.
            await self.refresh_log()

    async def _unsent_check(
        self, entries: Sequence[ChatMessage | ChatEvent], *, came_back: bool
    ) -> None:
        """Whether what the unsent message's line says is over: the message among `entries`
        (stored after all) takes it off the box and the line goes, as a send would; the desk
        back (`came_back`: reads work again; or an entry newer than any when it failed: writes
        land again; or a read that waited on something, then answered: `_stalled`) says so.
        Before, the line said "cannot be reached" until the customer sent again, long after the
        outage, and over a message already stored."""
        if self._unsent_words is not None:
            typed, stored = self._unsent_words
            if any(
                isinstance(entry, ChatMessage)
                and entry.author is Author.CUSTOMER
                and entry.id > self._unsent_after
                and entry.text == stored
                for entry in entries
            ):
                if self.question.value.startswith(typed):
                    self.question.take(typed)
                self._hide_error()
                return
        try:
            with self._stall_watch():
                newest = await self.services.desk.last_entry_id()
        except HelpdeskError:
            self._reading_failed()
            return
        self._reads_failing = False
        if self._unsent_cursor is None:
            self._unsent_cursor = newest
        elif newest > self._unsent_cursor:
            came_back = True
        # Not sent meanwhile, nor being sent again now (its line says so).
        if (came_back or self._stalled) and self._unsent and not self._sends:
            self._say_error(DESK_BACK_UNSENT)

    def _unwritten(self, conversation: Conversation | None) -> Locale:
        """The language of a conversation with no `locale-set` event: the one offered while
        nothing is written in it (the first message decides then), English after."""
        return self._offered if conversation is None else conversation.shown_locale(self._offered)

    def _kept(self) -> Locale | None:
        """The language to keep with a conversation that starts without a message (the
        customer asks for a person first): the one they picked, or the one they were shown
        in place of English."""
        if self._chosen is not None:
            return self._chosen
        shown = self._unwritten(self.conversation)
        return None if shown == DEFAULT_LOCALE else shown

    def _show_status(self) -> None:
        conversation = self.conversation
        if conversation is None:
            text = status_line(State.BOT, None, locale=self.locale)
        else:
            agent = None if conversation.agent is None else printable(conversation.agent)
            text = status_line(conversation.state, agent, ahead=self._ahead, locale=self.locale)
        self.query_one("#chat-status", StatusLine).update(text)
        self._show_placeholder()
        self._show_suggestions()

    def on_resize(self, _event: events.Resize) -> None:
        # The box's width follows the panel's: the placeholder is fitted to it again.
        self._show_placeholder()

    def _show_placeholder(self) -> None:
        """Say in the empty question box what a message typed there does now: asks the bot,
        goes to the person who has the conversation (or will), or, while the rating is asked,
        rates it; in the box's width (`_placeholders`: the first form that fits, the last cut
        with … where none does)."""
        question = self.question
        width = question.scrollable_content_region.width
        forms = self._placeholders(width)
        if width <= 0:  # Not laid out yet: said whole, fitted once the panel has its size.
            question.placeholder = forms[0]
            return
        question.placeholder = next(
            (text for text in forms if cells(text) <= width), clip(forms[-1], width)
        )

    def _placeholders(self, width: int) -> list[str]:
        """The forms of the placeholder for now, longest first: the agent's name is cut to fit
        `width` (keeping `NAME_KEPT` cells) before the sentence is said without it."""
        conversation = self.conversation
        if self.rating.display:
            return [self.gettext(text) for text in (RATE_OR_WRITE, RATE_OR_WRITE_SHORT, RATE_SHORT)]
        if conversation is None or conversation.state not in PERSON_HAS_IT:
            return [self.gettext(PLACEHOLDER), self.gettext(ASK_SHORT)]
        generic = [self.gettext(WRITE_TO_PERSON), self.gettext(WRITE_SHORT)]
        if conversation.state is not State.CLAIMED or not conversation.agent:
            return generic
        agent = printable(conversation.agent)
        forms = []
        for sentence in (WRITE_TO_AGENT, WRITE_TO_AGENT_SHORT):
            said = self.gettext(sentence)
            forms.append(said.format(agent=agent))
            room = width - cells(said.format(agent=""))
            if 0 < width and NAME_KEPT <= room < cells(agent):
                forms.append(said.format(agent=_cut_name(agent, room)))
            if sentence is WRITE_TO_AGENT:
                forms.append(generic[0])
        return [*forms, generic[1]]

    def _suggesting(self) -> bool:
        """Whether the suggested questions are offered: not while a person has the conversation
        or it waits for one (one tapped then goes to that person, not to the bot the list
        speaks of), nor in a chat set to another language (`_elsewhere`)."""
        return bool(self.services.suggestions) and self._offers_a_person() and not self._elsewhere()

    def _elsewhere(self) -> bool:
        """The conversation is set to another language than English, the recorded questions':
        the bot searches only that language's passages for them (a Chinese chat, the Chinese
        ones), where their recorded answers are not."""
        conversation = self.conversation
        fixed = (conversation.locale if conversation is not None else None) or self._chosen
        return fixed is not None and fixed != DEFAULT_LOCALE

    def _show_suggestions(self) -> None:
        if not self.services.suggestions:
            return
        shown = self.query_one(SuggestionList)
        shown.display = self._offers_a_person()
        shown.offer(elsewhere=self._elsewhere())

    async def _acknowledge(self) -> None:
        """Say `PERSON_READS` under the customer's newest message while a person has the
        conversation (or it waits for one), and only then: gone once anyone writes after it."""
        conversation = self.conversation
        wanted = (
            conversation is not None
            and conversation.state in PERSON_HAS_IT
            and self._newest_is_customer
        )
        shown = self._acknowledgement
        if shown is not None and (not wanted or self.log_view.children[-1] is not shown):
            await self._unacknowledge()
        if wanted and self._acknowledgement is None:
            self._acknowledgement = NoticeBubble(self.gettext(PERSON_READS))
            await self.log_view.mount(self._acknowledgement)
            self.log_view.scroll_end(animate=False)
            self.log_view.call_after_refresh(self._keep_newest_in_view)

    async def _unacknowledge(self) -> None:
        """Take `PERSON_READS` off the transcript, if shown."""
        shown, self._acknowledgement = self._acknowledgement, None
        if shown is not None:
            await shown.remove()

    async def _clear_log(self) -> None:
        """Take every message and notice off the transcript, to be shown again."""
        await self.log_view.remove_children(".bubble")
        self.log_view.anchor(False)
        self._acknowledgement = None
        self._newest_is_customer = False
        self._last_entry = 0
        self._answers = {}
        self._latest_answer = None

    def _show_in(self, locale: Locale) -> None:
        """Switch every fixed text of the chat to `locale` (the transcript is the caller's)."""
        self.locale = locale
        self.query_one("#chat-welcome", Static).update(Text(self.gettext(WELCOME)))
        if self.services.suggestions:
            self.query_one(SuggestionList).show_in(locale)
        self.query_one(BotWorking).show_in(locale)
        self.rating.show_in(locale)
        self._error_again()
        self._show_status()  # The question box's placeholder too.
        self.query_one("#chat-language", LanguageSwitch).update(self._language_hint())
        self._localize_bindings()
        self.post_message(self.LocaleChanged(locale))

    def _language_hint(self) -> Text:
        name = LANGUAGE_NAMES[self._next_locale()]
        if self.app.is_web:
            # Underlined, as a link reads on a page: a phone has no F9, and a browser's reader
            # clicks (F9 still works there).
            return Text(name, style="underline")
        return Text.assemble(("F9 ", "bold"), name)

    def _localize_bindings(self) -> None:
        localize_bindings(self, self.locale, switch_locale=LANGUAGE_NAMES[self._next_locale()])

    def _next_locale(self) -> Locale:
        return LOCALES[(LOCALES.index(self.locale) + 1) % len(LOCALES)]

    async def _decided(
        self, entries: Sequence[ChatMessage | ChatEvent]
    ) -> Mapping[int, Decision] | None:
        """The decisions a `not-judged` escalation among `entries` is said from (a replay miss
        and Valen declining to judge are told apart); read only when there is one."""
        if self.conversation_id is None or not needs_decisions(entries):
            return None
        try:
            return by_question(await self.services.desk.decisions(self.conversation_id))
        except HelpdeskError:
            return None

    async def _show(self, entries: Sequence[ChatMessage | ChatEvent]) -> None:
        new: list[Widget] = []
        decisions = await self._decided(entries)
        now = self.services.clock()
        newest_answer: MessageBubble | None = None
        # The customer was told something after the newest answer (a person's reply, a notice):
        # the answer is no longer what feedback would be about. Not the bot's note on a question
        # asked again, which points at that very answer ("the answer above"), nor the desk's
        # "You're welcome" to a thank-you: no question, and thanking then pressing Helpful is
        # natural (the answer is still the bot's latest, the one the desk takes feedback on).
        told_since = False
        # The customer's messages, by id, and their newest: an escalation the bot logged after
        # they wrote again names the question it is about (`about_question`).
        shown = [bubble.message for bubble in self.log_view.query(MessageBubble)]
        asked = {m.id: m.text for m in shown if m.author is Author.CUSTOMER}
        last_asked = max(asked, default=None)
        for entry in entries:
            if isinstance(entry, ChatMessage):
                if entry.author is Author.CUSTOMER:
                    asked[entry.id], last_asked = entry.text, entry.id
                bubble = MessageBubble(entry, locale=self.locale, now=now)
                if entry.author is Author.BOT:
                    self._answers[entry.id] = bubble
                    newest_answer = bubble
                    told_since = False
                elif entry.author is Author.AGENT:
                    told_since = True
                new.append(bubble)
                self._newest_is_customer = entry.author is Author.CUSTOMER
                continue
            event = entry.event
            if isinstance(event, LocaleSet):
                # The customer's choice, for a new chat to keep; detected, it is not one.
                self._chosen = event.locale if event.chosen_by_customer else None
            if isinstance(event, FeedbackGiven) and event.entry in self._answers:
                await self._answers[event.entry].show_feedback(event.value)
            if isinstance(event, Resolved | Rated):
                self._given = event.rating if isinstance(event, Rated) else None
            text = notice(
                event,
                reader="customer",
                locale=self.locale,
                decisions=decisions,
                browser=self.app.is_web,
            )
            if text is not None:
                text = about_question(
                    event, text, asked=asked, last_asked=last_asked, locale=self.locale
                )
                new.append(NoticeBubble(text))
                self._newest_is_customer = False
                told_since = told_since or not isinstance(event, PersonOffered | Thanked)
        if newest_answer is not None:
            # Feedback is for the latest answer only: earlier ones lose their buttons.
            previous, self._latest_answer = self._latest_answer, newest_answer
            newest_answer.offers_feedback = not told_since
            if previous is not None:
                await previous.retire()
        elif told_since and self._latest_answer is not None:
            # Feedback is for the bot's answer while it is the latest thing the customer was
            # told: after a person's reply, or an escalation's notice, the keys marked an answer
            # long off screen, and "a person will take a look" was said to a customer a person
            # already had.
            await self._latest_answer.retire()
        await self.log_view.mount_all(new)
        if self.log_view.greeting_only():
            return  # Entries the customer is not shown (a language set): the greeting stays.
        self.log_view.scroll_end(animate=False)
        self.log_view.call_after_refresh(self._keep_newest_in_view)

    def _keep_newest_in_view(self) -> None:
        """Once the chat overflows, keep it scrolled to the newest entry (until the customer
        scrolls up): bubbles can settle their height after the scroll, and a notice wrapping to
        a second line was left half below the fold. Not before: an anchored log that does not
        fill the pane sits at its bottom."""
        if self.log_view.max_scroll_y > 0 and not self.log_view.greeting_only():
            self.log_view.anchor()

    def _show_error(self, text: str) -> None:
        self.error.update(Text(text))
        self.error.display = True
        self._desk_trouble = False
        self._refused = False
        self._told_rated = False
        self._error_said = None

    def _say_error(self, message: str) -> None:
        """Show `message` (a message id) in the customer's language, and again in another one
        they switch to."""
        self._show_error(self.gettext(message))
        self._error_said = message

    def _error_again(self) -> None:
        """Say the error line again in the chat's language now: a refusal of what the box holds
        (recounted), or one of the chat's own sentences. The desk's own words (in English) stay
        as they are. A Chinese refusal stayed, in Chinese, over the chat switched to English."""
        if not self.error.display:
            return
        if self._told_rated:
            self._say_rated()
        elif self._refused:
            if (refusal := self._refusal(self.question.value)) is None:
                self._hide_refusal()
            else:
                self.error.update(Text(refusal))
        elif self._error_said is not None:
            self.error.update(Text(self.gettext(self._error_said)))

    def _hide_refusal(self) -> None:
        """The line said why the box's words could not be sent, and no longer applies: it goes,
        and only it (an unsent message's state stays for the desk's next answer to settle)."""
        if self._refused:
            self.error.display = False
            self._refused = False

    def _hide_told_rated(self) -> None:
        """Take `_say_rated`'s line away, and only it."""
        if self._told_rated:
            self.error.display = False
            self._told_rated = False
            self._error_said = None

    def _say_rated(self) -> None:
        """Say, on the error line, what a lone number typed in the box is not: a rating out of
        range while the prompt asks for one, or a second one (with the rating given)."""
        if self.rating.display:
            self._say_error(RATING_RANGE)
        elif self._given is None:
            self._say_error(RATED_ALREADY)
        else:
            self._show_error(self.gettext(RATED_ALREADY_AS).format(rating=self._given))
        self._told_rated = True

    def _hide_error(self) -> None:
        self.error.display = False
        self._desk_trouble = False
        self._refused = False
        self._told_rated = False
        self._error_said = None
        self._unsent = False
        self._unsent_words = None
        self._unsent_cursor = None
        self._stalled = False

    def _desk_answers(self) -> None:
        if self._desk_trouble:
            self._hide_error()

    def _show_desk_error(
        self, error: HelpdeskError, *, writing: bool = False, action: bool = False
    ) -> None:
        """What went wrong, for the customer: the database's own words (its address, the
        driver's English) are the operator's. A failed read's line goes once the desk answers
        again; a failed write's stays until the customer tries again, as reads can work while
        writes cannot (SQLite locked by another process): hidden by the next read, the line
        left an unsent question looking sent."""
        if isinstance(error, StoreError) and action:
            # A key's move (F9, Ctrl+T, a rating, Helpful): nothing typed is involved, and the
            # line goes once the desk answers again, as a failed read's does.
            self._say_error(DESK_TROUBLE_ACTION)
            self._desk_trouble = not self._unsent
        elif isinstance(error, StoreError) and self._sends and not writing:
            # A read failing while a message is on its way: the line says that message is being
            # sent ("What you sent is saved" said so of one the desk did not have yet).
            return
        elif isinstance(error, StoreError):
            # Reads failing after a write that failed (the database down, not locked) must not
            # make its line one that goes when reads work again: what was typed is still unsent.
            self._unsent = self._unsent or writing
            self._say_error(DESK_TROUBLE if self._unsent else DESK_TROUBLE_READING)
            self._desk_trouble = not self._unsent
        else:
            self._show_error(str(error))

    # -- asking -----------------------------------------------------------------------------------

    @on(SuggestionList.Picked)
    async def _picked(self, event: SuggestionList.Picked) -> None:
        event.stop()
        await self.ask(event.question)

    @on(Input.Changed, "#question")
    def _typing_question(self, event: Input.Changed) -> None:
        self._hide_told_rated()  # Typed on, or cleared: the number it was said of is gone.
        if self._refused and (is_blank(event.value) or self._refusal(event.value) is None):
            # Cleared, or cut to within the limit: what the line said is over. ("Shorten it"
            # stayed under the transcript through an agent's replies until the next Enter.)
            self._hide_refusal()
        elif self._refused and (refusal := self._refusal(event.value)) is not None:
            # Still too long: the count follows the edits (it stayed the one of the last Enter).
            self.error.update(Text(refusal))
        # Only while a person holds the conversation: every signal is a write that wakes every
        # process on the desk, and a conversation with the bot, or waiting, has no one to tell.
        conversation = self.conversation
        if (
            event.value.strip()
            and conversation is not None
            and conversation.state is State.CLAIMED
            and self._typing.due(conversation.id)
        ):
            self.run_worker(self._typing.typed(conversation.id), group="typing")

    @on(SendBox.Submitted, "#question")
    async def _submitted(self, event: SendBox.Submitted) -> None:
        event.stop()
        field = self.question
        # What was in the box at this Enter, less what earlier Enters sent since (a quick double
        # Enter asks once); None: it asks for nothing.
        words = field.words(event)
        if words is None:
            return
        if (rating := self._typed_rating(words)) is not None:
            # The rating the prompt asks for, typed where the cursor was (a phone has no
            # Shift+Tab): recorded as its button records it, and not sent as a message.
            if not await self.rate(rating):
                field.kept(words)
                return
            field.take(words)
            self.post_message(self.Sent())
            return
        if self._rating_typed_amiss(words):
            # A second rating, a correction, or one out of range (`7`, `10`): sent, it reopened
            # the resolved conversation and put a lone number in the agents' queue. Kept in the
            # box, as other words not sent are, to correct: taken out, the `7` was lost.
            self._say_rated()
            field.kept(words)
            return
        if not await self._store(words):
            field.kept(words)
            return
        field.take(words)  # What was typed after this Enter stays.
        self.post_message(self.Sent())
        await self.refresh_log()

    def _typed_rating(self, words: str) -> int | None:
        """The rating `words` give, if the prompt asks for one and they are just a digit 1-5
        (`TYPED_RATINGS`); None: they are a message."""
        if not self.rating.display:
            return None
        return TYPED_RATINGS.get(words.strip())

    def _rating_typed_amiss(self, words: str) -> bool:
        """Whether `words` are a lone number (of up to three digits, full-width too) where only
        a rating could be meant: while the prompt asks for one (and it is not 1-5), or once the
        resolved conversation is rated (here or elsewhere). No message for a person."""
        typed = words.strip()
        if not (0 < len(typed) <= 3 and typed.isdecimal()):
            return False
        conversation = self.conversation
        resolved = conversation is not None and conversation.state is State.RESOLVED
        return self.rating.display or resolved

    async def ask(self, text: str) -> None:
        """Store the customer's message (a suggestion picked, or one asked from elsewhere than
        the box); the bot (anywhere) answers it if it has the turn."""
        if not await self._store(text):
            return
        if self.question.value == text:  # Not what they started typing meanwhile.
            self.question.take(text)
            self.post_message(self.Sent())
        await self.refresh_log()

    def _refusal(self, text: str) -> str | None:
        """Why `text` cannot be sent, for the customer: `check_question`'s tests, blank (format
        characters such as a zero-width space too), and the limit on what is stored, the spaces
        around it dropped. None: it can."""
        if is_blank(text):
            return self.gettext("Please type a question first.")
        if (count := len(text.strip())) > MAX_QUESTION_CHARS:
            # How far over, so a customer who pasted a long email knows how much to cut.
            return self.gettext(
                "Your question has {count} characters; the limit is {limit}. Shorten it and "
                "press Enter again."
            ).format(count=f"{count:,}", limit=f"{MAX_QUESTION_CHARS:,}")
        return None

    async def _store(self, text: str) -> bool:
        """Store the customer's message; False, saying why, if it was refused."""
        typed = text
        if (refusal := self._refusal(text)) is not None:
            self._show_error(refusal)
            self._refused = True
            return False
        try:
            text = check_question(text)
            with self._sending_said():
                async with self._starting:
                    try:
                        result = await self.services.desk.ask(
                            self.conversation_id, text, locale=self._chosen
                        )
                    except ConversationNotFound:
                        if self._last_entry:
                            raise
                        # A page's conversation nobody wrote in, deleted as empty by the desk's
                        # housekeeping while the page stayed open: the question starts a new one
                        # (trying the gone one again, it said "cannot be reached" for ever).
                        self.conversation_id = None
                        result = await self.services.desk.ask(None, text, locale=self._chosen)
                    self.conversation_id = result.conversation.id
        except HelpdeskError as error:
            self._show_desk_error(error, writing=True)
            if self._unsent and isinstance(error, StoreError):
                # Looked for once the desk answers again: it may have been stored after all.
                self._unsent_words = (typed, text)
                self._unsent_after = self._last_entry
                self._unsent_cursor = None
                self._stalled = False  # What tells the desk is back comes after this failure.
                self.run_worker(self._note_unsent_cursor(), group="unsent")
                # Read from now on, though nothing changes: a lock that ends says nothing.
                self._poll()
            return False
        self._hide_error()
        self.run_worker(self._typing.stopped(result.conversation.id), group="typing")
        return True

    async def _ensure_conversation(self) -> int:
        if self.conversation_id is None:
            self.conversation_id = (await self.services.desk.start_conversation()).id
            if (kept := self._kept()) is not None:  # Before there was a conversation to keep it.
                await self.services.desk.set_locale(
                    self.conversation_id, kept, chosen=self._chosen is not None
                )
        return self.conversation_id

    # -- actions ----------------------------------------------------------------------------------

    def action_talk_to_person(self, _anyway: str = "") -> None:
        """Escalate with reason `customer-asked`, whatever the bot is doing."""
        # A worker: the key is handled at once even while a question is still being stored.
        self.run_worker(self._talk_to_person(), group="talk-to-person")

    async def _talk_to_person(self) -> None:
        try:
            async with self._starting:
                # Before any message, the conversation starts with the escalation, in one write;
                # unless it is not in English (picked, or a browser's), which it keeps first.
                conversation_id = self.conversation_id
                if (kept := self._kept()) is not None:
                    if conversation_id is None:
                        conversation_id = await self._ensure_conversation()
                    else:  # A browser's conversation, made empty with its page.
                        # Picked (F9), or only the terminal's or browser's: agents are told which.
                        await self.services.desk.set_locale(
                            conversation_id, kept, chosen=self._chosen is not None
                        )
                result = await self.services.desk.talk_to_person(conversation_id)
                self.conversation_id = result.conversation.id
        except HelpdeskError as error:
            self._show_desk_error(error, action=True)
            return
        if not result.escalated:
            if result.conversation.state is State.WAITING:
                self.notify(self.gettext("You are already waiting for a person."))
            else:
                self.notify(self.gettext("A person already has this conversation."))
        await self.refresh_log()

    @on(LanguageSwitch.Pressed)
    async def _language_pressed(self, event: LanguageSwitch.Pressed) -> None:
        event.stop()
        await self.action_switch_locale()

    async def action_switch_locale(self) -> None:
        """Show the chat in the next language (of two: the other one)."""
        await self.switch_locale(self._next_locale())

    async def switch_locale(self, locale: Locale) -> None:
        """The customer's choice: kept with the conversation (a `locale-set` event), or until
        their first message starts one."""
        if locale == self.locale:
            return
        async with self._starting:  # The question being stored keeps the choice, or its chat.
            if self.conversation_id is None:
                self._chosen = locale
                self._show_in(locale)
                return
            try:
                await self.services.desk.set_locale(self.conversation_id, locale)
            except HelpdeskError as error:
                self._show_desk_error(error, action=True)
                return
            self._chosen = locale  # Kept by a new chat (Ctrl+B) as well.
        await self.refresh_log()

    async def action_new_conversation(self) -> None:
        """Start afresh: the next question opens a new conversation, and the old one stays on
        record (in the queue, if it waits for a person). While a person has the conversation, or
        it waits for one, asked first: their reply goes to the old one, and a new chat started
        at once left the customer waiting where it would never appear."""
        if self.conversation_id is None:
            return
        conversation = self.conversation
        if conversation is None or conversation.state not in PERSON_HAS_IT:
            await self._start_afresh()
            return
        from chatbot.tui.screens.new_chat_dialog import NewChatDialog

        asked_of = self.conversation_id

        async def answered(start: bool | None) -> None:
            if start and self.conversation_id == asked_of:  # Not started afresh meanwhile.
                await self._start_afresh()

        agent = conversation.agent if conversation.state is State.CLAIMED else None
        self.app.push_screen(NewChatDialog(conversation.state, agent, locale=self.locale), answered)

    async def _start_afresh(self) -> None:
        """Leave the conversation shown for none: the next question starts one."""
        async with self._loading:  # Not while entries of the old one are being shown.
            self.conversation_id = None
            self.conversation = None
            self._last_entry = 0
            self._answers.clear()
            self._latest_answer = None
            self._given = None
            await self.log_view.query_children().exclude(".welcome").remove()
            self.log_view.anchor(False)
            self.log_view.scroll_home(animate=False, force=True)  # The greeting from its start.
            self._acknowledgement = None
            self._newest_is_customer = False
            # The new chat goes on in the language shown: one the customer picked stays their
            # choice (`_chosen`, stored with the new conversation, so detection does not undo
            # it: an English question tapped in a chat switched to 中文 flipped it to English);
            # one detected is the one offered, until the first message decides again.
            self._offered = self.locale
            self._show_status()
            self.working = False
            self._hide_rating()
            self._hide_error()
        self.question.focus()
        self.refresh_bindings()

    @on(RatingPrompt.Rated)
    async def _rated(self, event: RatingPrompt.Rated) -> None:
        event.stop()
        await self.rate(event.rating)

    async def rate(self, rating: int) -> bool:
        """Store the customer's 1–5 rating of the resolved conversation; whether it was."""
        if self.conversation_id is None:
            return False
        try:
            await self.services.desk.rate(self.conversation_id, rating=rating)
        except HelpdeskError as error:
            self._show_desk_error(error, action=True)
            return False
        self._hide_error()
        await self.refresh_log()
        return True

    def _hide_rating(self) -> None:
        """No rating is asked (given, here or elsewhere; the conversation reopened). The focus
        leaves the prompt for the question box at once: Textual moves it off a hidden widget only
        once the screen is laid out again, and then to the conversation (keys in between reached
        the hidden prompt, a `3` rating a conversation no longer resolved)."""
        if self.rating.has_focus:
            self.question.focus()
        self.rating.display = False
        self._show_placeholder()

    def _awaiting_feedback(self) -> MessageBubble | None:
        """The latest bot answer, if the customer has not judged it yet, nothing was said after
        it (see `_show`), and no person has the conversation nor is waited for."""
        bubble = self._latest_answer
        if bubble is None or not bubble.asks_for_feedback or not self._offers_a_person():
            return None
        return bubble

    def _offers_a_person(self) -> bool:
        """Whether "Talk to a person" can mean something: the bot or nobody has the conversation
        (not started, with the bot, resolved)."""
        return self.conversation is None or self.conversation.state not in PERSON_HAS_IT

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "talk_to_person" and not parameters:
            # Left out of the footer; the key's other binding still answers it.
            return self._offers_a_person()
        if action == "feedback" and len(parameters) == 1 and self._awaiting_feedback() is None:
            # Greyed out before the first message, where a customer learns the keys; left out
            # once the conversation has no answer to judge (a person's replies, one already
            # judged), where greyed keys looked like they should do something.
            return None if self.conversation_id is None else False
        if action == "new_conversation":
            if self.services.fixed_conversation:
                return False  # A browser's conversation is the one its cookie names.
            return None if self.conversation_id is None else True
        return True

    async def action_feedback(self, value: str, _anyway: str = "") -> None:
        bubble = self._awaiting_feedback()
        if bubble is not None:
            await self._give_feedback(bubble, Feedback(value))
        elif (latest := self._latest_answer) is not None and (
            latest.judging or latest.message.feedback is not None
        ):
            self.notify(self.gettext("You already told us about the bot's last answer."))
        elif not self._offers_a_person():
            self.notify(self.gettext(WITH_A_PERSON))
        else:
            self.notify(
                self.gettext(
                    "There is no answer from the bot to mark: Helpful and Not helpful are for "
                    "the bot's answers, not a person's."
                )
            )

    @on(MessageBubble.FeedbackGiven)
    async def _feedback_given(self, event: MessageBubble.FeedbackGiven) -> None:
        bubble = self._answers.get(event.message_id)
        if bubble is not None and bubble is self._awaiting_feedback():
            await self._give_feedback(bubble, event.feedback)

    async def _give_feedback(self, bubble: MessageBubble, feedback: Feedback) -> None:
        assert self.conversation_id is not None
        bubble.judging = True  # A second key press while this one is stored does nothing.
        self.refresh_bindings()
        try:
            await self.services.desk.feedback(
                self.conversation_id, entry_id=bubble.message.id, value=feedback
            )
        except HelpdeskError as error:
            bubble.judging = False
            self._show_desk_error(error, action=True)
            return
        await bubble.show_feedback(feedback)
        await self.refresh_log()

    def palette_commands(self) -> Iterable[PaletteCommand]:
        t = translations(self.locale)
        if self._offers_a_person():
            yield PaletteCommand(
                t.gettext("Talk to a person"),
                t.gettext("Hand this conversation to a support agent"),
                self.action_talk_to_person,
            )
        for locale in LOCALES:
            if locale != self.locale:
                yield PaletteCommand(
                    t.gettext("Language: {language}").format(language=LANGUAGE_NAMES[locale]),
                    t.gettext("Show this chat in another language"),
                    lambda locale=locale: self.switch_locale(locale),  # type: ignore[misc]
                )  # fmt: skip
        # Palette titles are read as markup, so a question with brackets is left to typing.
        offered = self.services.suggestions if self._suggesting() else ()
        known = self.services.bot_here or self.app.is_web  # As the list says it.
        for suggestion in (s for s in offered if "[" not in s.question):
            question = suggestion.question
            yield PaletteCommand(
                t.gettext("Ask: {question}").format(question=question),
                t.gettext("A question to try") if not known
                else t.gettext("A question with recorded answers") if suggestion.answered
                else t.gettext("A question with recorded answers: {note}").format(
                    note=t.gettext(PERSON_REPLIES)
                ),
                lambda question=question: self.ask(question),  # type: ignore[misc]
            )  # fmt: skip
        if self.conversation_id is not None and not self.services.fixed_conversation:
            yield PaletteCommand(
                t.gettext("New conversation"),
                t.gettext("Start afresh; this conversation stays on record"),
                self.action_new_conversation,
            )
        if self.rating.display:
            for rating in RATINGS:
                words = t.gettext(RATING_WORDS[rating]) if rating in RATING_WORDS else str(rating)
                yield PaletteCommand(
                    t.gettext("Rating: {rating}").format(rating=words),
                    t.gettext("How satisfied you are with how this conversation was resolved"),
                    lambda rating=rating: self.rate(rating),  # type: ignore[misc]
                )  # fmt: skip
        if self._awaiting_feedback() is not None:
            yield PaletteCommand(
                t.gettext("Mark the last answer helpful"),
                t.gettext("Tell us the bot's answer helped"),
                lambda: self.action_feedback(Feedback.HELPFUL.value),
            )
            yield PaletteCommand(
                t.gettext("Mark the last answer not helpful"),
                t.gettext("Ask a person to take a look"),
                lambda: self.action_feedback(Feedback.NOT_HELPFUL.value),
            )
