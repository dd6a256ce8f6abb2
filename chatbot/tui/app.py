"""The Textual app: which screen each mode opens, the desk and its change notices, the embedded
bot worker, and the shared HTTP client.

Screens are registered in `MODE_SCREENS` alone; everything they need arrives in `Services`.
"""

from __future__ import annotations

import asyncio
import gc
import getpass
import logging
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal, Protocol

import httpx
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.signal import Signal

from chatbot.assembly import build_engine, make_http_client, open_service
from chatbot.config import Settings
from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotWorker
from chatbot.desk.clock import Clock, utc_now
from chatbot.engine.live import LiveEngine
from chatbot.errors import HelpdeskError
from chatbot.tui.base_app import SafeApp
from chatbot.tui.commands import HelpDeskCommands
from chatbot.tui.kb_index import POLL_SECONDS as KB_POLL_SECONDS
from chatbot.tui.kb_index import KnowledgeBaseIndex
from chatbot.tui.screens.agent import AgentScreen
from chatbot.tui.screens.chat import ChatScreen
from chatbot.tui.screens.desk import DeskScreen
from chatbot.tui.screens.dialogs import ClaimsAnswer, ClaimsOnQuit
from chatbot.tui.screens.editor_home import EditorHomeScreen
from chatbot.tui.services import Services
from chatbot.tui.suggestions import recorded_questions
from chatbot.tui.widgets.agent_console import AgentConsole
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.queue_list import QueueList

Mode = Literal["all", "chat", "agent", "editor"]


class ScreenFactory(Protocol):
    def __call__(
        self, services: Services, *, conversation_id: int | None = None
    ) -> Screen[None]: ...


MODE_SCREENS: dict[Mode, ScreenFactory] = {
    "all": DeskScreen,
    "chat": ChatScreen,
    "agent": AgentScreen,
    "editor": EditorHomeScreen,
}
SUBTITLES: dict[Mode, str] = {
    "all": "customer chat and handoff queue",
    "chat": "customer chat",
    "agent": "agent console",
    "editor": "knowledge-base editor",
}


class _AppLog(logging.Handler):
    """The embedded bot's log lines go to Textual's log, never onto the terminal it draws."""

    def __init__(self, app: App[None]) -> None:
        super().__init__()
        self.app = app

    def emit(self, record: logging.LogRecord) -> None:
        self.app.log(self.format(record))


