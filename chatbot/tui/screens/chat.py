"""`helpdesk chat`: the customer chat alone; and what a terminal's customer chat keeps for the
next run (`TerminalChat`)."""

from __future__ import annotations

import contextlib
import json
import stat
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Static

from chatbot.drafts import MAX_DRAFT_CHARS, drafts_for, join_drafts, read_draft, store_draft
from chatbot.files import (
    NotRegularFileError,
    make_private_folders,
    read_regular_file,
    write_bytes_atomic,
)
from chatbot.i18n import N_, Locale, translations
from chatbot.text import is_blank, strip_control
from chatbot.tui.screens.mode import ModeScreen
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.header import Header

SAVE_DRAFT_S = 1.0
"""How long after an edit the question box's draft is stored: a write per key would be too many,
and a session killed outright (`serve` killed, a crash: no unmount) loses at most this."""

if TYPE_CHECKING:
    from gettext import NullTranslations

    from chatbot.desk.models import Conversation
    from chatbot.tui.services import Services
    from chatbot.tui.widgets.chat_panel import ChatPanel


class ChatScreen(ModeScreen):
    """One customer conversation, full width."""

    AUTO_FOCUS = "#question"
    CLOSED_NOT_QUIT: ClassVar[bool] = True
    """In a browser the customer leaves by closing the page: the footer offers no Quit, which
    ended the chat on one tap next to "Talk to a person" (see the footer's `CLOSED_NOT_QUIT`)."""

    drafts: ClassVar[Path | None] = None
    """Where a browser session keeps its customer's unsent question when it ends (`serve`
    restarting, the page closed), for the next session of the conversation: set by
    `chatbot.web.child`. None (`helpdesk chat`): not kept."""

    _chat: ChatPanel | None = None
    """The chat, once built (at once, or in its shell's place)."""
    _question: Input | None = None
    """Its question box, once the chat is in place."""
    _stored = ""
    """The draft as last read from, or stored in, `drafts` (see `store_draft`)."""
    _draft_of: int | None = None
    """The conversation `_stored` is the draft of."""
    _save_pending = False
    """A save of the draft is due within `SAVE_DRAFT_S`."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield self.panel(self._make_chat, "chat", shell=True)
        yield Footer()

    def _make_chat(self, services: Services) -> Widget:
        # Imported when first built: `helpdesk chat` shows this screen loading before it loads
        # the panel (and the desk models under it).
        from chatbot.tui.widgets.chat_panel import ChatPanel

        self._chat = ChatPanel(services, conversation_id=self.conversation_id, id="chat")
        return self._chat

    def on_mount(self) -> None:
        if self._chat is not None:  # Built at once: the app was given its settings.
            self._restore_draft(self._chat)

    async def started(self) -> None:
        from chatbot.tui.widgets.chat_panel import ChatPanel

        chat = self.query_one(ChatPanel)
        await self.send_typed(chat.question, chat.ask)
        self._restore_draft(chat)

    def _restore_draft(self, chat: ChatPanel) -> None:
        # The box itself is kept: by this screen's unmount its widgets are gone from the DOM.
        self._question = chat.question
        if self.drafts is None or chat.conversation_id is None:
            return
        saved = ""
        with contextlib.suppress(OSError):  # An unreadable folder: nothing to put back.
            saved = read_draft(self.drafts, chat.conversation_id)
        # Read, not taken: it stays kept until sent or cleared. Not put back (the box had words
        # already), it is joined with them at the first save rather than replaced.
        self._draft_of = chat.conversation_id
        self._stored = saved if chat.restore_draft(saved) else ""

    def on_input_changed(self, event: Input.Changed) -> None:
        # The question box changed: stored within `SAVE_DRAFT_S`, with whatever else is typed
        # meanwhile.
        if event.input is not self._question or self.drafts is None or self._save_pending:
            return
        self._save_pending = True
        self.set_timer(SAVE_DRAFT_S, self.save_draft)

    def on_chat_panel_sent(self, _event: Message) -> None:
        # At once: a draft still kept once sent would come back in the box, to go out twice.
        # (Handled by name, as `on_chat_panel_locale_changed`.)
        self.save_draft()

    def save_draft(self) -> None:
        """Keep what the question box holds as its conversation's draft (blank: sent or
        cleared, none is kept)."""
        self._save_pending = False
        chat, question = self._chat, self._question
        if self.drafts is None or chat is None or question is None:
            return
        if chat.conversation_id is None:
            return  # Nothing to keep it with until the first message starts the conversation.
        if chat.conversation_id != self._draft_of:
            self._draft_of, self._stored = chat.conversation_id, ""
        if question.value == self._stored:
            return
        with contextlib.suppress(OSError):  # A full disk: tried again on the next edit.
            self._stored = store_draft(
                self.drafts, chat.conversation_id, text=question.value, base=self._stored
            )

    def on_unmount(self) -> None:
        # The session ends (`serve` restarting, the page closed): what was typed waits for the
        # next session of the conversation.
        self.save_draft()

    def on_chat_panel_locale_changed(self, event: Message) -> None:
        # The whole screen is the customer's: the app's keys and title follow their language.
        # (Handled by name: the panel's module loads after this screen is first shown.)
        show_in = getattr(self.app, "show_in", None)
        locale = getattr(event, "locale", None)
        if show_in is not None and locale is not None:
            show_in(locale)


TERMINAL_CHAT = "terminal-chat.json"
"""The file, in a database's drafts folder (`drafts_for`: the user's state directory, private to
them), naming the conversation the terminal's customer chat was last in, or holding the words
typed in a chat that had not started one."""
RESUMED = N_("Welcome back: this is your conversation #{number} from before.")
STILL_OPEN = N_("Conversation #{number} is still open: `{command}` opens it again.")
STILL_OPEN_TYPED = N_(
    "Conversation #{number} is still open, with what you typed: `{command}` opens it again."
)
TYPED_KEPT = N_("What you typed is kept: `{command}` puts it back.")
RATING_WAITS = N_("Conversation #{number} waits for your rating: `{command}` opens it again.")
# Said when what the chat keeps could not be written (a read-only or full disk): the line said it
# was kept, and the next run opened a new, empty chat. `{reason}` is the system's, in a few words.
STILL_OPEN_NOT_NOTED = N_(
    "Conversation #{number} is still open, but it could not be noted for next time ({reason}):"
    " `{command}` opens it again."
)
STILL_OPEN_NOT_KEPT = N_(
    "Conversation #{number} is still open, but what you typed could not be kept ({reason}):"
    " `{command}` opens it again."
)
RATING_WAITS_NOT_KEPT = N_(
    "Conversation #{number} waits for your rating, but what you typed could not be kept"
    " ({reason}): `{command}` opens it again."
)
TYPED_NOT_KEPT = N_("What you typed could not be kept ({reason}).")
UNREAD = N_("What your last chat left could not be read ({reason}): this is a new chat.")
"""Above a new chat when `TERMINAL_CHAT` is there but unreadable (not JSON, not what a chat
leaves, a folder, a FIFO): it started a new chat silently, the words it kept out of reach."""
# The app's own reasons for `UNREAD`, said in the note's language (a system's, `strerror`, is
# said as the system says it).
NOT_JSON = N_("not valid JSON")
NOT_A_CHAT = N_("not a conversation number and words")
IS_A_DIRECTORY = N_("is a directory, not a regular file")
IS_A_FIFO = N_("is a FIFO (named pipe), not a regular file")
IS_SPECIAL = N_("is a socket or device, not a regular file")
OWN_REASONS = frozenset({NOT_JSON, NOT_A_CHAT, IS_A_DIRECTORY, IS_A_FIFO, IS_SPECIAL})


RATE_LATER_S = 24 * 3600.0
"""How long after a person resolved it a terminal's chat opens a conversation its customer has
not rated again, to ask for the rating: resolved while they were away, they were never asked,
and a `5` typed for the prompt just before quitting went to a new chat as a question."""


def resumable(conversation: Conversation, *, words: str = "", rating_due: bool = False) -> bool:
    """Whether a terminal's customer chat opens `conversation` again by itself: while it waits
    for a person, a person has it, or the bot is answering it, or the customer left `words`
    unsent in it; once resolved, only while its rating is asked for (`rating_due`: see
    `RATE_LATER_S`), else a new chat, as before."""
    from chatbot.desk.models import State

    if conversation.state is State.RESOLVED:
        return rating_due
    person = conversation.state in (State.WAITING, State.CLAIMED)
    return person or conversation.pending > 0 or not is_blank(words)


class ChatNote(Static):
    """One line above the chat's transcript, `message` with its `fields`, in the chat's language
    (`show_in` says it again in another). Not a bubble: it stays when the chat is said again in
    another language."""

    DEFAULT_CSS = """
    ChatNote {
        color: $text-muted;
        text-style: italic;
        padding: 0 1;
        margin: 1 0 0 0;
    }
    """

    def __init__(self, message: str, *, id: str, locale: Locale, **fields: object) -> None:
        super().__init__(id=id)
        self.message, self.fields = message, fields
        self.show_in(locale)

    def show_in(self, locale: Locale) -> None:
        self.update(Text(translations(locale).gettext(self.message).format(**self.fields)))


class ResumedNote(ChatNote):
    """One line above a resumed conversation's transcript: the customer sees it is the one they
    left, and its number. It goes with the conversation (a new chat)."""

    def __init__(self, number: int, *, locale: Locale) -> None:
        super().__init__(RESUMED, id="chat-resumed", locale=locale, number=number)
        self.number = number


class UnreadNote(ChatNote):
    """One line above a new chat whose last run's `TERMINAL_CHAT` could not be read (`UNREAD`),
    in the chat's language, as `ResumedNote` is."""

    def __init__(self, reason: str, *, locale: Locale) -> None:
        self.reason = reason
        """Why: one of `OWN_REASONS` (a message id), or the system's words."""
        super().__init__(UNREAD, id="chat-unread", locale=locale, reason=reason)

    def show_in(self, locale: Locale) -> None:
        t = translations(locale)
        reason = t.gettext(self.reason) if self.reason in OWN_REASONS else self.reason
        self.update(Text(t.gettext(self.message).format(reason=reason)))


