"""What every screen and widget of the app works with, handed to them when they are built."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chatbot.i18n import DEFAULT_LOCALE, Locale

# Annotations only: `helpdesk` shows its first screen before the desk (pydantic) is loaded.
if TYPE_CHECKING:
    from textual.signal import Signal

    from chatbot.desk.aio import AsyncDesk
    from chatbot.desk.clock import Clock
    from chatbot.engine.engine import Engine  # numpy: loaded after the first screen
    from chatbot.engine.live import LiveEngine
    from chatbot.tui.suggestions import Suggestion


@dataclass
class Services:
    """The desk, the engine and the app-wide change signal, shared by all screens."""

    desk: AsyncDesk
    """The only way to read or change conversations; every call runs off the UI thread."""
    live: LiveEngine
    """Keeps the engine in step with the knowledge base; the embedded bot reads it too."""
    clock: Clock
    agent: str | None
    """The name this app's agent claims and replies under (None: not known yet; the console asks
    on the first claim)."""
    changed: Signal[int]
    """Published whenever anyone (this process or another) commits a change."""
    suggestions_changed: Signal[tuple[Suggestion, ...]]
    """Published when `suggestions` change: decided again on a new knowledge base."""
    reach_changed: Signal[bool]
    """Published with False when the change feed loses the database, True when it is back."""
    bot_stalled_s: float
    """After how long a question with no decision has no bot answering it: the chat then offers
    a person, and the queue says so."""
    timings: bool = True
    """Show latencies; snapshot tests turn this off because latencies differ from run to run."""
    fixed_conversation: bool = False
    """The customer keeps the conversation they were given (a browser session's, which its
    cookie names): no "new conversation"."""
    suggestions: tuple[Suggestion, ...] = ()
    """Questions with recorded answers, offered in replay mode (where nothing else is judged),
    each saying whether the bot answers it or a person will reply."""
    locale: Locale = DEFAULT_LOCALE
    """The language of the agent's and editor's screens (`--locale`); a customer's chat follows
    its conversation's instead."""
    customer_locale: Locale = DEFAULT_LOCALE
    """The language a customer's chat is shown in until their first message decides: the one
    their browser asks for in `helpdesk serve`, their terminal's in `helpdesk chat`."""
    opened_locale: Locale | None = None
    """The language of the conversation the app was opened on (`--conversation`, a browser
    session's), read with the settings: its chat is drawn in it from the first frame."""
    bot_here: bool = True
    """This app runs a bot worker of its own, with its settings (replay mode or live). False
    (`--no-bot`, a browser session): other processes answer, and only a browser's (`serve`'s
    bots, on the same settings) are known to judge as these settings say."""
    translated: dict[Locale, LiveEngine] = field(default_factory=dict)
    """Engines over translated knowledge bases (`zh/`), for conversations in those languages:
    kept in step with their folders like `live` (filled once the engines are built)."""

    @property
    def engine(self) -> Engine:
        """The engine of this moment: read it at the moment of use. Raises `EngineNotReady`
        while the app is still building its first one; `await live.wait_ready()` waits."""
        return self.live.engine

    @engine.setter
    def engine(self, engine: Engine) -> None:
        self.live.engine = engine
