"""One conversation as the agent sees it: transcript (internal notes included), the bot's
candidates, and the agent's moves.

The footer offers only the moves that apply (claim a waiting conversation, reopen a resolved one,
reply, resolve or hand back one's own); pressing the key of one that does not apply says why, in
the line above the reply box, where the agent is looking. Whatever the agent types lands in the
reply box (or the note box), never on a widget that would drop it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import events, getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input, Static

from chatbot.desk.aio import unreachable
from chatbot.desk.models import (
    MAX_NOTE_CHARS,
    MAX_REPLY_CHARS,
    Author,
    ChatEvent,
    ChatMessage,
    Conversation,
    Decided,
    Entry,
    Outcome,
    State,
    StoredDecision,
)
from chatbot.desk.service import WroteMeanwhile, question_for_bot
from chatbot.desk.states import Move, Refused, Role, next_state
from chatbot.drafts import draft_owner, join_drafts, read_agent_draft, store_agent_draft
from chatbot.errors import HelpdeskError
from chatbot.i18n import N_, translations
from chatbot.knowledge_base.models import Passage
from chatbot.notices import by_question, claimed_for, needs_decisions, waiting_for
from chatbot.text import clip, is_blank, printable
from chatbot.tui.agent_name import named
from chatbot.tui.commands import PaletteCommand
from chatbot.tui.localize import localize_bindings, styled
from chatbot.tui.rereader import Rereader
from chatbot.tui.send_guard import after
from chatbot.tui.services import Services
from chatbot.tui.slow import DESK_STALL_S, if_longer
from chatbot.tui.state_words import state_word
from chatbot.tui.typing_signal import TypingSignal
from chatbot.tui.widgets.candidate_bars import CandidateBars
from chatbot.tui.widgets.chat_log import ChatLog
from chatbot.tui.widgets.plain_input import joined_lines
from chatbot.tui.widgets.queue_list import (
    DeskTrouble,
    coarse_time,
    desk_error,
    wait_time,
)
from chatbot.tui.widgets.send_box import SendBox
from chatbot.tui.widgets.transcript import EARLIER_KEY, PAGE, Transcript
from chatbot.tui.widgets.typing_line import TypingLine

if TYPE_CHECKING:
    from chatbot.tui.app import HelpDeskApp

REPLY_PLACEHOLDER = N_("Reply to the customer and press Enter")
NOT_DONE = N_("Not done: the desk's database cannot be reached. Try again in a moment.")
"""Said above the reply box when a move fails on the database (what was typed stays in the box);
the console's line says the rest."""
NOT_DONE_THERE = N_(
    "Not done in conversation {number}: the desk's database cannot be reached. What you typed "
    "there is kept."
)
"""Said in a notice when a move fails on the database after the agent left its conversation
(Escape while it waited): the line above the reply box is out of sight."""
NOT_DONE_BACK = N_(
    "The desk's database can be reached again, but that was not done: try it again now."
)
"""Said in place of `NOT_DONE` once the desk answers again (see `_watch_for_desk`): "cannot be
reached" stayed above the reply box long after it could be."""
DESK_PROBE_S = 1.0
"""How often the view reads its conversation while `NOT_DONE` is said, to tell when it is over."""
WROTE_MEANWHILE = N_("The customer has just written again: read it, then resolve.")
"""A resolve refused as the customer wrote after what was on screen (now shown, as the view
reads the conversation again)."""
WROTE_BEFORE_HAND_BACK = N_("The customer has just written again: read it, then hand back.")
"""A hand-back refused as the customer wrote after the message the console quoted."""
HAND_BACK_QUOTE = N_(
    "The bot will answer the customer's message “{text}”. Ctrl+G again hands back; Ctrl+R "
    "resolves instead."
)
"""Said before handing back when there is a question for the bot (`question_for_bot`)."""
NEXT_MESSAGE = N_("Handed back: the bot will answer the customer's next message.")
"""Said once handed back with no question for the bot: nothing the customer wrote since the last
reply asks anything (a thank-you, a request for a person), so the bot waits for them."""
NOTE_PLACEHOLDER = N_("Internal note for agents (the customer never sees it); Enter saves")
BOT_HAS_IT = N_("The bot is answering this conversation.")
RESTORED = N_("Your unsent reply from before is back.")
"""Said above the box a kept reply was put back in (by an app of this agent's that ended, or one
still open in another tab), while the box begins with it: what they type next joins it."""
SENT_ELSEWHERE = N_("You sent “{words}” from another tab or window: it is no longer in this box.")
"""Said as the agent's kept reply, sent from another app of theirs, is taken out of this box:
its Enter sent it to the customer a second time."""
NOT_SENT = N_("Not sent. {why}")
"""An Enter in the box of a conversation not the agent's (yet), with the sentence saying whose it
is, or what to do first; what was typed stays in the box."""
WAITING = N_("Waiting for the desk's database… What you type stays in the box.")
"""Said above the box while a move the agent made (a claim, a reply) waits on the desk longer
than `WAITING_SAID_S`: in a lock, nothing said whether the key had been taken."""
WAITING_SAID_S = 1.5
"""How long a move waits on the desk before the line above the box says so."""
SAVE_DRAFTS_S = 1.0
"""How far behind the agent's typing the kept reply and note are at most: a console killed
outright (`kill -9`, a crash) loses no more than this of what was typed."""

# The moves an agent makes with a key, and the state machine's move each one is.
MOVES = {
    "claim": Move.CLAIM,
    "reopen": Move.REOPEN,
    "send_passage": Move.REPLY,
    "resolve": Move.RESOLVE,
    "hand_back": Move.HAND_BACK,
    "release": Move.RELEASE,
}