def _reason(error: OSError) -> str:
    """Why a write or read failed, in the system's few words ("Read-only file system")."""
    return error.strerror or type(error).__name__


def _not_regular(error: NotRegularFileError) -> str:
    """Why a path that is not a regular file was not read, as one of `OWN_REASONS`."""
    if stat.S_ISDIR(error.mode):
        return IS_A_DIRECTORY
    return IS_A_FIFO if stat.S_ISFIFO(error.mode) else IS_SPECIAL


class TerminalChat:
    """A terminal's customer chat (`helpdesk chat`, and beside the queue), kept for the same user's
    next run on the same database, as a browser's is by its cookie: the conversation it was in,
    opened again while still open (`resumable`), and the words typed and not sent, put back in
    the box. Quitting lost both, and a person's reply went to a conversation the customer could
    no longer find. Never a browser session's (`ChatScreen.drafts` keeps its words)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        """The database's drafts folder: the conversation's unsent words are kept there, as a
        browser's are, and `TERMINAL_CHAT` beside them."""
        self.unread: str | None = None
        """Why `TERMINAL_CHAT` is there but could not be read (said above the new chat): one of
        `OWN_REASONS`, translated where it is said, or the system's words."""
        self.conversation_id, self.words = self._read()
        """What the last run left: its conversation, or the words of a chat not started."""
        self._remembered = (self.conversation_id, self.words)
        """What the file says now."""
        self.resumed: int | None = None
        """The conversation this run opened again by itself (no `--conversation`)."""
        self._chat: ChatPanel | None = None
        self.box: Input | None = None
        """The chat's question box, once kept: read as the app ends, when it is gone from the
        DOM."""
        self._stored = ""
        """The draft as last read from, or stored in, the folder (see `store_draft`)."""
        self._draft_of: int | None = None
        """The conversation `_stored` is the draft of."""
        self.save_pending = False
        """A save is due within `SAVE_DRAFT_S`."""
        self._carried: tuple[int, str] | None = None
        """The last run's conversation, not opened again, and its words, brought to this chat:
        its draft goes once they are kept here."""
        self._unkept: str | None = None
        """Why the box's words could not be stored as its conversation's draft, the last time
        that was tried (None: stored, or nothing to store)."""
        self._unnoted: str | None = None
        """Why `TERMINAL_CHAT` could not be written, the last time that was tried."""

    @classmethod
    def of(cls, database: str) -> TerminalChat:
        return cls(drafts_for(database))

    def resumes(self, conversation: Conversation, *, rating_due: bool = False) -> bool:
        """Whether this run opens `conversation`, the one the last run was in, again."""
        words = ""
        with contextlib.suppress(OSError):
            words = read_draft(self.folder, conversation.id)
        return resumable(conversation, words=words, rating_due=rating_due)

    def carry_over(self, conversation_id: int) -> None:
        """The last run's conversation is not opened again (resolved, or gone): words left
        unsent in it start the new chat's box rather than wait where the chat will not look."""
        left = ""
        with contextlib.suppress(OSError):
            left = read_draft(self.folder, conversation_id)
        if left:
            self.words = join_drafts(self.words, left)
            self._carried = (conversation_id, left)

    def _read(self) -> tuple[int | None, str]:
        try:
            # ASCII JSON: a character is at most 12 bytes (a pair of `\uXXXX`). Only a regular
            # file is read: a FIFO's open waited for a writer, and hung the chat.
            data = read_regular_file(self.folder / TERMINAL_CHAT, limit=12 * MAX_DRAFT_CHARS + 1024)
        except (FileNotFoundError, NotADirectoryError):  # None kept; nowhere to keep one.
            return None, ""
        except NotRegularFileError as error:  # A folder, a FIFO.
            self.unread = _not_regular(error)
            return None, ""
        except OSError as error:  # Not this user's to read.
            self.unread = _reason(error)
            return None, ""
        try:
            kept = json.loads(data)
        except ValueError:
            self.unread = NOT_JSON
            return None, ""
        conversation = kept.get("conversation") if isinstance(kept, dict) else None
        words = kept.get("words", "") if isinstance(kept, dict) else None
        number = type(conversation) is int and conversation > 0
        if not (number or conversation is None) or not isinstance(words, str):
            self.unread = NOT_A_CHAT
            return None, ""
        return conversation, _words(words)

    def _remember(self, conversation_id: int | None, words: str) -> None:
        if (conversation_id, words) == self._remembered:
            return
        path = self.folder / TERMINAL_CHAT
        try:
            if conversation_id is None and not words:
                path.unlink(missing_ok=True)
            else:
                make_private_folders(self.folder)
                kept = {"conversation": conversation_id, "words": words}
                write_bytes_atomic(path, json.dumps(kept, ensure_ascii=True).encode("ascii"))
                path.chmod(0o600)  # Private, as the drafts beside it (kept by later writes).
        except OSError as error:  # A full disk: tried again at the next change, said at the end.
            self._unnoted = _reason(error)
        else:
            self._unnoted = None
            self._remembered = (conversation_id, words)

    def attach(self, chat: ChatPanel) -> None:
        """Keep `chat` from now on: what was kept for it goes back in its box (before what was
        typed there already, as the app started), and a conversation opened again says so."""
        self._chat, self.box = chat, chat.question
        conversation = chat.conversation_id
        saved = self.words
        if conversation is not None:
            saved = ""
            with contextlib.suppress(OSError):  # An unreadable folder: nothing to put back.
                saved = read_draft(self.folder, conversation)
            self._draft_of, self._stored = conversation, saved
        box = chat.question
        if saved and not chat.restore_draft(saved):
            box.value = join_drafts(saved, box.value)
            box.cursor_position = len(box.value)
        if conversation is not None and conversation == self.resumed:
            welcome = chat.log_view.query_children(".welcome")
            note = ResumedNote(conversation, locale=chat.locale)
            chat.log_view.mount(note, after=welcome.last() if welcome else None)
        elif conversation is None and self.unread is not None:
            welcome = chat.log_view.query_children(".welcome")
            unread = UnreadNote(self.unread, locale=chat.locale)
            chat.log_view.mount(unread, after=welcome.last() if welcome else None)
            # Below the suggestions, it was under the fold of a small terminal: scrolled to.
            unread.call_after_refresh(unread.scroll_visible, animate=False)
        chat.services.changed.subscribe(chat, lambda _version: self.noted())
        self.noted()

    @property
    def conversation_shown(self) -> int | None:
        """The conversation the kept chat is in (known as the app ends, when the chat is gone
        from the DOM)."""
        return None if self._chat is None else self._chat.conversation_id

    def noted(self) -> None:
        """Remember the conversation the chat is in, once it has one (started by a message, or
        by asking for a person)."""
        if self._chat is not None and (conversation := self._chat.conversation_id) is not None:
            self._remember(conversation, "")

    def show_in(self, locale: Locale) -> None:
        if self._chat is not None:
            for note in self._chat.query(ChatNote):
                note.show_in(locale)

    def save(self) -> None:
        """Keep what the box holds: as its conversation's draft (the browser's kind, which
        `--conversation` finds too), or, before there is a conversation, in `TERMINAL_CHAT`."""
        self.save_pending = False
        chat, box = self._chat, self.box
        if chat is None or box is None:
            return
        conversation = chat.conversation_id
        try:
            if self._draft_of is not None and self._draft_of != conversation:
                # Left for a new chat: the box's words went with it, not to stay behind.
                store_draft(self.folder, self._draft_of, text="", base=self._stored)
                self._draft_of, self._stored = None, ""
            if conversation is not None:
                self._draft_of = conversation
                if box.value != self._stored:
                    self._stored = store_draft(
                        self.folder, conversation, text=box.value, base=self._stored
                    )
        except OSError as error:  # A full disk: tried again at the next edit, said at the end.
            self._unkept = _reason(error)
        else:
            self._unkept = None
        self._remember(conversation, "" if conversation is not None else _words(box.value))
        if self._carried is not None and self._remembered[0] == conversation:
            (left_in, words), self._carried = self._carried, None
            with contextlib.suppress(OSError):
                store_draft(self.folder, left_in, text="", base=words)

    def farewell(self, command: str, *, locale: Locale, rating_asked: bool = False) -> str | None:
        """The line said once the terminal is back: what `command` opens again, if anything
        (`rating_asked`: the conversation, resolved, waits for the customer's rating)."""
        chat, box = self._chat, self.box
        if chat is None or box is None:
            return None
        t = translations(locale)
        typed = not is_blank(box.value)
        conversation = chat.conversation
        if chat.conversation_id is None:
            return self._typed_line(t, command, typed=typed)
        if conversation is None or conversation.id != chat.conversation_id:
            return None  # Not read yet: nothing known to say of it.
        if not resumable(conversation, words=box.value, rating_due=rating_asked):
            # Resolved: a new chat starts next time, with the words, if any, in its box.
            return self._typed_line(t, command, typed=typed)
        from chatbot.desk.models import State  # As in `resumable`: loaded after start-up.

        # Not written (a read-only or full disk): said, and why, where it said all was kept, and
        # the command names the conversation, which the next run would not find by itself.
        number, unkept = conversation.id, self._unkept if typed else None
        if unkept is not None or self._unnoted is not None:
            command = f"{command} --conversation {number}"
        if conversation.state is State.RESOLVED:
            line = RATING_WAITS if unkept is None else RATING_WAITS_NOT_KEPT
        elif unkept is not None:
            line = STILL_OPEN_NOT_KEPT
        elif self._unnoted is not None:
            line, unkept = STILL_OPEN_NOT_NOTED, self._unnoted
        else:
            line = STILL_OPEN_TYPED if typed else STILL_OPEN
        return t.gettext(line).format(number=number, reason=unkept, command=command)

    def _typed_line(self, t: NullTranslations, command: str, *, typed: bool) -> str | None:
        """The line for words typed in a chat the next run starts new: kept, and how to have
        them back, or not kept, and why."""
        if not typed:
            return None
        # In `TERMINAL_CHAT`, or its conversation's draft, which the next run finds through it.
        unkept = self._unnoted or self._unkept
        if unkept is not None:
            return t.gettext(TYPED_NOT_KEPT).format(reason=unkept)
        return t.gettext(TYPED_KEPT).format(command=command)


def _words(text: str) -> str:
    """Unsent words as the question box may hold them (blank: none)."""
    text = strip_control(text, one_line=True)
    return "" if is_blank(text) else text[:MAX_DRAFT_CHARS]
