"""The Textual app: which screen each mode opens, store polling, and the shared HTTP client.

Screens are registered in `MODE_SCREENS` alone; everything they need arrives in `Services`.
"""

from __future__ import annotations

import getpass
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, Protocol

import httpx
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.signal import Signal

from chatbot.assembly import build_engine, make_http_client
from chatbot.config import Settings
from chatbot.engine.engine import Engine
from chatbot.store import Clock, Store, utc_now
from chatbot.tui.base_app import SafeApp
from chatbot.tui.commands import HelpDeskCommands
from chatbot.tui.kb_index import POLL_SECONDS as KB_POLL_SECONDS
from chatbot.tui.kb_index import KnowledgeBaseIndex
from chatbot.tui.messages import StoreWritten
from chatbot.tui.screens.agent import AgentScreen
from chatbot.tui.screens.chat import ChatScreen
from chatbot.tui.screens.desk import DeskScreen
from chatbot.tui.services import Services
from chatbot.tui.suggestions import recorded_questions
from chatbot.tui.widgets.agent_console import AgentConsole
from chatbot.tui.widgets.conversation_view import ConversationView

Mode = Literal["all", "chat", "agent"]


class ScreenFactory(Protocol):
    def __call__(
        self, services: Services, *, conversation_id: int | None = None
    ) -> Screen[None]: ...


MODE_SCREENS: dict[Mode, ScreenFactory] = {
    "all": DeskScreen,
    "chat": ChatScreen,
    "agent": AgentScreen,
}
SUBTITLES: dict[Mode, str] = {
    "all": "customer chat and handoff queue",
    "chat": "customer chat",
    "agent": "agent console",
}


class HelpDeskApp(SafeApp):
    """Owns the store connection and the HTTP client it was given to own, and polls the store."""

    CSS_PATH = "app.tcss"
    TITLE = "helpdesk"
    COMMANDS = App.COMMANDS | {HelpDeskCommands}
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("f2", "edit_knowledge_base", "Knowledge base"),
    ]
    POLL_SECONDS = 0.5

    def __init__(
        self,
        *,
        store: Store,
        engine: Engine,
        http: httpx.AsyncClient,
        mode: Mode = "all",
        clock: Clock = utc_now,
        agent: str = "agent",
        conversation_id: int | None = None,
        timings: bool = True,
        owns_http: bool = False,
        owns_store: bool = False,
        knowledge_base: Path | None = None,
    ) -> None:
        super().__init__()
        self.mode_name: Mode = mode
        self.sub_title = SUBTITLES[mode]
        self.http = http
        self._owns_http = owns_http
        self._owns_store = owns_store
        self._conversation_id = conversation_id
        self._version = -1
        self.knowledge_base = knowledge_base
        """The passage directory the editor writes; None: the editor is not offered."""
        self.kb_index: KnowledgeBaseIndex | None = None
        """Keeps the engine in step with that directory, whoever writes to it."""
        self.services = Services(
            store=store,
            engine=engine,
            clock=clock,
            agent=agent,
            changed=Signal(self, "store-changed"),
            timings=timings,
        )

    def get_default_screen(self) -> Screen[None]:
        return MODE_SCREENS[self.mode_name](self.services, conversation_id=self._conversation_id)

    def on_mount(self) -> None:
        self._version = self.services.store.version()
        self.set_interval(self.POLL_SECONDS, self.poll_store)
        if self.knowledge_base is not None:
            self.kb_index = KnowledgeBaseIndex(self, self.services, self.knowledge_base)
            self.set_interval(KB_POLL_SECONDS, self.kb_index.poll)

    def poll_store(self) -> None:
        """Tell every widget when anyone committed: one cheap PRAGMA when nothing changed."""
        version = self.services.store.version()
        if version != self._version:
            self._version = version
            self.services.changed.publish(version)

    def on_store_written(self, message: StoreWritten) -> None:
        self.poll_store()

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

    async def on_unmount(self) -> None:
        if self._owns_http:
            await self.http.aclose()
        if self._owns_store:
            self.services.store.close()

    async def open_conversation(self, conversation_id: int) -> ConversationView:
        """Open a conversation by id in the agent console of the current screen."""
        return await self.screen.query_one(AgentConsole).open_conversation(conversation_id)


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
    store: Store | None = None,
    clock: Clock = utc_now,
    agent: str | None = None,
    conversation_id: int | None = None,
    timings: bool = True,
) -> HelpDeskApp:
    """The app for the CLI and the tests. Bad settings (database, knowledge base) raise
    `HelpdeskError` here, before any screen opens. A passed `http` or `store` stays the caller's
    to close; ones created here are closed when the app exits."""
    owns_store = store is None
    store = store if store is not None else Store.open(settings.store.db, clock=clock)
    owns_http = http is None
    client = http if http is not None else make_http_client(settings)
    try:
        engine = build_engine(settings, client)
        if conversation_id is not None:
            store.conversation(conversation_id)
    except BaseException:
        if owns_store:
            store.close()
        raise
    app = HelpDeskApp(
        store=store,
        engine=engine,
        http=client,
        mode=mode,
        clock=clock,
        agent=agent or default_agent_name(),
        conversation_id=conversation_id,
        timings=timings,
        owns_http=owns_http,
        owns_store=owns_store,
        knowledge_base=settings.knowledge_base.path,
    )
    if settings.valen.replay == "on":
        app.services.suggestions = recorded_questions(settings.valen.cache)
    return app