class ConversationView(Vertical):
    """Claim or reopen, reply (typed, or a passage edited first), add notes, resolve or hand back;
    everything else is read-only."""

    BINDINGS = [
        # Short labels: the footer has 80 columns for all of them, with the app's own.
        Binding("ctrl+l", "claim", N_("Claim")),
        Binding("ctrl+l", "reopen", N_("Reopen")),
        Binding("ctrl+o", "send_passage", N_("Passage"), tooltip=N_("Put a passage in your reply")),
        Binding("ctrl+n", "toggle_note", N_("Note"), tooltip=N_("Write a note only agents see")),
        Binding("ctrl+r", "resolve", N_("Resolve")),
        Binding(
            "ctrl+g", "hand_back", N_("To bot"), tooltip=N_("Hand the conversation back to the bot")
        ),
        Binding("escape", "close", N_("Back"), tooltip=N_("Back to the queue")),
        # While a move waits on the desk (up to the database's deadline in an outage), the view
        # takes no key: Escape then leaves from the app's own turn (see `check_action`).
        Binding("escape", "leave", N_("Back"), show=False, priority=True),
        Binding(EARLIER_KEY.lower(), "show_earlier", N_("Earlier")),
        # The console's keys work here too, without taking footer room from the moves above.
        Binding("ctrl+f", "console('find')", N_("Find"), show=False),
        Binding("f4", "console('team')", N_("Team"), show=False),
        Binding("f6", "console('take_next')", N_("Next"), show=False),
    ]

    @dataclass
    class Closed(Message):
        """The agent went back to the queue."""

        conversation_id: int

    @dataclass
    class ConsoleAction(Message):
        """A key of the console's own (find, team) pressed while this view has the focus."""

        action: str

    @dataclass
    class Read(Message):
        """The agent has now seen the conversation up to `entry_id` (stored with the desk)."""

        conversation_id: int
        entry_id: int

    transcript = getters.query_one(Transcript)
    reply_input = getters.query_one("#reply", SendBox)
    bars = getters.query_one(CandidateBars)

    def __init__(
        self,
        services: Services,
        conversation_id: int,
        *,
        id: str | None = None,
        drafts: Path | None = None,
    ) -> None:
        super().__init__(id=id)
        self.services = services
        self.t = translations(services.locale)
        """The agent's language: what this view says is in it, what people wrote as written."""
        localize_bindings(self, services.locale)
        self._loading = asyncio.Lock()
        self._sending = asyncio.Lock()
        """Held while a reply or note is with the desk: another conversation is shown only once
        it has gone or failed, so its words are taken off (or kept in) the right box."""
        self._waiting = 0
        """Handlers of this view awaiting the desk now: its keys wait behind them."""
        self._keys_queued = 0
        """Keys passed to this view (typed on the transcript) and not handled yet: behind a
        handler awaiting the desk, they wait here (see `_focus_box`)."""
        self._slow = 0
        """Moves the agent made that have waited on the desk over `WAITING_SAID_S` by now."""
        self._desk_probe: Timer | None = None
        """Reads the conversation while `NOT_DONE` is said (see `_watch_for_desk`)."""
        self._probing = False
        self._desk_stalled = False
        """A read since `NOT_DONE` was said failed, or waited over `DESK_STALL_S`."""
        self._reader = Rereader(self, self.reload, group="follow", done=lambda: self.closed)
        self.loaded = asyncio.Event()
        """Set once the conversation is first shown."""
        self.closed = False
        """Hidden in the console, kept for the next conversation opened: nothing to refresh."""
        self._typing = TypingSignal(services, Author.AGENT)
        """Tells the customer that the agent holding the conversation types a reply."""
        self._kept_drafts: dict[int, dict[bool, str]] = {}
        """The reply and note drafts of conversations shown before, for when each is shown
        again: Escape to the queue and back lost a half-written reply without asking."""
        self._kept_passages: dict[int, tuple[Passage, str]] = {}
        """The passage (and its line as put in the box) each kept reply draft was begun from."""
        self._kept_marks: dict[int, tuple[int, list[str]]] = {}
        """For each kept reply draft: the last entry read when it was put aside, and its
        `_shared` then."""
        self._own_replies: set[int] = set()
        """The replies this view sent (any other of this agent's came from another app)."""
        self._said_over: str | None = None
        """What the box was set to as a line about it was said: that change is the line's own,
        not an edit that takes it away."""
        self._saved_drafts = drafts
        """Where this agent's unsent replies and notes are kept as they type (a browser
        session's, or a terminal's), for when they open each conversation again, in this app or
        the next (None: not kept)."""
        self._stored: dict[bool, str] = {False: "", True: ""}
        """The shown conversation's reply and note as last read from, or stored in, that
        folder (see `store_agent_draft`)."""
        self._save_pending = False
        """A save of the drafts is due within `SAVE_DRAFTS_S`."""
        self._box: SendBox | None = None
        """The reply box, once mounted: by this view's unmount it is gone from the DOM."""
        self._start(conversation_id)
        self._read_saved_drafts()

    def _start(self, conversation_id: int) -> None:
        self.conversation_id = conversation_id
        self.conversation: Conversation | None = None
        self._last_entry = 0
        self._since_reply: list[ChatMessage] = []
        """The newest reply read (a bot answer or an agent's message) and the customer's
        messages after it; every message read while there is none: what `question_for_bot`
        chooses the bot's question from, as the hand-back does."""
        self._hand_back_asked: int | None = None
        """The customer's message a hand-back was asked about: Ctrl+G again hands back."""
        self._read_entry = 0
        self._decision: StoredDecision | None = None
        """The bot's latest decision here (what the header says it did last, once it has the
        conversation again)."""
        self._shown_decisions: tuple[tuple[int, Outcome | None], ...] | None = None
        """The decisions beside the transcript (see `shown_decisions`), with what came of each."""
        self._outcomes: dict[int, Outcome] = {}
        """What came of each decision whose `decided` event was read: `kept` ones were never
        said to the customer."""
        self.note_mode = False
        """The box below the transcript writes an internal note instead of a reply."""
        self._drafts = {False: "", True: ""}
        """What was typed in the box as a reply (False) and as a note (True), each kept while the
        box shows the other: a note's words must never become a reply's."""
        self.passage: Passage | None = None
        """The passage put in the reply box with Ctrl+O, sent with it as its source."""
        self._passage_line = ""
        self._why: str | None = None
        """Why the last key pressed did nothing; shown until the next key or change."""
        self._lasting = False
        """`_why` says a move failed on the database: typing leaves it (the keys typed while the
        move waited came in just after it, and took it away unread)."""
        self._restored = ""
        """The reply put back in the box from the drafts folder, said so while the box begins
        with it (typed after with no space, it went out glued to words nobody knew were there)."""
        self._unchecked: list[ChatMessage] = []
        """This agent's replies read since the last `_take_sent_elsewhere`."""
        self._check_after: int | None = None
        """A kept draft's conversation shown again: its replies after this entry, in the first
        page read, are checked too (None: only those read from then on)."""
        self._shared: list[str] = []
        """The reply as this view read it from, or stored it in, the drafts folder, each time
        since the box last began otherwise (oldest first, each the start of the next): what
        another app of this agent's may have put in its own box, and sent."""
        self.loaded.clear()
        self.closed = False

    async def show(self, conversation_id: int) -> None:
        """Show another conversation in this view: opening one costs its data, not a new set of
        widgets (mounting them took most of the time an open took)."""
        async with self._sending, self._loading:
            self.save_drafts()  # The one shown until now, as it is.
            self._keep_drafts(self.reply_input.value)
            self._start(conversation_id)
            self._drafts = self._kept_drafts.pop(conversation_id, self._drafts)
            source = self._kept_passages.pop(conversation_id, None)
            if (mark := self._kept_marks.pop(conversation_id, None)) is not None:
                self._check_after, self._shared = mark
            self._read_saved_drafts()
            self.transcript.clear()
            # Enters still on their way were meant for the other one: `put` drops them.
            self.reply_input.put(self._drafts[False])
            if source is not None:  # The reply was begun from a passage: it goes with it.
                self.passage, self._passage_line = source
            self.query_one("#conversation-header", Static).update("")
            self.query_one(TypingLine).show("", None)
        self.transcript.focus()
        await self.reload()

    def close(self) -> None:
        """Hidden until `show`: store changes are not its business meanwhile."""
        self.closed = True
        self.save_drafts()

    def _keep_drafts(self, typed: str) -> None:
        """Keep what was typed here (`typed`: what the box holds) for when this conversation is
        shown again: a reply begun from a passage (Ctrl+O) with its source, for it goes out
        with it (it was dropped, and a passage edited in the box was lost without a word)."""
        drafts = dict(self._drafts)
        drafts[self.note_mode] = typed
        if self.passage is not None and drafts[False]:
            self._kept_passages[self.conversation_id] = (self.passage, self._passage_line)
        else:
            self._kept_passages.pop(self.conversation_id, None)
        if any(drafts.values()):
            self._kept_drafts[self.conversation_id] = drafts
            self._kept_marks[self.conversation_id] = (self._last_entry, self._shared)
        else:
            self._kept_drafts.pop(self.conversation_id, None)
            self._kept_marks.pop(self.conversation_id, None)

    def _read_saved_drafts(self) -> None:
        """Put back the reply and note this agent left unsent here (in an app of theirs that
        ended, or was killed), joined with what this app kept of them meanwhile: the reply in the
        box, the note in note mode's. Only ever in a box: nothing goes out without the agent's
        Enter. They stay kept until sent or cleared: read, not taken (taken, a console killed
        after putting them back lost them)."""
        self._stored = {False: "", True: ""}
        owner = self._draft_owner()
        if owner is None:
            return
        folder, agent = owner
        for note in (False, True):
            try:
                saved = read_agent_draft(folder, self.conversation_id, agent=agent, note=note)
            except OSError:  # An unreadable folder: nothing to put back, as before.
                continue
            self._stored[note] = saved
            had = self._drafts[note]
            self._drafts[note] = join_drafts(saved, had)
            if not note and saved:
                self._share(saved)
                if saved not in had:
                    self._restored = saved  # Not this app's own: another's, said so (`_hint`).

    def _draft_owner(self) -> tuple[Path, str] | None:
        """The folder this agent's drafts are kept in, and whose they are there (None: not
        kept, or no agent named yet)."""
        folder, agent = self._saved_drafts, self.services.agent
        if folder is None or agent is None:
            return None
        return folder, draft_owner(folder, agent)

    def _drafts_edited(self) -> None:
        """The box changed: the drafts are saved within `SAVE_DRAFTS_S`, with whatever else is
        typed meanwhile (a save per key would write the file on every key)."""
        if not self._save_pending and self._saved_drafts is not None:
            self._save_pending = True
            self.set_timer(SAVE_DRAFTS_S, self.save_drafts)

    def save_drafts(self) -> None:
        """Keep the shown conversation's reply and note as they are now, for the next app of
        this agent's (a blank one is no draft: sent or cleared, it is forgotten)."""
        self._save_pending = False
        owner, box = self._draft_owner(), self._box
        if owner is None or box is None:
            return
        folder, agent = owner
        drafts = dict(self._drafts)
        drafts[self.note_mode] = box.value
        for note, text in drafts.items():
            if text == self._stored[note]:
                continue
            try:
                kept = store_agent_draft(
                    folder, self.conversation_id, agent=agent, note=note, text=text,
                    base=self._stored[note],
                )  # fmt: skip
            except OSError:  # A full disk: tried again on the next edit.
                continue
            # Words another app of this agent's kept meanwhile are joined in the folder, not in
            # this box: the box's next save replaces only its own (the base was the joined
            # draft, and a tab that had sent its reply deleted the other's words as it closed).
            self._stored[note] = kept if is_blank(kept) or kept == text else text
            if not note:
                self._share(self._stored[note])

    def _share(self, kept: str) -> None:
        """The reply is `kept` in the drafts folder now (see `_shared`)."""
        self._shared = [shared for shared in self._shared if kept.startswith(shared)]
        if kept and kept not in self._shared:
            self._shared.append(kept)

    def on_unmount(self) -> None:
        # The app ends (a page closed, `serve` stopping, the terminal app quit): what this agent
        # typed and did not send, here, waits for them (the conversations shown before were
        # kept as each was left).
        self.save_drafts()

    def compose(self) -> ComposeResult:
        yield Static(id="conversation-header")
        with Horizontal(id="conversation-body"):
            with Vertical(id="conversation-main"):
                yield Transcript(
                    clock=self.services.clock, locale=self.services.locale, id="transcript"
                )
                yield TypingLine(self.services.clock, id="typing-hint")
                yield Static(id="reply-hint")
                # Never select on focus: tabbing back and typing would replace a draft.
                # Ctrl+N in order with the keys around it: see `_switch`.
                yield SendBox(
                    placeholder=self.t.gettext(REPLY_PLACEHOLDER),
                    id="reply",
                    select_on_focus=False,
                    switch_keys={"ctrl+n"},
                    # F6, Ctrl+F and F4 in order too: the keys after them wait for the
                    # conversation or the dialog they open, never going to this customer.
                    hold_keys={"f6", "ctrl+f", "f4"},
                )
            with SidePane(id="conversation-side"):
                yield Static(self.t.gettext("Passages the bot considered"), classes="section-title")
                yield CandidateBars(locale=self.services.locale, id="candidates")

    def on_mount(self) -> None:
        self._box = self.reply_input
        if self._drafts[False]:  # A reply kept by an earlier app.
            self._box.put(self._drafts[False])
        self.services.changed.subscribe(self, self._store_changed)
        self.transcript.focus()
        # After the mount: the footer hears of binding changes only from a mounted widget.
        self.call_later(self._read_soon)
        self.set_interval(1.0, self._show_header)

    # -- reading ----------------------------------------------------------------------------------

    def _store_changed(self, _version: int) -> None:
        self._read_soon()

    def _read_soon(self) -> None:
        self._reader.soon()

    @contextmanager
    def _desk_call(self, *, said: bool = True) -> Iterator[None]:
        """A handler of this view awaits the desk in the block (see `action_leave`); `said`: for
        a move of the agent's, which once slow the line above the box says it waits on."""
        slow = False

        def waited() -> None:
            nonlocal slow
            slow = True
            self._slow += 1
            self._show_reply_state()

        self._waiting += 1
        try:
            with if_longer(WAITING_SAID_S, waited) if said else nullcontext():
                yield
        finally:
            self._waiting -= 1
            if slow:
                self._slow -= 1
                self._show_reply_state()

    async def _read_decisions(self, entries: Sequence[Entry]) -> None:
        """The decisions a `not-judged` escalation among `entries` is said from (a replay miss
        and Valen declining are told apart), for the transcript; read only when there is one."""
        if needs_decisions(entries):
            stored = await self.services.desk.decisions(self.conversation_id)
            self.transcript.decisions = by_question(stored)

    async def reload(self) -> None:
        """Pick up whatever changed: state, new entries (appended), a newer decision."""
        async with self._loading:  # One at a time, so each entry is written once, in order.
            desk = self.services.desk
            was_mine = self.is_mine
            previous = self.conversation
            try:
                conversation = await desk.conversation(self.conversation_id)
                grew = False
                if self._last_entry == 0:
                    page = await desk.page(self.conversation_id, limit=PAGE)
                    await self._read_decisions(page.entries)
                    self.transcript.start(page)
                    self._note_outcomes(page.entries)
                    self._note_messages(page.entries)
                    if (after := self._check_after) is not None:
                        self._note_replies(entry for entry in page.entries if entry.id > after)
                    if page.entries:
                        self._last_entry = page.entries[-1].id
                    grew = True
                elif conversation.last_entry > self._last_entry:
                    entries = await desk.entries_after(self.conversation_id, self._last_entry)
                    if entries:
                        self._last_entry = entries[-1].id
                        await self._read_decisions(entries)
                        self.transcript.add(entries)
                        self._note_outcomes(entries)
                        self._note_messages(entries)
                        self._note_replies(entries)
                        grew = True
                # The bot's decisions are read again only when the log grew: a new one is an
                # entry, and so is every change of state (which decides what is shown).
                latest, shown = await self._decisions(conversation) if grew else (None, ())
                for stored in (latest, *shown):
                    if stored is not None and stored.id not in self._outcomes:
                        # Its `decided` event lies before the page read, or came after the log
                        # was: it follows the question decided on.
                        self._note_outcomes(
                            await desk.entries_after(self.conversation_id, stored.message_id)
                        )
                typing = {}
                if conversation.state is State.CLAIMED:  # The customer signals only then.
                    typing = await desk.typing(self.conversation_id)
            except HelpdeskError as error:
                desk_error(self, error)
                self.loaded.set()
                return
            if not self.is_attached:
                # The app closed while the desk answered (a move's reload as the agent quits):
                # there is nothing left to show it in.
                self.loaded.set()
                return
            self.post_message(DeskTrouble(False))
            self.conversation = conversation
            if grew:
                self._show_decisions(latest, shown)
            if previous is None or previous.state != conversation.state:
                self._why = None
            if not self.is_mine and self.passage is not None and not self.note_mode:
                self._drop_passage()
            if not self._sending.locked():  # Else a reply read may be this view's own, on its way.
                self._take_sent_elsewhere()
            self._show_header()
            self.query_one(TypingLine).show(
                self.t.gettext("The customer is typing…"), typing.get(Author.CUSTOMER)
            )
            self._show_reply_state()
            if self.is_mine and not was_mine:
                self._focus_box()
            self.refresh_bindings()
            self.loaded.set()
        # After the conversation shows: a write, and nothing on screen waits for it.
        self.call_later(self._mark_read)

    def _note_replies(self, entries: Iterable[Entry]) -> None:
        """This agent's replies among `entries`, for `_take_sent_elsewhere`."""
        agent = self.services.agent
        for entry in entries:
            if (
                isinstance(entry, ChatMessage)
                and entry.author is Author.AGENT
                and agent is not None
                and entry.agent == agent
            ):
                self._unchecked.append(entry)

    def _take_sent_elsewhere(self) -> None:
        """The reply kept in the drafts folder, once another app of this agent's (a second tab
        that put it back in its box) sent it, comes out of this box: left in, its Enter sent it
        to the customer again. What was typed here after it stays; the agent is told."""
        replies, self._unchecked = self._unchecked, []
        sent = [" ".join(r.text.split()) for r in replies if r.id not in self._own_replies]
        draft = self._drafts[False] if self.note_mode else self.reply_input.value
        # Only words the box still begins with: changed here since, they are the agent's to judge.
        found = [
            shared
            for shared in self._shared
            if not is_blank(shared)
            and draft.startswith(shared)
            and any(" ".join(shared.split()) in text for text in sent)
        ]
        if not found:
            return
        shared = max(found, key=len)
        rest = draft[len(shared) :].lstrip()
        self._restored, self._shared = "", []
        if self.note_mode:
            self._drafts[False] = rest
        else:
            self._said_over = rest
            self.reply_input.put(rest)
        # At once, and in place of those words: a kept copy would come back in the next box.
        self.save_drafts()
        said = self.t.gettext(SENT_ELSEWHERE)
        self.say_why(said.format(words=clip(" ".join(printable(shared).split()), 40)))

    def _note_outcomes(self, entries: Iterable[Entry]) -> None:
        for entry in entries:
            if isinstance(entry, ChatEvent) and isinstance(entry.event, Decided):
                self._outcomes[entry.event.decision] = entry.event.outcome

    @property
    def outcome(self) -> Outcome | None:
        """What came of the latest decision (None: none, or not known)."""
        decision = self._decision
        return None if decision is None else self._outcomes.get(decision.id)

    async def _decisions(
        self, conversation: Conversation
    ) -> tuple[StoredDecision | None, tuple[StoredDecision, ...]]:
        """The bot's latest decision here, and those to show beside the transcript."""
        desk = self.services.desk
        latest = await desk.latest_decision(conversation.id)
        question = conversation.question_entry
        if conversation.state not in WITH_A_PERSON or question is None:
            return latest, shown_decisions(None, (), latest)
        if latest is not None and latest.message_id == question:
            return latest, shown_decisions(question, (latest,), latest)  # Nothing decided since.
        since = await desk.decisions_since(conversation.id, question)
        return latest, shown_decisions(question, since, latest)

    def _show_decisions(
        self, latest: StoredDecision | None, shown: tuple[StoredDecision, ...]
    ) -> None:
        """`shown` beside the transcript, each as what came of it (`kept`: what the bot would
        have done, for it said nothing); `latest` is the bot's latest decision, for the header."""
        self._decision = latest
        said = tuple((stored.id, self._outcomes.get(stored.id)) for stored in shown)
        if said == self._shown_decisions:
            return
        self._shown_decisions = said
        self.bars.show_all(
            [(stored.decision, outcome) for stored, (_, outcome) in zip(shown, said, strict=True)],
            timings=self.services.timings,
        )
        # Stacked under the transcript, a pane that only says "not judged" takes no more than
        # its line: at 80x24 it held two fifths of the height the transcript needs.
        side = self.query_one(SidePane)
        side.set_class(not shown, "-unjudged")
        side.set_class(len(shown) > 1, "-several")

    async def _mark_read(self) -> None:
        """Everything written so far is on screen: this agent has read it."""
        agent = self.services.agent
        if agent is None or self._last_entry <= self._read_entry:
            return
        entry = self._last_entry
        try:
            with self._desk_call(said=False):  # Nobody waits on it.
                await self.services.desk.mark_read(
                    self.conversation_id, agent=agent, entry_id=entry
                )
        except HelpdeskError as error:
            desk_error(self, error)
            return
        self._read_entry = entry
        self.post_message(self.Read(self.conversation_id, entry))

    @property
    def is_mine(self) -> bool:
        conversation = self.conversation
        return (
            conversation is not None
            and conversation.state is State.CLAIMED
            and self.services.agent is not None
            and conversation.agent == self.services.agent
        )

    def _show_header(self) -> None:
        conversation = self.conversation
        if conversation is None or self.closed:
            return
        now = self.services.clock()
        t = self.t
        title = t.gettext("Conversation #{number}").format(number=conversation.id)
        header = Text.assemble((title, "bold"), " · ")
        if conversation.state is State.WAITING and conversation.waiting_since is not None:
            header.append(
                waiting_for(wait_time(conversation.waiting_since, now), locale=self.services.locale)
            )
        elif conversation.state is State.CLAIMED:
            since = conversation.claimed_at or conversation.updated_at
            header.append(
                claimed_for(
                    printable(conversation.agent or "?"),
                    coarse_time(since, now),
                    locale=self.services.locale,
                )
            )
        else:  # Said in the agent's language, as the waiting and claimed states are.
            header.append(state_word(conversation.state, locale=self.services.locale))
        reason, probability = conversation.reason, conversation.top_probability
        if conversation.state is State.BOT:
            # The escalation the conversation keeps (its reason and score) is over: handed back,
            # the bot has it, and what it did last is what stands.
            reason, probability = None, None
            decision = self._decision
            if decision is not None and self.outcome == "answered" and decision.decision.answer:
                answered = t.gettext("answered from {passage}").format(
                    passage=printable(decision.decision.answer.id)
                )
                header.append(f" · {answered}")
                probability = decision.decision.top_probability
        if reason is not None:
            header.append(f" · {reason.value}")
        if probability is not None:
            top = t.gettext("top {probability}").format(probability=f"{probability:.2f}")
            header.append(f" · {top}")
        self.query_one("#conversation-header", Static).update(header)

    def _hint(self) -> Text:
        """The line above the reply box: what the agent can do here, or why they cannot."""
        conversation = self.conversation
        assert conversation is not None
        t = self.t
        if self._slow:
            return Text(t.gettext(WAITING))
        if self._why is not None:
            return Text(self._why)
        if self.note_mode:
            if self.app.is_web:  # A browser keeps Ctrl+N for a new window.
                return Text(t.gettext("Internal note: only agents see it. Enter saves it; Escape "
                                      "goes back."))  # fmt: skip
            return Text(
                t.gettext(
                    "Internal note: only agents see it. Enter saves it; Ctrl+N or Escape goes back."
                )
            )
        if self.is_mine and self.passage is not None:
            sentence = t.gettext("Passage {passage} is in your reply: edit it and press Enter to "
                                 "send. Clearing the box drops it.")  # fmt: skip
            return styled(sentence, {"passage": "bold"}, passage=printable(self.passage.id))
        if self.is_mine and self._restored and self.reply_input.value.startswith(self._restored):
            return Text(t.gettext(RESTORED), style="bold")
        if self.is_mine:
            return Text(t.gettext("You own this conversation: the bot is silent."), style="dim")
        if conversation.state is State.WAITING:
            return Text(t.gettext("Claim this conversation (Ctrl+L) to reply."), style="bold")
        if conversation.state is State.CLAIMED:
            owner = _shown_name(conversation.agent, t.gettext("another agent"))
            return Text(self._owns_it(owner), style="dim")
        if conversation.state is State.RESOLVED:
            return Text(
                t.gettext("Resolved. Reopen it (Ctrl+L) to follow up with the customer."), "dim"
            )
        return Text(t.gettext(BOT_HAS_IT), style="dim")

    def _show_reply_state(self) -> None:
        if self.conversation is None:
            return
        hint = self.query_one("#reply-hint", Static)
        hint.update(self._hint())
        hint.set_class(bool(self._slow) or self._why is not None or self.note_mode, "-warning")
        field = self.reply_input
        # Never disabled: what the agent types before the conversation is theirs (or while their
        # claim waits on the desk) stays in it, for once it is; its Enter says why it did not go.
        field.placeholder = self._placeholder()
        field.set_class(self.note_mode, "-note")

    def _placeholder(self) -> str:
        """What the empty box says: what to write in it, or, on a colleague's conversation, who
        alone can reply there (it invited a reply, and then refused the words typed)."""
        t = self.t
        conversation = self.conversation
        if self.note_mode:
            return t.gettext(NOTE_PLACEHOLDER)
        if conversation is not None and not self.is_mine:
            # Nothing typed here goes yet: on a colleague's claim the box says who alone can
            # reply; elsewhere the line above it says what would let the agent reply (it invited
            # a reply on a waiting or resolved conversation, or the bot's).
            if conversation.state is State.CLAIMED:
                return self._why_not(conversation.state, Move.REPLY, conversation.agent)
            return ""
        return t.gettext(REPLY_PLACEHOLDER)

    def say_why(self, why: str, *, lasting: bool = False) -> None:
        """Tell the agent, where they are looking, why what they pressed did nothing (`lasting`:
        until a key other than one typing in the box, or a change)."""
        self._why, self._lasting = why, lasting
        self._show_reply_state()

    # -- keys -------------------------------------------------------------------------------------

    def post_message(self, message: Message) -> bool:
        posted = super().post_message(message)
        if posted and isinstance(message, events.Key):
            self._keys_queued += 1  # Counted down as `on_key` takes it.
        return posted

    def _focus_box(self) -> None:
        """Give the reply box the focus, the conversation having become the agent's, once every
        key typed before has reached this view and been handled (each typed one goes to the box
        in turn, `_type`); the keys typed from now on are held by the app until then. Moved
        while keys were on their way here (waiting on this view behind a claim and its reload,
        or still in the app's or the transcript's queue), the keys typed next went straight into
        the box ahead of them: "Hi, Ben here" became ", Ben hereHi", and "intact" "inct…ta"."""
        app = cast("HelpDeskApp", self.app)
        if not app.hold_input():
            # Held already (the conversation opening): they are handed on after this focus.
            self.reply_input.focus()
            return
        # The keys handed on so far went to the focused widget, and from it up to this view:
        # a callback follows them through each queue in turn, so it comes here behind them all.
        focused = app.focused
        path = focused.ancestors_with_self if focused is not None else []
        path = path[: path.index(self)] if self in path else []

        def handled() -> None:
            self.reply_input.focus()
            app.release_input()  # After the focus moves: both go by the app's queue, in turn.

        def follow(step: int) -> None:
            if step < len(path) and path[step].call_later(follow, step + 1):
                return
            if not self._keys_queued or not self.call_later(handled):
                # None waits here (the box has the focus as the claim returns, its reload
                # waiting still), or this view has gone: nothing is left to wait for.
                handled()

        follow(0)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in MOVES:
            # Hidden where it cannot apply; pressing the key anyway says why (see on_key).
            return self._refusal(action) is None
        if action == "show_earlier":
            # Hidden, not greyed out, in the footer of the many conversations that show everything.
            return True if self.is_mounted and self.transcript.hidden else False
        if action == "leave":
            # Only while a handler here awaits the desk: otherwise Escape goes its usual way, in
            # turn with the keys around it (in a note it goes back to the reply box, and the
            # keys typed before it belong to the note).
            return bool(self._waiting) and not self.note_mode and not self.closed
        return True

    def _refusal(self, action: str) -> str | None:
        """Why `action` does not apply now, in the state machine's words (None: it does)."""
        conversation = self.conversation
        if conversation is None:
            return self.t.gettext("The conversation is still loading.")
        move = MOVES[action]
        owner = conversation.agent
        try:
            next_state(conversation.state, move, role=Role.AGENT, owner=owner,
                       agent=self.services.agent, conversation_id=conversation.id)  # fmt: skip
        except Refused:
            return self._why_not(conversation.state, move, owner)
        return None

    def _why_not(self, state: State, move: Move, owner: str | None) -> str:
        """Why an agent's move does not apply in `state`, in the reader's language and in what
        the state means (the state machine's own sentence named it: "conversation 1 is bot")."""
        t = self.t
        if state is State.CLAIMED and owner is not None and owner == self.services.agent:
            # "Conversation 1 is already claimed by ana." read to ana as someone else's.
            return t.gettext("You have this conversation already.")
        if state is State.CLAIMED:
            shown = _shown_name(owner, t.gettext("another agent"))
            if move is Move.REPLY:
                return t.gettext("{owner} owns this conversation: only they can reply.").format(
                    owner=shown
                )
            return self._owns_it(shown)
        if state is State.WAITING and move is Move.REPLY:
            return t.gettext("Claim this conversation (Ctrl+L) to reply.")
        if state is State.WAITING:
            return t.gettext("Claim this conversation (Ctrl+L) first.")
        if state is State.RESOLVED:
            return t.gettext("Resolved. Reopen it (Ctrl+L) to follow up with the customer.")
        return t.gettext(BOT_HAS_IT)

    def _owns_it(self, owner: str) -> str:
        """Someone else's claim, and what this agent can still do: write a note, or take the
        claim back to the queue if its agent has left (a closed browser tab keeps its claims,
        and the palette's command for it was found by nobody)."""
        t = self.t
        if self.app.is_web:  # A browser keeps Ctrl+N for a new window: name the footer's key.
            said = t.gettext("{owner} owns this conversation. “Note”, in the footer, adds a note.")
        else:
            said = t.gettext("{owner} owns this conversation. Ctrl+N adds a note.")
        left = t.gettext("If they have left, Ctrl+P “Take {number}…” puts it back in the queue.")
        return f"{said.format(owner=owner)} {left.format(number=f'#{self.conversation_id}')}"

    async def on_key(self, event: events.Key) -> None:
        self._keys_queued = max(self._keys_queued - 1, 0)
        if not any(
            binding.action == "hand_back"
            for binding in self._bindings.key_to_bindings.get(event.key, ())
        ):
            # The quote of what the bot would answer goes with any other key: Ctrl+G then asks
            # again, never hands back with nothing on screen.
            self._hand_back_asked = None
        # Enter too: typed on the transcript with a reply while a move waited, it passes here on
        # its way to the box's binding (the focus is on the box by then).
        typing = ChatLog.Typed.of(event) is not None or event.key == "enter"
        if self._why is not None and not (self._lasting and typing):
            self._why = None
            self._show_reply_state()
        focused = self.app.focused
        if (
            focused is not None
            and focused is not self._box
            and event.key in focused._bindings.key_to_bindings
        ):
            # The focused widget's own key (a scroll of the transcript): its binding runs. Not the
            # box's: it takes its own keys in turn, so one of them here was typed elsewhere before
            # a character moved the focus to it (see `ChatLog.Typed` below).
            return
        if self.reply_input.guard.unread:
            # An Enter pressed before this key has words on their way here (its `Submitted`
            # comes after this key): run now, Ctrl+R resolved before "thanks, bye" went out,
            # which then stayed unsent. As a binding it runs after them, as before.
            return
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if (binding.action not in MOVES or self._refusal(binding.action) is None) and (
                self.check_action(binding.action, ())
            ):
                # Run now, in turn with the keys around it: as a binding it ran once the keys
                # typed after it had been handled. Ctrl+N then a note, typed in one burst on the
                # transcript, put the note's words in the reply's draft, and the note was lost.
                event.stop()
                event.prevent_default()
                if binding.action.startswith("console("):
                    # The next conversation opens in this box, or a dialog over it: what is
                    # typed after F6, Ctrl+F or F4 is for that, not for this customer.
                    self.reply_input.hold()
                with self._desk_call():
                    await self.run_action(binding.action)
                return
        actions = [b.action for b in self._bindings.key_to_bindings.get(event.key, ())]
        moves = [action for action in actions if action in MOVES]
        if moves:
            event.stop()
            event.prevent_default()
            why = self._refusal(moves[0]) or ""
            self.say_why(why)
            return
        if "show_earlier" in actions and not self.check_action("show_earlier", ()):
            # Hidden from the footer where nothing is hidden; pressed anyway, it said nothing.
            event.stop()
            event.prevent_default()
            self.say_why(self.t.gettext("Every message of this conversation is shown."))
            return
        # A printable key reaches the view only from a part of it that takes no text (a text box
        # keeps the keys it takes), whatever has the focus by now: the first key of a quick pair
        # moves it to the reply box before the second arrives. So does a key that deletes the
        # box's text: left to its binding, it ran where the focus was once the characters typed
        # after it had moved it to the box, and Ctrl+U then a reply, typed at once, left an
        # empty box.
        if (typed := ChatLog.Typed.of(event)) is not None:
            event.stop()
            event.prevent_default()
            if typed.character is not None:
                self._type(typed.character)
            else:
                await self._edit(typed.key)

    def on_paste(self, event: events.Paste) -> None:
        # Pasted on the transcript or the side pane (the box keeps its own pastes): meant for the
        # box, like a key typed there, where it used to be lost without a word.
        event.stop()
        if text := joined_lines(event.text):
            self._type(text)

    def _type(self, character: str) -> None:
        """A key typed (or text pasted) while the transcript had the focus goes to the box below
        it."""
        field = self.reply_input
        if field.hold_paste(character):  # Typed after F6: for the conversation it opens.
            return
        field.focus()
        field.append(character)

    async def _edit(self, key: str) -> None:
        """An editing key (Backspace, Ctrl+U, …) pressed while the transcript had the focus: run
        on the box below it, in turn with the characters typed around it."""
        field = self.reply_input
        if field.hold_key(key):  # Typed after F6: for the conversation it opens.
            return
        field.focus()
        await field.press_key(key)

    # -- acting -----------------------------------------------------------------------------------

    async def _refuse(self, error: HelpdeskError) -> None:
        if unreachable(error):
            # The database's own words (its address, the driver's sentences) are the operator's:
            # the agent reads one line here, and the console's line until it is back.
            self.say_why(self.t.gettext(NOT_DONE), lasting=True)
            self.post_message(DeskTrouble(True))
            self._watch_for_desk()
            if self.closed:  # Left while it waited: the line here is out of sight.
                number = f"#{self.conversation_id}"
                said = self.t.gettext(NOT_DONE_THERE).format(number=number)
                self.notify(said, severity="error", markup=False)
            return
        # Read first: a state that changed meanwhile clears the line, and the line names it.
        await self.reload()
        conversation = self.conversation
        if isinstance(error, WroteMeanwhile) and error.move is Move.HAND_BACK:
            self.say_why(self.t.gettext(WROTE_BEFORE_HAND_BACK))
        elif isinstance(error, WroteMeanwhile):
            self.say_why(self.t.gettext(WROTE_MEANWHILE))
        elif isinstance(error, Refused) and conversation is not None:
            self.say_why(self._why_not(error.state, error.move, conversation.agent))
        else:
            self.say_why(_sentence(str(error)))

    def _not_done_said(self) -> bool:
        """The line above the box says a move failed as the database could not be reached."""
        return self._lasting and self._why == self.t.gettext(NOT_DONE)

    def _watch_for_desk(self) -> None:
        """Read the conversation now and every `DESK_PROBE_S` while `NOT_DONE` is said, and say
        `NOT_DONE_BACK` in its place once the desk shows it is back: a read that failed, or
        waited over `DESK_STALL_S` (on a lock, a silent server), then one that answered. A read
        answering at once tells nothing: a database can read while it cannot write (another
        process holding SQLite's write lock)."""
        self._desk_stalled = False
        if self._desk_probe is None:
            self._desk_probe = self.set_interval(DESK_PROBE_S, self._probe_desk)
        self._probe_desk()

    def _probe_desk(self) -> None:
        if not self._not_done_said() or self.closed:
            if self._desk_probe is not None:
                self._desk_probe.stop()
                self._desk_probe = None
        elif not self._probing:
            self._probing = True
            self.run_worker(self._read_for_desk(), group="desk-probe")

    async def _read_for_desk(self) -> None:
        def stalled() -> None:
            self._desk_stalled = True

        try:
            with if_longer(DESK_STALL_S, stalled):
                await self.services.desk.conversation(self.conversation_id)
        except HelpdeskError as error:
            self._desk_stalled = self._desk_stalled or unreachable(error)
            return
        finally:
            self._probing = False
        if self._desk_stalled and self._not_done_said():
            self.say_why(self.t.gettext(NOT_DONE_BACK))

    async def action_claim(self) -> None:
        if not named(self, self.services, self.action_claim):
            return
        agent = self.services.agent
        assert agent is not None
        try:
            result = await self.services.desk.claim(self.conversation_id, agent=agent)
        except HelpdeskError as error:
            await self._refuse(error)
            return
        if result.won:
            self._claimed(result.conversation)
        await self.reload()
        if not result.won:
            owner = _shown_name(result.conversation.agent, self.t.gettext("someone else"))
            # Not "by {owner}.": a name ending in a full stop ("Ana P.") read "Ana P.."
            self.say_why(self.t.gettext("{owner} claimed it first.").format(owner=owner))

    def _claimed(self, conversation: Conversation) -> None:
        """The claim of `conversation` went through: its keys, header and line above the box say
        so at once. The reload after it reads the log and the bot's decisions first, and on a
        busy desk the footer offered Claim for a second or more under "claimed by ana"."""
        if conversation.id != self.conversation_id or self.closed:
            return  # Another conversation is shown by now (Escape while the claim waited).
        self.conversation = conversation
        self._why = None  # What the reload does on a change of state (it sees none now).
        self._show_header()
        self._show_reply_state()
        self._focus_box()  # As the reload does once the conversation is the agent's.
        self.refresh_bindings()

    async def action_reopen(self) -> None:
        if not named(self, self.services, self.action_reopen):
            return
        agent = self.services.agent
        assert agent is not None
        try:
            result = await self.services.desk.reopen(self.conversation_id, agent=agent)
        except Refused as refused:
            if refused.state is not State.CLAIMED:
                await self._refuse(refused)
                return
            await self.reload()  # Another agent reopened it since it was on screen.
            conversation = self.conversation
        except HelpdeskError as error:
            await self._refuse(error)
            return
        else:
            await self.reload()
            if result.won:
                return
            conversation = result.conversation
        if conversation is not None and conversation.state is State.CLAIMED:
            owner = _shown_name(conversation.agent, self.t.gettext("someone else"))
            self.say_why(self.t.gettext("{owner} reopened it first.").format(owner=owner))
        else:
            self.say_why(self.t.gettext("It changed meanwhile: it is no longer resolved."))

    async def action_toggle_note(self) -> None:
        # A note is signed: the name is asked first, the box the note's already (`before`).
        # Switched once the name was given, the note typed on in a burst as the dialog opened
        # went on into the box beneath (`NameDialog.hand_on_typed`) as the reply's, and stayed
        # in the reply's draft while the note the agent had asked for opened empty.
        if self.note_mode or named(
            self, self.services, self._note_named, before=self._toggle_note,
            cancelled=self._note_unnamed,
        ):  # fmt: skip
            self._toggle_note()

    async def _note_named(self) -> None:
        self._show_reply_state()  # The note's box, now able to send.
        self.refresh_bindings()

    def _note_unnamed(self) -> None:
        """No name given: back to the reply (what was typed in the note stays the note's draft,
        never the reply's)."""
        if self.note_mode:
            self._toggle_note()

    def _toggle_note(self) -> None:
        field = self.reply_input
        self._drafts[self.note_mode] = field.value
        self.note_mode = not self.note_mode
        field.put(self._drafts[self.note_mode])
        self._why = None
        self._show_reply_state()
        if self.note_mode or self.is_mine:
            self.reply_input.focus()
        else:
            self.transcript.focus()
        self.refresh_bindings()

    @on(SendBox.Switch, "#reply")
    async def _switch(self, event: SendBox.Switch) -> None:
        # Ctrl+N pressed on the box: the box keeps what was typed after it until the switch is
        # made, in turn behind any send in progress (a binding ran apart from them, and a note
        # typed in a burst went out as a reply).
        event.stop()
        before = self.note_mode
        try:
            await self.action_toggle_note()
        finally:
            await event.box.release(made=self.note_mode != before)

    @on(SendBox.Submitted, "#reply")
    async def _submitted(self, event: SendBox.Submitted) -> None:
        event.stop()
        # A reply where the conversation is not this agent's (claimed by now, it would be: this
        # Enter is read after the claim's key has been handled) goes nowhere, and stays.
        refused = None if self.note_mode or self.is_mine else self._refusal("send_passage")
        # The box keeps its own Enter: `on_key` never hears of it. A move's failure on the
        # database stays for an Enter that sends nothing: it says what to do first.
        if self._why is not None and not (refused is not None and self._lasting):
            self._why = None
            self._hand_back_asked = None
            self._show_reply_state()
        field = self.reply_input
        # What was in the box at this Enter, less what earlier Enters sent since; nothing for a
        # repeat, or for words put away since (a note's words never go again, as a reply).
        words = field.words(event)
        if words is None:
            return
        if self.note_mode and self.services.agent is None:
            # Typed on with the note as its name is asked (Ctrl+N): nothing goes before the
            # name is known. The note stays in the box, for its own Enter after.
            field.kept(words)
            return
        if refused is not None:
            if self._why is None:
                self.say_why(self.t.gettext(NOT_SENT).format(why=refused))
            field.kept(words)
            return
        if not words.strip():
            t = self.t
            self.say_why(
                t.gettext("Type a note first.")
                if self.note_mode
                else t.gettext("Type a reply first.")
            )
            return
        limit = MAX_NOTE_CHARS if self.note_mode else MAX_REPLY_CHARS
        if len(words) > limit:
            # How far over, so an agent who pasted a long text knows how much to cut; the words
            # stay in the box.
            t = self.t
            message = (
                t.gettext("Your note has {count} characters; the limit is {limit}.")
                if self.note_mode
                else t.gettext("Your reply has {count} characters; the limit is {limit}.")
            )
            self.say_why(message.format(count=f"{len(words):,}", limit=f"{limit:,}"))
            field.kept(words)
            return
        with self._desk_call():
            async with self._sending:
                await self._deliver(words)
        # Replies read while it was on its way (this view's own among them) are known apart now.
        self._take_sent_elsewhere()

    async def _deliver(self, words: str) -> None:
        """`words`, read from an Enter, go out as a note or a reply, and off the box; they stay
        in it if they could not go."""
        field = self.reply_input
        note, conversation_id = self.note_mode, self.conversation_id
        if note:
            if not await self._note(words):
                field.kept(words)
            elif self._sent(note, conversation_id, words) and self.note_mode and not field.value:
                # Back to the reply, unless more of a note was typed after this Enter: that
                # stays, to go as a note with its own Enter.
                await self.action_toggle_note()
            return
        text, passage = words, self.passage
        if passage is not None and text == self._passage_line:
            text = passage.text  # Untouched: the passage as written, paragraphs and all.
        if not await self._send(text, passage):
            field.kept(words)
        elif self._sent(note, conversation_id, words):
            self._drop_passage()

    def _sent(self, note: bool, conversation_id: int, words: str) -> bool:
        """`words`, typed as a note (or a reply), went out: off the front of the box, or of its
        draft if the box shows the other one by now. False if another conversation is shown."""
        if self.conversation_id != conversation_id:
            return False
        if self.note_mode == note:
            self.reply_input.take(words)
        else:
            self._drafts[note] = after(self._drafts[note], words)
        # At once: a draft still kept once sent would come back in the box, to go out twice.
        self.save_drafts()
        return True

    @on(Input.Changed, "#reply")
    def _edited(self, event: Input.Changed) -> None:
        self._drafts_edited()
        if self._restored and not (self.note_mode or event.value.startswith(self._restored)):
            self._restored = ""  # Sent, or edited: no longer what came back.
            self._show_reply_state()
        said_over, self._said_over = self._said_over, None
        # Not an edit: what the box was set to as a line was said over it (the line stays).
        edit = event.value != said_over
        # The box's editing keys act in the box, in turn (`own_key_in_turn`), and so never reach
        # `on_key`: an edit takes the quote and the refusal away as any other key does.
        if edit and (self._hand_back_asked is not None or self._why is not None):
            self._hand_back_asked = None
            if self._why is not None and not self._lasting:
                self._why = None
                self._show_reply_state()
        if (
            edit
            and event.value.strip()
            and self.is_mine
            and not self.note_mode  # A note is for colleagues: the customer hears nothing of it.
            and self._typing.due(self.conversation_id)
        ):
            self.run_worker(self._typing.typed(self.conversation_id), group="typing")
        # A note's empty box leaves the reply's passage alone: it belongs to the reply's draft.
        if self.passage is not None and not event.value.strip() and not self.note_mode:
            self._drop_passage()

    def _drop_passage(self) -> None:
        self.passage, self._passage_line = None, ""
        self._show_reply_state()

    async def _note(self, text: str) -> bool:
        agent = self.services.agent
        assert agent is not None
        try:
            await self.services.desk.add_note(self.conversation_id, agent=agent, text=text)
        except HelpdeskError as error:
            await self._refuse(error)
            return False
        await self.reload()
        return True

    async def _send(self, text: str, passage: Passage | None = None) -> bool:
        agent = self.services.agent
        if agent is None:
            self.say_why(
                self._refusal("send_passage") or self.t.gettext("Claim this conversation to reply.")
            )
            return False
        try:
            sent = await self.services.desk.reply(
                self.conversation_id, agent=agent, text=text, passage=passage
            )
        except HelpdeskError as error:
            await self._refuse(error)
            return False
        self._own_replies.add(sent.id)
        self.run_worker(self._typing.stopped(self.conversation_id), group="typing")
        await self.reload()
        return True

    async def action_send_passage(self) -> None:
        """Pick a knowledge-base passage (the bot's candidates first) and put it in the reply box
        to edit before sending: one of those the conversation is answered from, in its language."""
        # Imported on first use, like the editor: not needed to show the first screen.
        from chatbot.tui.screens.passage_picker import (
            PassagePicker,
            answering_passages,
            picker_items,
        )

        try:
            conversation = await self.services.desk.conversation(self.conversation_id)
            # The candidates beside the transcript: those of the question the conversation came
            # to a person with (the latest decision was on "hello? anyone?", and had none).
            _, shown = await self._decisions(conversation)
        except HelpdeskError as error:
            await self._refuse(error)
            return
        passages = await answering_passages(self.services, conversation.locale)
        items = picker_items(passages, [stored.decision for stored in shown])
        self.app.push_screen(PassagePicker(items, locale=self.services.locale), self.use_passage)

    def use_passage(self, passage: Passage | None) -> None:
        """Put `passage` in the reply box (on one line, as the box shows text) to edit first."""
        if passage is None or not self.is_mine:
            return
        if self.note_mode:  # The note being written is kept for when the agent goes back to it.
            self._drafts[True] = self.reply_input.value
        self.note_mode = False
        self.passage = passage
        self._passage_line = " ".join(passage.text.split())
        field = self.reply_input
        field.put(self._passage_line)
        field.focus()
        self._show_reply_state()

    async def action_resolve(self) -> None:
        await self._let_go(self.services.desk.resolve)

    def _note_messages(self, entries: Iterable[Entry]) -> None:
        for entry in entries:
            if not isinstance(entry, ChatMessage):
                continue
            if entry.author is Author.CUSTOMER:
                self._since_reply.append(entry)
                if self._why == self.t.gettext(NEXT_MESSAGE):
                    self._why = None  # The next message came: the line has said its piece.
            else:  # A reply: what came before it was answered.
                self._since_reply = [entry]

    async def action_hand_back(self) -> None:
        # Handed back, the bot answers the customer's latest real question since the last reply
        # (`question_for_bot`, the desk's own choice): said first, and the same key again hands
        # back. With none ("thanks!", "talk to a person": judged, each went back to the queue as
        # one the bot could not answer), it hands back at once and the bot waits for the next.
        question = question_for_bot(self._since_reply)
        reaches_reply = (
            bool(self._since_reply) and self._since_reply[0].author is not Author.CUSTOMER
        )
        if question is None and not reaches_reply and self.transcript.hidden:
            # The reply lies before the page shown: the desk reads back to it.
            try:
                question = await self.services.desk.question_for_bot(self.conversation_id)
            except HelpdeskError as error:
                await self._refuse(error)
                return
        if question is not None and self._hand_back_asked != question.id:
            self._hand_back_asked = question.id
            sentence = self.t.gettext(HAND_BACK_QUOTE)
            self.say_why(sentence.format(text=clip(" ".join(printable(question.text).split()), 40)))
            return
        if await self._let_go(self.services.desk.hand_back) and question is None:
            self.say_why(self.t.gettext(NEXT_MESSAGE))

    async def action_release(self) -> None:
        await self._let_go(self.services.desk.release)

    def _colleagues_claim(self) -> str | None:
        """Who holds this conversation, if it is claimed by someone other than this agent."""
        conversation = self.conversation
        if conversation is None or conversation.state is not State.CLAIMED or self.is_mine:
            return None
        return conversation.agent

    async def action_take_back(self) -> None:
        """Put a colleague's claim back in the queue (from the command palette)."""
        owner, agent = self._colleagues_claim(), self.services.agent
        if owner is None or agent is None:
            return
        try:
            await self.services.desk.take_back(self.conversation_id, agent=agent, owner=owner)
        except HelpdeskError as error:
            await self._refuse(error)
            return
        await self.reload()

    async def _let_go(self, move: Callable[..., Awaitable[object]]) -> bool:
        """Make `move` (resolve, hand back, release) and show what came of it; False if it was
        refused or failed (the line above the box says why)."""
        agent = self.services.agent
        if agent is None:
            return False
        try:
            await move(self.conversation_id, agent=agent)
        except HelpdeskError as error:
            await self._refuse(error)
            return False
        await self.reload()
        return True

    async def action_show_earlier(self) -> None:
        first = self.transcript.first_id
        if not self.transcript.hidden or first is None:
            return
        try:
            page = await self.services.desk.page(self.conversation_id, before_id=first, limit=PAGE)
            # A `not-judged` escalation on this page is said from its decision, as on the first.
            await self._read_decisions(page.entries)
        except HelpdeskError as error:
            await self._refuse(error)
            return
        self.transcript.add_earlier(page)
        self._note_outcomes(page.entries)
        self.refresh_bindings()

    def action_console(self, action: str) -> None:
        self.post_message(self.ConsoleAction(action))

    async def action_close(self) -> None:
        if self.note_mode:
            await self.action_toggle_note()
            return
        self.post_message(self.Closed(self.conversation_id))

    def action_leave(self) -> None:
        """Escape while a handler here awaits the desk: back to the queue now, told to the
        console directly (a message to this view would wait behind that handler). A reply on
        its way goes, or fails and stays in this conversation's box (see `show`)."""
        (self.parent or self).post_message(self.Closed(self.conversation_id))

    def palette_commands(self) -> Iterable[PaletteCommand]:
        t = self.t
        number = f"#{self.conversation_id}"
        if self.check_action("claim", ()):
            yield PaletteCommand(t.gettext("Claim conversation {number}").format(number=number),
                                 t.gettext("Own it: reply as yourself"),
                                 self.action_claim)  # fmt: skip
        if self.check_action("reopen", ()):
            yield PaletteCommand(t.gettext("Reopen conversation {number}").format(number=number),
                                 t.gettext("Follow up with the customer"),
                                 self.action_reopen)  # fmt: skip
        yield PaletteCommand(t.gettext("Add a note to {number}").format(number=number),
                             t.gettext("Only agents see it"),
                             self.action_toggle_note)  # fmt: skip
        if self.is_mine:
            yield PaletteCommand(t.gettext("Put a passage in the reply to {number}").format(
                                     number=number),
                                 t.gettext("Edit a help-center passage, then send it"),
                                 self.action_send_passage)  # fmt: skip
            yield PaletteCommand(t.gettext("Resolve conversation {number}").format(number=number),
                                 t.gettext("Close it"),
                                 self.action_resolve)  # fmt: skip
            yield PaletteCommand(t.gettext("Hand {number} back to the bot").format(number=number),
                                 t.gettext("The bot answers again"),
                                 self.action_hand_back)  # fmt: skip
            yield PaletteCommand(t.gettext("Put {number} back in the queue").format(number=number),
                                 t.gettext("Another agent takes it"),
                                 self.action_release)  # fmt: skip
        elif (owner := self._colleagues_claim()) is not None:
            # A colleague who quit keeping their claims (or went home) left the customer told a
            # person was helping, and nobody else could let the conversation go.
            yield PaletteCommand(
                t.gettext("Take {number} from {owner}: back in the queue").format(
                    number=number, owner=_shown_name(owner, "")
                ),
                t.gettext("For a claim its agent left behind; then claim it"),
                self.action_take_back,
            )
        if self.check_action("show_earlier", ()):
            yield PaletteCommand(t.gettext("Show earlier messages"),
                                 t.gettext("{count} not shown yet").format(
                                     count=self.transcript.hidden),
                                 self.action_show_earlier)  # fmt: skip
        # Not "close this conversation": agents read it as resolving it.
        yield PaletteCommand(t.gettext("Back to the queue"),
                             t.gettext("Leave this view; the conversation stays as it is"),
                             self.action_close)  # fmt: skip