class HelpDeskApp(SafeApp):
    """Owns the desk and the HTTP client it was given to own; runs the embedded bot worker."""

    CSS_PATH = "app.tcss"
    TITLE = "helpdesk"
    COMMANDS = App.COMMANDS | {HelpDeskCommands}
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        # Short: the footer has 80 columns for the screen's keys and these.
        Binding("f2", "edit_knowledge_base", "Editor", tooltip="Edit the knowledge base"),
        # F4 is the agents' team view; F5 is free on every screen. Not in the footer, which has
        # no room left at 80 columns: the command palette offers "Analytics" too.
        Binding("f5", "analytics", "Analytics", show=False, tooltip="How the desk is doing"),
    ]

    def __init__(
        self,
        *,
        desk: AsyncDesk,
        live: LiveEngine,
        http: httpx.AsyncClient,
        bot: BotWorker | None = None,
        mode: Mode = "all",
        clock: Clock = utc_now,
        agent: str | None = None,
        conversation_id: int | None = None,
        timings: bool = True,
        owns_http: bool = False,
        owns_desk: bool = False,
        knowledge_base: Path | None = None,
    ) -> None:
        super().__init__()
        self.mode_name: Mode = mode
        self.sub_title = SUBTITLES[mode]
        self.http = http
        self.bot = bot
        """The embedded bot worker (None with `--no-bot`: another process answers)."""
        self._bot_task: asyncio.Task[None] | None = None
        self._owns_http = owns_http
        self._owns_desk = owns_desk
        self._conversation_id = conversation_id
        self._publish_pending = False
        self._unsubscribe: Callable[[], None] = lambda: None
        self.knowledge_base = knowledge_base
        """The passage directory the editor writes; None: the editor is not offered."""
        self.kb_index: KnowledgeBaseIndex | None = None
        """Keeps the engine in step with that directory, whoever writes to it."""
        self.services = Services(
            desk=desk,
            live=live,
            clock=clock,
            agent=agent,
            changed=Signal(self, "store-changed"),
            timings=timings,
        )

    def get_default_screen(self) -> Screen[None]:
        return MODE_SCREENS[self.mode_name](self.services, conversation_id=self._conversation_id)

    async def on_mount(self) -> None:
        desk = self.services.desk
        self._unsubscribe = desk.subscribe(self._desk_changed)
        await desk.watch()
        if self.knowledge_base is not None:
            self.kb_index = KnowledgeBaseIndex(self, self.services.live)
            self.set_interval(KB_POLL_SECONDS, self.kb_index.poll)
            if self.mode_name == "editor":
                self.action_edit_knowledge_base()
        if self.bot is not None:
            self._bot_task = asyncio.create_task(self.bot.run(), name="embedded bot worker")

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

    def _publish_change(self) -> None:
        self._publish_pending = False
        self.services.changed.publish(self.services.desk.version)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "edit_knowledge_base":
            # Not offered without a knowledge base to edit (a customer's web session), nor in the
            # editor itself. The editor's module is looked up, not imported: it loads on first
            # use, never at start-up.
            editor = sys.modules.get("chatbot.tui.screens.editor")
            editing = editor is not None and any(
                isinstance(screen, editor.EditorScreen) for screen in self.screen_stack
            )
            return self.knowledge_base is not None and not editing
        if action == "analytics":
            return self._offers_analytics()
        return super().check_action(action, parameters)

    def _offers_analytics(self) -> bool:
        """For agents and editors; never in a customer's chat (`helpdesk chat`, the web's `/`)."""
        return self.mode_name != "chat"

    def action_analytics(self) -> None:
        # Imported when first opened, like the editor: most sessions never look.
        from chatbot.tui.screens.stats import StatsScreen

        if not self._offers_analytics() or isinstance(self.screen, ModalScreen):
            return
        if not any(isinstance(screen, StatsScreen) for screen in self.screen_stack):
            self.push_screen(StatsScreen(self.services))

    def action_edit_knowledge_base(self) -> None:
        # Imported when first opened: its widgets cost startup time that most sessions never use.
        from chatbot.tui.screens.editor import EditorScreen

        # Not over a dialog, and never a second editor on the stack.
        if self.kb_index is None or isinstance(self.screen, ModalScreen):
            return
        if not any(isinstance(screen, EditorScreen) for screen in self.screen_stack):
            self.push_screen(EditorScreen(self.services, index=self.kb_index))

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if self.knowledge_base is not None:
            yield SystemCommand("Knowledge base", "Edit passages, try questions, fill content gaps",
                                self.action_edit_knowledge_base)  # fmt: skip
        if self._offers_analytics():
            yield SystemCommand("Analytics", "How the desk is doing: resolution rate, "
                                "escalations, waits, scores, content gaps (F5)",
                                self.action_analytics)  # fmt: skip

    async def on_unmount(self) -> None:
        self._unsubscribe()
        if self.bot is not None and self._bot_task is not None:
            # Questions being judged go back to the store at once for the next worker (this app
            # opened again, or `helpdesk bot`): quitting never waits on Valen.
            self.bot.stop()
            await asyncio.gather(self._bot_task, return_exceptions=True)
        if self._owns_desk:
            await self.services.desk.aclose()
        if self._owns_http:
            await self.http.aclose()

    async def open_conversation(self, conversation_id: int) -> ConversationView:
        """Open a conversation by id in the agent console of the current screen."""
        return await self.screen.query_one(AgentConsole).open_conversation(conversation_id)

    # -- the agent --------------------------------------------------------------------------------

    async def ask_agent_name(self) -> bool:
        """Ask the agent for their display name (from a worker: it waits on a dialog), remember
        it in the settings file, and use it from now on. False if they cancelled."""
        from chatbot.settings_file import save_setting
        from chatbot.tui.screens.dialogs import NameDialog

        name = await self.push_screen_wait(NameDialog(default_agent_name()))
        if name is None:
            return False
        self.services.agent = name
        try:
            path = save_setting("agent", "name", name)
        except HelpdeskError as error:
            self.notify(f"{error}; using {name} until you quit", severity="warning")
        else:
            self.notify(f"Saved your name in {path}.")
        for queue in self.screen.query(QueueList):
            await queue.reload()  # Claims under this name, from an earlier session, show up.
        return True

    async def action_quit(self) -> None:
        """Offer to hand back this agent's claims before quitting: a claim left behind would
        keep its customer waiting for nobody."""
        agent = self.services.agent
        if agent is None or self.mode_name == "chat" or isinstance(self.screen, ClaimsOnQuit):
            await super().action_quit()
            return
        try:
            claims = await self.services.desk.claimed_by(agent)
        except HelpdeskError as error:
            self.notify(str(error), severity="error")
            claims = []
        if not claims:
            await super().action_quit()
            return

        async def answered(answer: ClaimsAnswer | None) -> None:
            if answer is None:
                return
            if answer == "hand-back":
                try:
                    await self.services.desk.release_claims(agent)
                except HelpdeskError as error:
                    self.notify(f"{error}; nothing was handed back", severity="error")
                    return
            await super(HelpDeskApp, self).action_quit()

        self.push_screen(ClaimsOnQuit(len(claims)), answered)


