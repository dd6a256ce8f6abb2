"""The Textual app: which screen each mode opens, the desk and its change notices, the embedded
bot worker, and the shared HTTP client.

Screens are registered in `MODE_SCREENS` alone; everything they need arrives in `Services`.

`helpdesk` passes a settings loader, not settings: its first screen is painted before the settings
(pydantic-settings), the desk and the panels are loaded, all of which happen in a thread after it
(issue 13: start-up within 1.5x a bare Textual app). Only what that screen needs is imported here.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.command import CommandPalette
from textual.message_pump import MessagePump
from textual.screen import ModalScreen, Screen
from textual.signal import Signal

from chatbot.desk.clock import Clock, utc_now
from chatbot.engine.live import POLL_S as KB_POLL_S
from chatbot.engine.live import LiveEngine
from chatbot.errors import HelpdeskError
from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.tui.base_app import SafeApp
from chatbot.tui.commands import HelpDeskCommands, command_palette
from chatbot.tui.localize import localize_bindings
from chatbot.tui.screens.agent import AgentScreen
from chatbot.tui.screens.chat import ChatScreen, TerminalChat
from chatbot.tui.screens.desk import DeskScreen
from chatbot.tui.screens.editor_home import EditorHomeScreen
from chatbot.tui.screens.mode import ModeScreen
from chatbot.tui.services import Services
from chatbot.tui.widgets.chat_shell import ChatShell
from chatbot.tui.widgets.footer import left_by_closing

# The settings, the desk (pydantic), the engine (numpy, the BM25 index), httpx and the bot worker
# are loaded after the first screen is shown (see `HelpDeskApp._start_loading` and
# `_start_engine`): imported there, not here.
if TYPE_CHECKING:
    import httpx
    from textual.widgets import Input

    from chatbot.config import Settings
    from chatbot.desk.aio import AsyncDesk
    from chatbot.desk.bot import BotWorker
    from chatbot.desk.models import Conversation
    from chatbot.engine.engine import Engine
    from chatbot.knowledge_base.interface import KnowledgeBaseStore
    from chatbot.tui.kb_index import KnowledgeBaseIndex
    from chatbot.tui.suggestions import SharedVerdicts, Suggestion
    from chatbot.tui.widgets.chat_panel import ChatPanel
    from chatbot.tui.widgets.conversation_view import ConversationView
    from chatbot.tui.widgets.queue_list import QueueList

Mode = Literal["all", "chat", "agent", "editor"]
T = TypeVar("T")


class ScreenFactory(Protocol):
    def __call__(
        self,
        services: Services | None,
        *,
        conversation_id: int | None = None,
        customer_locale: Locale = DEFAULT_LOCALE,
    ) -> ModeScreen: ...


MODE_SCREENS: dict[Mode, ScreenFactory] = {
    "all": DeskScreen,
    "chat": ChatScreen,
    "agent": AgentScreen,
    "editor": EditorHomeScreen,
}
SUBTITLES: dict[Mode, str] = {
    "all": N_("customer chat and handoff queue"),
    "chat": N_("customer chat"),
    "agent": N_("agent console"),
    "editor": N_("knowledge-base editor"),
}
TEXTUAL_COMMANDS = frozenset(
    {
        N_("Theme"),
        N_("Change the current theme"),
        N_("Quit"),
        N_("Quit the application as soon as possible"),
        N_("Keys"),
        N_("Hide the keys and widget help panel"),
        N_("Show help for the focused widget and a summary of available keys"),
        N_("Minimize"),
        N_("Minimize the widget and restore to normal size"),
        N_("Maximize"),
        N_("Maximize the focused widget"),
        N_("Screenshot"),
        N_("Save an SVG 'screenshot' of the current screen"),
    }
)
"""Textual's own command-palette entries, by their English words: shown in the reader's
language where the catalog has them (an entry a later Textual adds stays in English)."""


@dataclass(frozen=True)
class Engines:
    """What `create_app` builds off the UI thread once the first screen is up."""

    engine: Engine
    translated: dict[Locale, LiveEngine]
    """Engines over translated knowledge bases (see `Services.translated`)."""
    http: httpx.AsyncClient | None
    """The HTTP client for Valen: the caller's, or one made for this app (None when replaying
    recorded answers only, which makes no request)."""
    passages: KnowledgeBaseStore
    """The knowledge base the engine was built from, which the app follows from then on."""
    stamp: int | None
    """Its stamp, read before its passages were."""


@dataclass(frozen=True)
class Prepared:
    """What the app makes of its settings: made by `create_app` when given settings, else in a
    thread once the first screen is up."""

    desk: AsyncDesk
    live: LiveEngine
    build_engines: Callable[[], Engines]
    make_bot: Callable[[Engines], BotWorker] | None
    agent: str | None
    knowledge_base: Path | str | None
    locale: Locale
    suggestions: tuple[Suggestion, ...]
    bot_stalled_s: float
    """After how long a question with no decision has no bot answering it (`bot_stalled_after`
    of this host's Valen budget)."""
    opened: Conversation | None = None
    """The conversation the app was opened on, as read while checking it exists."""
    terminal_chat: TerminalChat | None = None
    """What a terminal's customer chat keeps for the next run (None: nothing, as in a browser)."""
    resumed: int | None = None
    """The conversation the customer's chat opens again by itself, the last run's, still open."""
    shared_suggestions: SharedVerdicts | None = None
    """Where another process decides the suggested questions for this app (a browser customer's
    session: serve's decider), which then builds no engine of its own while that one lives."""

    def opening(self, conversation_id: int) -> Prepared:
        """These, for an app opened on `conversation_id` (one started after `prepare_app`, as
        a new browser customer's is); an unknown one raises `HelpdeskError`."""
        return replace(self, opened=_read_conversation(self.desk, conversation_id))

    def close(self) -> None:
        """Close what was opened, for an app that ended before using it."""
        self.desk.close()
        if self.live.passages is not None:
            self.live.passages.close()


class _AppLog(logging.Handler):
    """Log lines go to Textual's log, never onto the terminal the app draws on."""

    def __init__(self, app: App[None]) -> None:
        super().__init__()
        self.app = app

    def emit(self, record: logging.LogRecord) -> None:
        self.app.log(self.format(record))


CACHE_LOGGER = "chatbot.valen.cache"
"""The replay cache's warnings (corrupt, missing, not recorded into): the app shows them."""
CACHE_NOTICE_S = 30.0
"""How long the app shows a replay cache's problem: it explains every escalation that follows."""


class _CacheWarnings(logging.Handler):
    """Hands the replay cache's warnings to the app's loop, from whichever thread warned (the
    engine's build, the bot worker, the editor's trial)."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, show: Callable[[logging.LogRecord], None]
    ) -> None:
        super().__init__(logging.WARNING)
        self._loop = loop
        self._show = show

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._loop.call_soon_threadsafe(self._show, record)
        except RuntimeError:  # The loop is closed: the app has ended, and the terminal has it.
            pass


class HelpDeskApp(SafeApp):
    """Owns the desk and the HTTP client it made; runs the embedded bot worker.

    The first screen comes before the engine: `build_engines` runs in a thread once the screen is
    up, and the bot worker starts when it is done. A question asked meanwhile is stored (pending)
    like any other, and the bot answers it as soon as it starts: nothing is lost or refused."""

    # The editor's and the analytics' layouts too: a screen's own CSS_PATH, read when it first
    # opens, made Textual parse every stylesheet again and restyle every widget of the app.
    CSS_PATH = ["app.tcss", "screens/editor.tcss", "screens/stats.tcss"]
    TITLE = "helpdesk"
    COMMANDS = App.COMMANDS | {HelpDeskCommands}
    BINDINGS = [
        Binding("ctrl+q", "quit", N_("Quit"), priority=True),
        # Short: the footer has 80 columns for the screen's keys and these.
        Binding("f2", "edit_knowledge_base", N_("Editor"), tooltip=N_("Edit the knowledge base")),
        # F4 is the agents' team view; F5 is free on every screen. Not in the footer, which has
        # no room left at 80 columns: the command palette offers "Analytics" too.
        Binding(
            "f5", "analytics", N_("Analytics"), show=False, tooltip=N_("How the desk is doing")
        ),
    ]

    def __init__(
        self,
        prepared: Prepared | Callable[[], Prepared],
        *,
        mode: Mode = "all",
        clock: Clock = utc_now,
        conversation_id: int | None = None,
        timings: bool = True,
        owns_http: bool = False,
        fixed_conversation: bool = False,
        customer_locale: Locale = DEFAULT_LOCALE,
        agent_locale: Locale = DEFAULT_LOCALE,
        sign_out_url: str | None = None,
        reopen_with: str = "helpdesk chat",
    ) -> None:
        """`prepared`, or the function that prepares it (called in a thread once the first
        screen is up: the screen shows its panels loading until then)."""
        super().__init__()
        self.reopen_with = reopen_with
        """The command that opens a terminal's customer chat again, for `farewell`."""
        self.farewell: str | None = None
        """What the terminal's customer chat left open or kept, and the command that opens it
        again: said by the command once the terminal is back (None: nothing)."""
        self.sign_out_url = sign_out_url
        """The page that signs this browser out, for a signed-in account's browser session (the
        command palette offers Sign out); None: nobody signed in here."""
        self.mode_name: Mode = mode
        self.sub_title = translations(DEFAULT_LOCALE).gettext(SUBTITLES[mode])
        self.http: httpx.AsyncClient | None = None
        """The HTTP client for Valen, once the engines are built (None: replaying only)."""
        self.bot: BotWorker | None = None
        """The embedded bot worker, once the engine is built (None until then, and always with
        `--no-bot`: another process answers)."""
        self.startup_error: str | None = None
        """Why the engine could not be built (a broken passage file, say): the app exits, and
        the command line prints this as its one line on stderr."""
        self._prepare = prepared if callable(prepared) else None
        self._preparing: asyncio.Future[Prepared] | None = None
        self._prepared: Prepared | None = None
        self._services: Services | None = None
        self._clock = clock
        self._timings = timings
        self._fixed_conversation = fixed_conversation
        self._customer_locale = customer_locale
        self._first_locale = customer_locale if mode == "chat" else agent_locale
        """The language the app's keys and title are in from the start: the person's side's (a
        customer's chat, or an agent's screens, whose settings may name another)."""
        self._shown_locale: Locale = DEFAULT_LOCALE
        """The language the app's own keys and title are shown in now."""
        if self._first_locale != DEFAULT_LOCALE:
            self.show_in(self._first_locale)
        self._first_screen: ModeScreen | None = None
        self._held_input: list[events.Key | events.Paste] | None = []
        """Keys and pastes that came before the first screen was drawn (its box focused), or
        while the panels took the shells' places, for the boxes once they are there (None:
        nothing is held). From the start: keys typed as `helpdesk chat` was launched reach the
        app before any widget has the focus, and the screen dropped every one of them."""
        self._closing = False
        self._desk_failed_leaving = False
        """The desk failed as this console quit (or signed out): the app's end does not ask it
        again, to wait as long for the same answer."""
        self._app_log = _AppLog(self)
        self._cache_log: _CacheWarnings | None = None
        self._bot_log: _CacheWarnings | None = None
        """Shows the embedded bot's one-time warnings about Valen (see `_bot_warning`)."""
        self._cache_said: set[str] = set()
        """The replay cache's warnings shown, by their text: each once (until it recovers)."""
        self._cache_records: list[logging.LogRecord] = []
        """The same, to say on the terminal again once the app ends."""
        self._terminal_logs: list[logging.Handler] = []
        """The root logger's handlers that write to the terminal, set aside while the app runs."""
        self._engines: asyncio.Future[Engines] | None = None
        self._bot_task: asyncio.Task[None] | None = None
        self._kb_follow: asyncio.Task[None] | None = None
        self._owns_http = owns_http
        self._conversation_id = conversation_id
        self._publish_pending = False
        self._unsubscribe: Callable[[], None] = lambda: None
        self.knowledge_base: Path | str | None = None
        """The passage directory (or database URL) the editor writes; None: no editor offered
        (nor while the app is still loading its settings)."""
        self.kb_index: KnowledgeBaseIndex | None = None
        """Keeps the engine in step with the knowledge base, whoever writes to it (there once
        the engine is built, in every session, whether it may edit or not)."""
        if not callable(prepared):
            self._use(prepared)

    @property
    def services(self) -> Services:
        """What the screens work with; there once the settings are loaded and the desk open
        (at once when `create_app` was given settings)."""
        if self._services is None:
            raise HelpdeskError("the help desk is still starting")
        return self._services

    @property
    def ui_locale(self) -> Locale:
        """The agent's or editor's UI language (English until the settings are loaded)."""
        return self._services.locale if self._services is not None else DEFAULT_LOCALE

    @property
    def started(self) -> bool:
        """The settings are loaded and the desk is open: `services` is there."""
        return self._services is not None

    @property
    def ending(self) -> bool:
        """The app is on its way out: asked to exit (a quit, settings that cannot be used), or
        its message loop is over (its browser page closed, the terminal gone). Textual mounts
        nothing from then on: a widget it was building starts without its parts."""
        return self.return_code is not None or not self.is_running

    def _handle_exception(self, error: Exception) -> None:
        # Every widget's, timer's and worker's failure comes here. Once the app is ending, a
        # widget Textual was building starts with none of its parts (mounting them is refused),
        # and the first of its handlers that looks for one fails: the chat's status line, the
        # queue's table, Textual's own tabs. That is the app ending, not a fault: it went out as
        # a traceback (return code 1) into serve's log for every browser page closed within a
        # second of opening, which anyone could repeat to fill the log. Only the app's log says.
        if self.ending:
            self.log.warning(f"as the app ends: {error!r}")
            return
        super()._handle_exception(error)

    def _use(self, prepared: Prepared) -> None:
        self._prepared = prepared
        self.knowledge_base = prepared.knowledge_base
        if prepared.resumed is not None and self._conversation_id is None:
            # The customer's chat opens the last run's conversation, still open, as if asked
            # for: its panel, built next, is in it (the screen, if shown already, is told).
            self._conversation_id = prepared.resumed
            if self._first_screen is not None:
                self._first_screen.conversation_id = prepared.resumed
        opened = prepared.opened
        opened_locale = None if opened is None else opened.shown_locale(self._customer_locale)
        self._services = Services(
            desk=prepared.desk,
            live=prepared.live,
            clock=self._clock,
            agent=prepared.agent,
            changed=Signal(self, "store-changed"),
            suggestions_changed=Signal(self, "suggestions-changed"),
            reach_changed=Signal(self, "reach-changed"),
            bot_stalled_s=prepared.bot_stalled_s,
            timings=self._timings,
            fixed_conversation=self._fixed_conversation,
            suggestions=prepared.suggestions,
            locale=prepared.locale,
            customer_locale=self._customer_locale,
            opened_locale=opened_locale,
            bot_here=prepared.make_bot is not None,
        )
        # A chat reopened in its conversation's language; an agent's screens in theirs.
        chat = self.mode_name == "chat"
        wanted = (opened_locale or self._customer_locale) if chat else prepared.locale
        if wanted != self._first_locale:
            self.show_in(wanted)

    def show_in(self, locale: Locale) -> None:
        """The app's own keys and sub-title in `locale`: a customer's chat alone follows its
        conversation's language (with the agent console beside it, the agent's stays)."""
        self._shown_locale = locale
        self.sub_title = translations(locale).gettext(SUBTITLES[self.mode_name])
        localize_bindings(self, locale)

    def get_default_screen(self) -> Screen[None]:
        self._first_screen = MODE_SCREENS[self.mode_name](
            self._services,
            conversation_id=self._conversation_id,
            customer_locale=self._customer_locale,
        )
        return self._first_screen

    async def on_mount(self) -> None:
        # Keys typed before the first screen drew go to its focused box, in order.
        self.call_after_refresh(self._release_input)
        # `helpdesk` logs warnings to stderr, its terminal: a line written there while the app
        # draws lands in the middle of its screen (a database outage wrote one a second over the
        # console's header). Until the app ends they go to its log; the app says what matters
        # in its own widgets.
        root = logging.getLogger()
        self._terminal_logs = [h for h in root.handlers if type(h) is logging.StreamHandler]
        for handler in self._terminal_logs:
            root.removeHandler(handler)
        if self._terminal_logs:
            root.addHandler(self._app_log)
        # The replay cache's warnings too went only to that log: with a corrupt cache every
        # question went to a person, the agent saw `replay-miss` on every passage, and nothing
        # said why. They are shown in the app, to whoever can mend the file.
        self._cache_log = _CacheWarnings(asyncio.get_running_loop(), self._cache_warning)
        logging.getLogger(CACHE_LOGGER).addHandler(self._cache_log)
        if self._services is not None:
            await self._started()
        else:
            # After the first screen is drawn: loading the settings, the desk and the panels
            # in a thread holds the GIL for most of its ~0.1-0.2 s.
            self.call_after_refresh(self._start_loading)

    def _start_loading(self) -> None:
        assert self._prepare is not None
        if self.ending:
            return  # Closed as its first screen was drawn: nothing to open.
        # The thread's future is kept apart from the worker, as the engine's is (see there).
        self._preparing = asyncio.ensure_future(asyncio.to_thread(self._prepare))
        self._load(self._preparing)

    # Workers made by `@work`, which makes the coroutine as the worker starts: one made for a
    # worker the ending app never started was never awaited, and said so on stderr (in serve's
    # log) once collected.
    @work(name="open the desk")
    async def _load(self, preparing: asyncio.Future[Prepared]) -> None:
        """Put the prepared desk in place, then the panels; settings that cannot be used end
        the app with one line, said once the terminal is back (`startup_error`)."""
        prepared = await self._made_in_thread(preparing)
        if prepared is None:
            return
        self._use(prepared)
        self.refresh_bindings()  # The editor's key is offered now.
        if self._first_screen is not None:
            await self._put_panels_in_place(self._first_screen)
        await self._started()

    async def _put_panels_in_place(self, screen: ModeScreen) -> None:
        """The panels in place of the shells, every key typed meanwhile kept for them: the shell's
        box is read, then removed, and only then does the panel's box take the focus. A key still
        queued to the shell's box was typed into a box already read, and one arriving before
        the panel's box had the focus went to the screen, which drops it: a customer typing at
        once lost a character in about one start in eight."""
        if self._held_input is None:  # (Keys held since the start stay first in line.)
            self._held_input = []
        try:
            # A key the app was handing on as the holding began, then every key already given to
            # a shell's box, are in that box before it is read.
            await _handled_so_far(self)
            for shell in screen.query(ChatShell):
                await _handled_so_far(shell.question)
            await screen.start(self.services)
        finally:
            # From the app's own queue, in turn: a key arriving meanwhile is held behind these.
            self.call_later(self._release_input)

    def hold_input(self) -> bool:
        """Keep the keys and pastes that come from now on (the quit key aside) until
        `release_input`, wherever the focus goes meanwhile: for a conversation opening in the
        queue's place, which the keys typed after its Enter are meant for. A browser sends
        each key on its own: Ctrl+L 150 ms after Enter reached the view once it had the focus,
        before it had read its conversation, and was refused there ("still loading").
        False: they were held already, and whoever began it releases them."""
        if self._held_input is not None:
            return False
        self._held_input = []
        return True

    def release_input(
        self, first: Iterable[events.Key | events.Paste] = (), *, deliver: bool = True
    ) -> None:
        """Hand on `first` (keys held elsewhere, typed before), then the keys held since
        `hold_input`, in order, from the app's own queue: a key arriving meanwhile is held
        behind them. Not `deliver`: all of them are dropped (what they were meant for did
        not come)."""
        self.call_later(self._release_input, list(first), deliver)

    async def _release_input(
        self, first: list[events.Key | events.Paste] | None = None, deliver: bool = True
    ) -> None:
        held, self._held_input = [*(first or []), *(self._held_input or [])], None
        if not deliver:
            return
        for event in held:
            await super().on_event(event)

    async def on_event(self, event: events.Event) -> None:
        if (
            self._held_input is not None
            and isinstance(event, (events.Key, events.Paste))
            and not event.is_forwarded
            and not (isinstance(event, events.Key) and self._quits(event.key))
        ):
            self._held_input.append(event)
            return
        await super().on_event(event)

    def _quits(self, key: str) -> bool:
        """`key` is the app's own quit key: never held, even behind a question being stored."""
        return any(
            binding.action == "quit" for binding in self._bindings.key_to_bindings.get(key, ())
        )

    async def _made_in_thread(self, making: asyncio.Future[T]) -> T | None:
        """What a start-up thread made; None if the app is ending: what the thread raised ends
        it with one line, said once the terminal is back (`startup_error`), or it was quit
        meanwhile (`on_unmount` waits for the thread and closes what it made)."""
        try:
            made = await asyncio.shield(making)
        except HelpdeskError as error:
            self.startup_error = str(error)
            self.exit(return_code=2)
            return None
        # Ending, nothing more is put in place: Textual mounts nothing then (see `ending`).
        return None if self._closing or self.ending else made

    async def _started(self) -> None:
        desk = self.services.desk
        changes = desk.subscribe(self._desk_changed)
        reach = desk.subscribe_reach(self.services.reach_changed.publish)

        def unsubscribe() -> None:
            changes()
            reach()

        self._unsubscribe = unsubscribe
        await desk.watch()
        if self._terminal_chat() is not None:
            # Once the first screen's chat is mounted (a screen built with the app is not yet).
            self.call_after_refresh(self._keep_chat)
        if self.knowledge_base is not None and self.mode_name == "editor":
            self.action_edit_knowledge_base()  # Opens once the engine is built.
        # After the first screen is drawn: building the engine in a thread holds the GIL for
        # much of its ~0.2-0.4 s, which would otherwise delay that screen.
        self.call_after_refresh(self._start_engine)

    def _start_engine(self) -> None:
        # The screen and its panels are up: resume the garbage collection `helpdesk` paused for
        # start-up (the settings' imports included).
        gc.enable()
        assert self._prepared is not None
        if self.ending:
            return  # Closed as its first screen was drawn: no engine to build.
        if not self._reads_engine():
            shared = self._prepared.shared_suggestions
            if shared is not None and self.services.suggestions:
                self._follow_shared_suggestions(shared)
            return
        # The thread's future is kept apart from the worker, which Textual may cancel on exit:
        # `on_unmount` waits for the thread itself and closes what it made.
        build = built = self._prepared.build_engines
        if self._tells_cache_problems():

            def build_and_check() -> Engines:
                engines = built()
                # Read now, not at the first question: a bad replay cache is said as the app
                # starts (an agent's browser session, which judges nothing, never read it).
                judge = engines.engine.judge
                if judge.replay != "off" and judge.cache is not None:
                    judge.cache.check(replaying=judge.replay == "on")
                return engines

            build = build_and_check
        self._engines = asyncio.ensure_future(asyncio.to_thread(build))
        self._build_and_start(self._engines)

    def _reads_engine(self) -> bool:
        """Whether anything in this app reads the engine. A customer's chat with no bot of its
        own (a browser's, `--no-bot`) asking Valen live has nothing that does: its questions go
        to the desk's bots, and there are no recorded questions to decide. Building it anyway
        cost each such session its index, its HTTP client and a few tenths of a second. Nor
        has one whose suggested questions another process decides (a browser's, in replay mode):
        its engine was the whole knowledge base again in every customer's session."""
        assert self._prepared is not None
        return (
            self.mode_name != "chat"
            or self._prepared.make_bot is not None
            or (bool(self.services.suggestions) and self._prepared.shared_suggestions is None)
        )

    def _follow_shared_suggestions(self, shared: SharedVerdicts) -> None:
        """Mark the suggested questions as the shared decider last decided them, now and once a
        second from now on (a `stat` of its file); once it is gone, decide them here instead."""

        def check() -> None:
            if self._closing or self._prepared is None:
                return
            fresh = shared.fresh(self.services.suggestions)
            if fresh is not None and fresh != self.services.suggestions:
                self.services.suggestions = fresh
                self.services.suggestions_changed.publish(fresh)
            if not shared.decider_alive():
                timer.stop()
                self._prepared = replace(self._prepared, shared_suggestions=None)
                self._start_engine()  # Builds this app's own, which follows the knowledge base.

        timer = self.set_interval(KB_POLL_S, check)
        check()

    def _tells_cache_problems(self) -> bool:
        """The replay cache's problems are shown to whoever can act on them: a terminal's user,
        a browser's agent or editor; never to a browser's customer."""
        return not (self.is_web and self.mode_name == "chat")

    def _cache_warning(self, record: logging.LogRecord) -> None:
        """Show a replay cache's warning once, as an error (its recovery as news)."""
        from chatbot.valen.cache import USABLE_AGAIN

        if not self._tells_cache_problems():
            return
        message = record.getMessage()
        if record.msg == USABLE_AGAIN:
            self._cache_said.clear()  # Broken again later, it is said again.
        elif message in self._cache_said:
            return
        else:
            self._cache_said.add(message)
        self._cache_records.append(record)
        if self._closing:
            return  # Said on the terminal once the app has ended.
        t = translations(self.ui_locale)
        self.notify(
            message,
            title=t.gettext("Replay cache"),
            severity="information" if record.msg == USABLE_AGAIN else "error",
            timeout=CACHE_NOTICE_S,
        )

    def _bot_warning(self, record: logging.LogRecord) -> None:
        """Show the embedded bot's warnings about Valen (a refused key, a wait longer than the
        client honours), each said once by the bot, as the replay cache's are: a toast for
        whoever can act on them, and on the terminal again once the app ends."""
        from chatbot.desk.bot import KEY_REFUSED

        if not self._tells_cache_problems():
            return
        self._cache_records.append(record)
        if self._closing:
            return
        said = record.getMessage()
        self.notify(
            said if said.endswith(".") else f"{said}.",  # A log line, said as a sentence here.
            title="Valen",
            severity="error" if record.msg == KEY_REFUSED else "warning",
            timeout=CACHE_NOTICE_S,
        )

    @work(name="build the engine")  # (See `_load`.)
    async def _build_and_start(self, building: asyncio.Future[Engines]) -> None:
        """Build the engine (and the HTTP client, the translations' engines) off the UI thread,
        put it in place, then start the embedded bot worker, which answers whatever was asked
        meanwhile. A knowledge base that cannot be loaded ends the app with one line."""
        live = self.services.live
        engines = await self._made_in_thread(building)
        if engines is None:
            return
        self.http = engines.http
        live.follow_from(engines.passages, engines.stamp)
        from chatbot.tui.kb_index import KnowledgeBaseIndex

        # Every session follows the knowledge base, editor or not: a customer's suggested
        # questions and an agent's passage picker read this engine, and a browser session's,
        # which may not edit, went on showing passages as they were when it opened. Made before
        # the engine is announced: the editor, waiting for it, opens on this index.
        self.kb_index = index = KnowledgeBaseIndex(
            self, live, editing=self.knowledge_base is not None
        )
        # A task, not a worker: it runs as long as the app, and tests wait for workers.
        self._kb_follow = asyncio.create_task(index.follow(), name="follow the KB")
        if not live.ready:  # Else a test's stand-in engine, put in meanwhile, stays.
            live.engine = engines.engine
        self.services.translated.update(engines.translated)
        for translated in self.services.translated.values():
            self.set_interval(KB_POLL_S, translated.poll)
        if self._prepared is not None and self._prepared.make_bot is not None:
            self.bot = self._prepared.make_bot(engines)
            self.bot.log.addHandler(self._app_log)
            # Its one-time warnings about Valen went only to that log: with a refused key every
            # question went to a person and nothing on screen said why.
            from chatbot.desk.bot import KEY_REFUSED, LONG_WAIT  # Loaded by `make_bot`.

            # Only those two: the logger is the process's, and its other lines need no toast.
            self._bot_log = _CacheWarnings(asyncio.get_running_loop(), self._bot_warning)
            self._bot_log.addFilter(lambda record: record.msg in (KEY_REFUSED, LONG_WAIT))
            self.bot.log.addHandler(self._bot_log)
            self._bot_task = asyncio.create_task(self.bot.run(), name="embedded bot worker")
        if self.services.suggestions and self.is_running:  # Not while quitting early.
            self._decide_suggestions()
            index.rebuilt.subscribe(self, lambda _count: self._decide_suggestions())

    # Exclusive: a newer knowledge base's verdicts replace an older one's still on the way. A
    # worker (`@work` makes the coroutine when it starts): one made for a worker the quitting
    # app never started was never awaited, and warned about when collected.
    @work(group="suggestions", exclusive=True, name="decide suggestions")
    async def _decide_suggestions(self) -> None:
        """Mark the suggested questions as the engine of this moment decides them."""
        from chatbot.tui.suggestions import decided

        services = self.services
        fresh = await decided(services.suggestions, services.live.engine)
        if fresh != services.suggestions:
            services.suggestions = fresh
            services.suggestions_changed.publish(fresh)

    def on_queue_list_loaded(self, _event: QueueList.Loaded) -> None:
        # Everything alive now (the app, its widgets, the queue's rows) lives as long as the
        # app: out of the collector's sight, a full collection no longer walks it all. At 10,000
        # rows that walk stopped the event loop for ~250 ms every so often.
        gc.freeze()

    def _desk_changed(self, _version: int) -> None:
        # A burst of commits (a bot settling many questions) becomes one refresh per loop turn.
        if not self._publish_pending:
            self._publish_pending = True
            self.call_next(self._publish_change)

    # -- a terminal's customer chat, kept for the next run ----------------------------------------

    def _terminal_chat(self) -> TerminalChat | None:
        return None if self._prepared is None else self._prepared.terminal_chat

    def _kept_chat(self) -> ChatPanel | None:
        """The first screen's customer chat, if there is one."""
        from chatbot.tui.widgets.chat_panel import ChatPanel

        screen = self._first_screen
        found = None if screen is None else screen.query(ChatPanel)
        return found.first() if found else None

    def _keep_chat(self) -> None:
        kept, chat = self._terminal_chat(), self._kept_chat()
        if kept is not None and chat is not None:
            kept.attach(chat)

    def on_input_changed(self, event: Input.Changed) -> None:
        # The customer's box changed: kept within `SAVE_DRAFT_S`, with whatever else is typed
        # meanwhile (a write per key would be too many).
        from chatbot.tui.screens import chat

        kept = self._terminal_chat()
        if kept is not None and event.input is kept.box and not kept.save_pending:
            kept.save_pending = True
            self.set_timer(chat.SAVE_DRAFT_S, kept.save)

    def on_chat_panel_sent(self, _event: ChatPanel.Sent) -> None:
        # At once: words still kept once sent would come back in the box, to go out twice.
        if (kept := self._terminal_chat()) is not None:
            kept.save()

    def on_chat_panel_locale_changed(self, event: ChatPanel.LocaleChanged) -> None:
        if (kept := self._terminal_chat()) is not None:
            kept.show_in(event.locale)

    def _publish_change(self) -> None:
        self._publish_pending = False
        self.services.changed.publish(self.services.desk.version)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "edit_knowledge_base":
            # Not offered without a knowledge base to edit (a customer's web session), nor in a
            # customer's chat, nor in the editor itself. The editor's module is looked up, not
            # imported: it loads on first use, never at start-up.
            editor = sys.modules.get("chatbot.tui.screens.editor")
            editing = editor is not None and any(
                isinstance(screen, editor.EditorScreen) for screen in self.screen_stack
            )
            return self._offers_editor() and not editing
        if action == "analytics":
            return self._offers_analytics()
        return super().check_action(action, parameters)

    def _offers_analytics(self) -> bool:
        """For agents and editors; never in a customer's chat (`helpdesk chat`, the web's `/`)."""
        return self.mode_name != "chat"

    def _offers_editor(self) -> bool:
        """With a knowledge base to edit, for agents and editors; never in a customer's chat
        (`helpdesk chat`, as analytics: its footer offered the customer "Editor")."""
        return self.knowledge_base is not None and self.mode_name != "chat"

    def action_analytics(self) -> None:
        # Imported when first opened, like the editor: most sessions never look.
        from chatbot.tui.screens.stats import StatsScreen

        if not (self._offers_analytics() and self.started) or isinstance(self.screen, ModalScreen):
            return
        if not any(isinstance(screen, StatsScreen) for screen in self.screen_stack):
            self.push_screen(StatsScreen(self.services))

    def action_edit_knowledge_base(self) -> None:
        # Imported when first opened: its widgets cost startup time that most sessions never use.
        from chatbot.tui.screens.editor import EditorScreen

        # Not over a dialog, and never a second editor on the stack.
        if not self._offers_editor() or isinstance(self.screen, ModalScreen):
            return
        if self.kb_index is None or not self.services.live.ready:
            # Its panels read the engine and its index: open it once they are built.
            self._edit_when_ready()
            return
        if not any(isinstance(screen, EditorScreen) for screen in self.screen_stack):
            self.push_screen(EditorScreen(self.services, index=self.kb_index))

    @work(group="open editor", exclusive=True)  # (See `_load`.)
    async def _edit_when_ready(self) -> None:
        await self.services.live.wait_ready()
        self.action_edit_knowledge_base()

    def action_command_palette(self) -> None:
        # Textual's own, with the search box in the language of the app's keys: a customer's
        # chat's, or the agent's (whichever the footer's palette key is in).
        if self.use_command_palette and not isinstance(self.screen, CommandPalette):
            self.push_screen(command_palette(self._shown_locale))

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        # In the language of the app's keys, as the search box: a Chinese chat's are Chinese.
        t = translations(self._shown_locale)
        for command in super().get_system_commands(screen):
            if self.is_web and command.title == "Screenshot":
                continue  # It saves a file on the server's disk, not the browser's.
            if command.title == "Quit" and left_by_closing(screen):
                continue  # A browser's customer leaves by closing the page (as the footer says).
            if command.title in TEXTUAL_COMMANDS and command.help in TEXTUAL_COMMANDS:
                command = command._replace(
                    title=t.gettext(command.title), help=t.gettext(command.help)
                )
            yield command
        if self._offers_editor():
            yield SystemCommand(t.gettext("Knowledge base"),
                                t.gettext("Edit passages, try questions, fill content gaps"),
                                self.action_edit_knowledge_base)  # fmt: skip
        if self._offers_analytics():
            yield SystemCommand(t.gettext("Analytics"), t.gettext(
                                "How the desk is doing: resolution rate, escalations, waits, "
                                "scores, content gaps (F5)"),
                                self.action_analytics)  # fmt: skip
        if self.sign_out_url is not None:
            yield SystemCommand(t.gettext("Sign out"),
                                t.gettext("End this session and sign this browser out"),
                                self.action_sign_out)  # fmt: skip

    async def _rating_due(self) -> bool:
        """Whether the customer's chat, as the app ends, is in a resolved conversation that waits
        for their rating (read from the desk: the prompt itself may be gone by then)."""
        kept = self._terminal_chat()
        conversation_id = None if kept is None else kept.conversation_shown
        if conversation_id is None or self._services is None:
            return False
        try:
            return await self.services.desk.rating_due(conversation_id) is not None
        except HelpdeskError:  # Not known: said as a resolved one is, with no rating asked.
            return False

    async def on_unmount(self) -> None:
        if (kept := self._terminal_chat()) is not None:
            # The app ends (a quit, the terminal closed): the conversation and what was typed
            # wait for the next run.
            kept.save()
            self.farewell = kept.farewell(
                self.reopen_with, locale=self._shown_locale, rating_asked=await self._rating_due()
            )
        if (agent := self._console_agent()) is not None and not self._desk_failed_leaving:
            # However it ends (a quit, the terminal closed, SIGTERM, the page gone), this console
            # is closed: only a quit said so, and the agent's next console, quitting within the
            # minute, said "another of your consoles is still open" of the dead one. Said again
            # after a quit: now that the screens are gone, no presence tick can follow it.
            await self._session_ended(agent)
        try:
            await self._close()
        finally:
            # Closing may warn too (a desk that cannot be closed): still into the app's log.
            root = logging.getLogger()
            root.removeHandler(self._app_log)
            if self._cache_log is not None:
                logging.getLogger(CACHE_LOGGER).removeHandler(self._cache_log)
            if self.bot is not None:
                # The worker's logger is the process's: the next app (a test's) adds its own.
                self.bot.log.removeHandler(self._app_log)
                if self._bot_log is not None:
                    self.bot.log.removeHandler(self._bot_log)
            for handler in self._terminal_logs:
                root.addHandler(handler)
                # What the app showed of the replay cache is still true after it: said where
                # the CLI says it (`helpdesk: warning: ...`), as it would have been without the app.
                for record in self._cache_records:
                    handler.handle(record)
            self._terminal_logs = []

    async def _close(self) -> None:
        self._closing = True
        self._unsubscribe()
        if self._preparing is not None:
            # Settings still being loaded (or the desk opened) are waited for, like the engine
            # below; a desk the app never got to use is closed here.
            (prepared,) = await asyncio.gather(self._preparing, return_exceptions=True)
            if isinstance(prepared, Prepared) and prepared is not self._prepared:
                prepared.close()
        if self._services is None:
            return
        if self._engines is not None:
            # An engine still being built is waited for (a fraction of a second): its thread
            # cannot be stopped, and the HTTP client it may have made is closed below.
            (built,) = await asyncio.gather(self._engines, return_exceptions=True)
            if isinstance(built, Engines):
                self.http = built.http
                if built.passages is not self.services.live.passages:
                    built.passages.close()  # Opened by the build, never put in place.
        if self._kb_follow is not None:
            self._kb_follow.cancel()
            await asyncio.gather(self._kb_follow, return_exceptions=True)
        if self.bot is not None and self._bot_task is not None:
            # Questions being judged go back to the store at once for the next worker (this app
            # opened again, or `helpdesk bot`): quitting never waits on Valen.
            self.bot.stop()
            await asyncio.gather(self._bot_task, return_exceptions=True)
        await self.services.desk.aclose()
        for live in (self.services.live, *self.services.translated.values()):
            if live.passages is not None:
                live.passages.close()
        if self._owns_http and self.http is not None:
            await self.http.aclose()

    async def open_conversation(self, conversation_id: int) -> ConversationView:
        """Open a conversation by id in the agent console of the current screen."""
        from chatbot.tui.widgets.agent_console import AgentConsole

        return await self.screen.query_one(AgentConsole).open_conversation(conversation_id)

    # -- the agent --------------------------------------------------------------------------------

    async def ask_agent_name(self) -> bool:
        """Ask the agent for their display name (from a worker: it waits on a dialog), remember
        it in the settings file, and use it from now on. False if they cancelled."""
        from chatbot.settings_file import save_setting
        from chatbot.tui.screens.dialogs import NameDialog
        from chatbot.tui.widgets.queue_list import QueueList

        locale = self.services.locale
        holding: Counter[str] = Counter()
        try:
            for item in await self.services.desk.claims():
                if item.agent:
                    holding[item.agent] += 1
        except HelpdeskError:
            pass  # Asked without the warning: the claim that follows says what is wrong.
        name = await self.push_screen_wait(NameDialog(locale=locale, holding=holding))
        if name is None:
            return False
        self.services.agent = name
        t = translations(locale)
        try:
            path = save_setting("agent", "name", name)
        except HelpdeskError as error:
            # The error is the core's, in English by design.
            self.notify(
                t.gettext("{error}; using {name} until you quit").format(error=error, name=name),
                severity="warning",
            )
        else:
            self.notify(t.gettext("Saved your name in {path}.").format(path=path))
        for queue in self.screen.query(QueueList):
            await queue.reload()  # Claims under this name, from an earlier session, show up.
        return True

    def action_help_quit(self) -> None:
        """Ctrl+C, pressed where there is nothing to copy: say how to quit. Textual's own hint
        is markup, which toasts here never read, and English."""
        t = translations(self._shown_locale)
        if left_by_closing(self.screen):
            # A browser's customer leaves by closing the page, and the footer offers no Quit:
            # pointing them at Ctrl+Q (a key a phone lacks) asked them to end their chat.
            self.notify(t.gettext("Close the page to leave: your conversation is kept."))
            return
        self.notify(
            t.gettext("Press Ctrl+Q to quit the app."), title=t.gettext("Do you want to quit?")
        )

    async def action_quit(self) -> None:
        """Offer to hand back this agent's claims before quitting: a claim left behind would
        keep its customer waiting for nobody."""
        from chatbot.tui.screens.dialogs import ClaimsOnQuit

        if isinstance(self.screen, ClaimsOnQuit):
            # Ctrl+Q again takes the dialog's first choice, handing back: it quit keeping the
            # claims, and their customers waited for nobody, told a person was helping them.
            # Keeping, while another console of the agent's is open: they are its work too.
            self.screen.action_answer(self.screen.first)
            return
        await self._leave(super().action_quit)

    async def action_sign_out(self) -> None:
        """Sign this browser out: the claims are offered back as on quitting, then the page goes
        to the server's sign-out page. Only the server can clear the browser's cookie, in its
        answer to that page's form; the page leaving ends this session, as closing it does."""
        from chatbot.tui.screens.dialogs import ClaimsOnQuit

        url = self.sign_out_url
        if url is None or isinstance(self.screen, ClaimsOnQuit):
            return

        async def go() -> None:
            self.open_url(url, new_tab=False)

        await self._leave(go, signing_out=True)

    async def _leave(
        self, then: Callable[[], Awaitable[None]], *, signing_out: bool = False
    ) -> None:
        """Run `then` (quit, or sign out), first asking an agent who holds claims whether to
        hand them back, keep them, or stay. Another console of theirs still open shares the
        claims: the question says so, and keeping them is its first choice. `signing_out` ends
        this browser's other tabs too: they are not another console."""
        from chatbot.tui.screens.dialogs import ClaimsAnswer, ClaimsOnQuit

        agent = self._console_agent()
        if agent is None:
            await then()
            return
        desk = self.services.desk
        try:
            claims = await desk.claimed_by(agent)
        except HelpdeskError as error:
            self.notify(str(error), severity="error")
            self._desk_failed_leaving = True
            await then()
            return
        if not claims:
            await self._session_ended(agent)
            await then()
            return
        others, here = 0, []
        try:
            if others := await desk.other_sessions(agent, signing_out=signing_out):
                here = await desk.claimed_here(agent)
        except HelpdeskError:
            pass  # Asked as with no other console: the answer is the agent's all the same.

        async def answered(answer: ClaimsAnswer | None) -> None:
            if answer is None:
                return
            if answer in ("hand-back", "hand-back-here"):
                only = here if answer == "hand-back-here" else None
                try:
                    await desk.release_claims(agent, only=only)
                except HelpdeskError as error:
                    self.notify(
                        translations(self.ui_locale)
                        .gettext("{error}; nothing was handed back")
                        .format(error=error),
                        severity="error",
                    )
                    return
            await self._session_ended(agent)
            await then()

        self.push_screen(
            ClaimsOnQuit(len(claims), locale=self.services.locale, others=others, here=here),
            answered,
        )

    def _console_agent(self) -> str | None:
        """The agent whose console this is (its presence said under their name), if any."""
        agent = self._services.agent if self._services is not None else None
        return None if self.mode_name == "chat" else agent

    async def _session_ended(self, agent: str) -> None:
        """This console is going: another of the agent's, quitting next, counts it open no more
        (rather than for the minute its last sighting stays fresh)."""
        try:
            await self.services.desk.session_ended(agent)
        except HelpdeskError:
            # It stops being seen all the same, and counts as closed a minute later.
            self._desk_failed_leaving = True


async def _handled_so_far(widget: MessagePump) -> None:
    """Once `widget` has handled every message already sent to it (its own queue, in order)."""
    handled = asyncio.Event()
    if widget.call_later(handled.set):
        await handled.wait()


def create_app(
    settings: Settings | Prepared | Callable[[], Settings],
    *,
    mode: Mode = "all",
    http: httpx.AsyncClient | None = None,
    clock: Clock = utc_now,
    agent: str | None = None,
    conversation_id: int | None = None,
    timings: bool = True,
    bot: bool = True,
    editor: bool = True,
    fixed_conversation: bool = False,
    customer_locale: Locale = DEFAULT_LOCALE,
    agent_locale: Locale = DEFAULT_LOCALE,
    sign_out_url: str | None = None,
    keep_chat: str | None = None,
) -> HelpDeskApp:
    """The app for the CLI and the tests. Given settings, bad ones (database, knowledge base, an
    unknown conversation) raise `HelpdeskError` here, before any screen opens. Given a function
    that loads them (`helpdesk`), it is called in a thread once the first screen is up, and bad
    ones end the app with return code 2 and `startup_error` saying why. A passed `http` stays
    the caller's to close; what is created here is closed when the app exits. With `bot`, the
    app runs a bot worker of its own, so it answers questions with nothing else running. Without
    `editor`, the knowledge-base editor is not offered (F2 and the palette entry are gone). With
    `fixed_conversation`, the customer cannot start a new conversation (a browser session's is
    the one its cookie names). A customer's chat is shown in `customer_locale` until their first
    message decides its language (`helpdesk serve` passes the browser's, `helpdesk chat` the
    terminal's); an agent's and editor's screens are in `agent_locale` (their browser's or
    terminal's) unless the settings name one (`ui.locale`). A browser session of a signed-in
    account passes `sign_out_url`, the page that signs the browser out: the command palette
    offers Sign out. Given what `prepare_app` made (with the same `mode`, `bot`, `editor` and
    locale), the app uses it as it is. With `keep_chat`, the command that opens the chat again
    (`helpdesk chat`'s own, in a terminal), the customer's chat is kept for the user's next run
    on the database (see `TerminalChat`), and `farewell` says so as the app ends."""

    def prepare_with(settings: Settings) -> Prepared:
        return prepare_app(
            settings,
            mode=mode,
            http=http,
            clock=clock,
            agent=agent,
            conversation_id=conversation_id,
            bot=bot,
            editor=editor,
            agent_locale=agent_locale,
            keep_chat=keep_chat is not None,
        )

    prepared: Prepared | Callable[[], Prepared]
    if isinstance(settings, Prepared):
        prepared = settings
    elif callable(settings):
        load = settings

        def prepare() -> Prepared:
            made = prepare_with(load())
            # The panels' modules (and the desk models under them) load here too, off the UI
            # thread: the screen builds its panels from them next.
            import chatbot.tui.widgets.agent_console
            import chatbot.tui.widgets.chat_panel  # noqa: F401

            return made

        prepared = prepare
    else:
        prepared = prepare_with(settings)
    return HelpDeskApp(
        prepared,
        mode=mode,
        clock=clock,
        conversation_id=conversation_id,
        timings=timings,
        owns_http=http is None,
        fixed_conversation=fixed_conversation,
        customer_locale=customer_locale,
        agent_locale=agent_locale,
        sign_out_url=sign_out_url,
        reopen_with=keep_chat or "helpdesk chat",
    )


def prepare_app(
    settings: Settings,
    *,
    mode: Mode = "all",
    http: httpx.AsyncClient | None = None,
    clock: Clock = utc_now,
    agent: str | None = None,
    conversation_id: int | None = None,
    bot: bool = True,
    editor: bool = True,
    agent_locale: Locale = DEFAULT_LOCALE,
    keep_chat: bool = False,
    shared_suggestions: SharedVerdicts | None = None,
) -> Prepared:
    """Open the desk and check the knowledge base; bad settings raise `HelpdeskError`. What
    `create_app` does first; a browser session does it before saying it started. With
    `keep_chat` (a terminal's), a customer's chat opened on no conversation opens the one the
    user's last run on this database was in, while it is still open (`TerminalChat`). With
    `shared_suggestions` (a browser customer's session), another process decides the suggested
    questions: a customer's chat with no bot of its own then builds no engine (see
    `Prepared.shared_suggestions`)."""
    from chatbot.assembly import check_knowledge_base, open_knowledge_base, open_service
    from chatbot.desk.aio import AsyncDesk
    from chatbot.desk.models import bot_stalled_after

    # Checked first, so a wrong `--kb` is one line before the app starts, and before the desk
    # is opened: with `--db` naming the same mistyped database, that made the desk's tables
    # there. A directory's store (the passage model with it) is opened, and the passages read,
    # once the first screen is up. A PostgreSQL knowledge base is connected to now, so a server
    # that refuses is one line too.
    check_knowledge_base(settings)
    desk = AsyncDesk.open(lambda: open_service(settings, clock=clock))
    passages = None
    try:
        # The change feed's connection too, with the desk's: a database with none to spare is
        # one line here (and a browser's session refused before it starts), not a crash later.
        desk.open_feed()
        if isinstance(settings.knowledge_base.path, str):
            passages = open_knowledge_base(settings, lock_timeout=2.0)
        live = LiveEngine(None, passages)
        opened = None
        if conversation_id is not None:
            opened = _read_conversation(desk, conversation_id)
        terminal_chat = resumed = None
        if keep_chat and mode in ("chat", "all"):
            terminal_chat = TerminalChat.of(settings.store.db)
            last = terminal_chat.conversation_id
            if conversation_id is None and last is not None:
                from chatbot.desk.aio import ConversationNotFound

                try:
                    found = _read_conversation(desk, last)
                except ConversationNotFound:  # Gone (pruned): a new chat, as before.
                    found = None
                except HelpdeskError:  # Unreadable just now: a new chat, the words left be.
                    found = last = None
                if found is not None and terminal_chat.resumes(
                    found, rating_due=_rating_asked(desk, found, clock)
                ):
                    opened, resumed = found, found.id
                    terminal_chat.resumed = resumed
                elif last is not None:
                    terminal_chat.carry_over(last)
    except BaseException:
        desk.close()
        if passages is not None:
            passages.close()
        raise
    kb = passages

    def build_engines() -> Engines:
        # Runs in a thread once the first screen is up; imports numpy, the index and httpx.
        from chatbot.assembly import build_engine, build_locale_engines, make_http_client

        store = kb if kb is not None else open_knowledge_base(settings, lock_timeout=2.0)
        try:
            stamp = store.stamp()  # Before reading: a save meanwhile is caught by the next poll.
            client = http
            if client is None and settings.valen.replay != "on":
                client = make_http_client(settings)  # Replaying only makes no request.
            engine = build_engine(settings, client, store)
            translated = build_locale_engines(settings, client, engine)
        except BaseException:
            if kb is None:
                store.close()
            raise
        return Engines(engine, translated, client, store, stamp)

    make_bot = None
    if bot:

        def make_bot(engines: Engines) -> BotWorker:
            from chatbot.assembly import engine_readers
            from chatbot.desk.bot import BotWorker

            # Made directly, not by getLogger: it belongs to this app alone and goes away with it.
            return BotWorker(
                desk,
                lambda: live.engine,
                concurrency=settings.bot.concurrency,
                lease_s=settings.bot.lease_s,
                poll_s=settings.bot.poll_s,
                grace_s=0,
                # The app's consoles sweep for agents who left, and never for their own agent:
                # this worker, waking with them from a sleep longer than the grace, would
                # release the claims of the agent at this very console.
                sweep_s=0,
                log=logging.Logger("helpdesk.bot"),
                locale_engines=engine_readers(engines.translated),
            )

    from chatbot.tui.suggestions import offered

    return Prepared(
        desk=desk,
        live=live,
        build_engines=build_engines,
        make_bot=make_bot,
        # `--agent` (the web front end passes the account's name) wins and is never asked for;
        # then the name saved in the settings file; else the console asks on the first claim.
        agent=agent or settings.agent.name,
        knowledge_base=settings.knowledge_base.path if editor else None,
        # A customer's chat alone starts in English and follows its conversation; an agent's
        # screens are in the language set for them, else in their terminal's or browser's.
        locale=DEFAULT_LOCALE if mode == "chat" else settings.ui.locale or agent_locale,
        suggestions=offered(settings),
        bot_stalled_s=bot_stalled_after(settings.valen.budget_s),
        opened=opened,
        terminal_chat=terminal_chat,
        resumed=resumed,
        shared_suggestions=shared_suggestions,
    )


def _rating_asked(desk: AsyncDesk, conversation: Conversation, clock: Clock) -> bool:
    """Whether the customer is still asked to rate `conversation` (resolved, unrated, within
    `RATE_LATER_S`): a terminal's chat then opens it again for that."""
    from chatbot.desk.models import State
    from chatbot.tui.screens.chat import RATE_LATER_S

    if conversation.state is not State.RESOLVED:
        return False
    try:
        due = desk.call_blocking(lambda service: service.rating_due(conversation.id))
    except HelpdeskError:  # Unreadable just now: a new chat, as before.
        return False
    return due is not None and (clock() - due.created_at).total_seconds() <= RATE_LATER_S


def _read_conversation(desk: AsyncDesk, conversation_id: int) -> Conversation:
    """The conversation an app opens on, read to check it exists (and for its language)."""
    return desk.call_blocking(lambda service: service.conversation(conversation_id))