class SidePane(VerticalScroll):
    """The bot's decisions beside (or under) the transcript. While it holds more than it shows, it
    is a Tab stop, and its arrows, Page Up/Down, Home and End scroll it: not focusable, only the
    mouse wheel reached a second decision below the fold. Otherwise Tab passes it by."""

    def allow_focus(self) -> bool:
        return self.max_scroll_y > 0


WITH_A_PERSON = frozenset({State.WAITING, State.CLAIMED})
"""The states in which the conversation waits for, or is held by, a person."""


def shown_decisions(
    question: int | None, since: Sequence[StoredDecision], latest: StoredDecision | None
) -> tuple[StoredDecision, ...]:
    """The bot's decisions beside the transcript, oldest first. `question`: while a person has
    the conversation (`WITH_A_PERSON`), the question it came to them with (its `question_entry`,
    the one its queue row names), and `since` the decisions on it and on the customer's later
    questions, oldest first; None otherwise.

    While a person has it, the decision on that question comes first: its candidates are what
    the agent answers from. Under it, the latest decision since that considered passages: the
    bot kept it silent (a person had the conversation by then), and it may name the passage that
    answers the customer. One that found none ("hello? anyone?", written while the bot was down)
    has nothing to offer: shown, or taken for the latest, it hid the escalation's candidates and
    then a kept decision's ("would have answered from damage-fee"), in the pane and in Ctrl+O's
    picker. Otherwise (the bot has it, it is resolved, or its question was never decided), the
    latest decision alone: what the bot did last is what stands."""
    escalating = max(
        (stored for stored in since if stored.message_id == question),
        key=lambda stored: stored.id,
        default=None,
    )
    if escalating is None:
        return () if latest is None else (latest,)
    considered = [
        stored for stored in since if stored.id > escalating.id and stored.decision.candidates
    ]
    return (escalating, considered[-1]) if considered else (escalating,)


def _shown_name(agent: str | None, otherwise: str) -> str:
    """An agent's name as shown (anything they typed, spelled out), or `otherwise`."""
    return printable(agent or otherwise)


def _sentence(text: str) -> str:
    """A refusal as a sentence on one line: capital first letter (of a plain word only: never a
    URL's, a path's or a code's), full stop."""
    text = " ".join(text.split())
    if not text:
        return text
    first = text.split(" ", 1)[0]
    if first.isalpha() and first.islower():
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."