def default_agent_name() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # No user name in the environment or the password database.
        return "agent"


def create_app(
    settings: Settings,
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
) -> HelpDeskApp:
    """The app for the CLI and the tests. Bad settings (database, knowledge base, an unknown
    conversation) raise `HelpdeskError` here, before any screen opens. A passed `http` stays the
    caller's to close; what is created here is closed when the app exits. With `bot`, the app
    runs a bot worker of its own, so it answers questions with nothing else running. Without
    `editor`, the knowledge-base editor is not offered (F2 and the palette entry are gone). With
    `fixed_conversation`, the customer cannot start a new conversation (a browser session's is
    the one its cookie names)."""
    desk = AsyncDesk.open(lambda: open_service(settings, clock=clock))
    owns_http = http is None
    client = http if http is not None else make_http_client(settings)
    try:
        live = LiveEngine(build_engine(settings, client), settings.knowledge_base.path)
        if conversation_id is not None:
            desk.call_blocking(lambda service: service.conversation(conversation_id))
    except BaseException:
        desk.close()
        raise
    worker = None
    if bot:
        # Made directly, not by getLogger: it belongs to this app alone and goes away with it.
        log = logging.Logger("helpdesk.bot")
        worker = BotWorker(
            desk,
            lambda: live.engine,
            concurrency=settings.bot.concurrency,
            lease_s=settings.bot.lease_s,
            poll_s=settings.bot.poll_s,
            grace_s=0,
            log=log,
        )
    app = HelpDeskApp(
        desk=desk,
        live=live,
        http=client,
        bot=worker,
        mode=mode,
        clock=clock,
        # `--agent` (the web front end passes the account's name) wins and is never asked for;
        # then the name saved in the settings file; else the console asks on the first claim.
        agent=agent or settings.agent.name,
        conversation_id=conversation_id,
        timings=timings,
        owns_http=owns_http,
        owns_desk=True,
        knowledge_base=settings.knowledge_base.path if editor else None,
    )
    app.services.fixed_conversation = fixed_conversation
    if worker is not None:
        worker.log.addHandler(_AppLog(app))
    if settings.valen.replay == "on":
        engine = live.engine
        app.services.suggestions = recorded_questions(
            settings.valen.cache,
            threshold=engine.threshold,
            predicate=engine.predicate,
            model=settings.valen.model,
        )
    return app
