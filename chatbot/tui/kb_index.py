"""The app's view of the live engine (`chatbot.engine.live`): rebuilds run as app workers, a
refused rebuild becomes a notification, and each new engine is announced to the editor.

`follow` runs for as long as the app does, in every session: a customer's suggested questions
and an agent's passage picker read the engine as much as the editor does. It polls the knowledge
base's stamp every second; an editor's session also listens for a knowledge base in PostgreSQL
to announce another process's change, which wakes it at once."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from textual.signal import Signal

from chatbot.engine.live import POLL_S, LiveEngine, Unreachable
from chatbot.i18n import N_, translations

if TYPE_CHECKING:
    from chatbot.engine.engine import Engine
    from chatbot.knowledge_base.interface import KnowledgeBaseStore
    from chatbot.tui.app import HelpDeskApp

POLL_SECONDS = POLL_S

log = logging.getLogger(__name__)

KB_AWAY = N_(
    "The knowledge base cannot be reached just now: the bot answers from the passages it had. "
    "Nothing is lost."
)
"""Said once per outage in place of the driver's line; nothing is said when it is back: the
editor says that itself of a write it could not make, and the bot simply answers as before."""


class KnowledgeBaseIndex:
    """Rebuilds the app's engine from the knowledge base when it changes."""

    def __init__(self, app: HelpDeskApp, live: LiveEngine, *, editing: bool = True) -> None:
        """`editing`: this session may edit the knowledge base (it offers the editor)."""
        assert live.passages is not None, "the index follows a knowledge base"
        self.app = app
        self.live = live
        self.passages: KnowledgeBaseStore = live.passages
        self.editing = editing
        self.problems_said: frozenset[str] = frozenset()
        """The bad passage files the app's editor has named: said once while they last, not again
        at each opening of the editor (a new screen each time)."""
        self.rebuilt: Signal[int] = Signal(app, "knowledge-base-rebuilt")
        """Published with the passage count each time a new engine is in place."""
        live.on_problem = self._problem
        live.on_rebuilt = self._rebuilt

    def poll(self) -> None:
        """Rebuild if anyone changed the passages since the last rebuild started."""
        if self.live.changed():
            self.rebuild()

    async def follow(self, interval: float | None = None) -> None:
        """Poll every `interval` seconds (default `POLL_SECONDS`), and, in an editor's session,
        after each announced change."""
        every = POLL_SECONDS if interval is None else interval
        if not self.editing:
            # No `watch()`: on PostgreSQL it holds a connection of its own per session (LISTEN),
            # which a browser server's hundreds of customers and agents would each keep open; the
            # stamp, one small query a second on the store's own connection, is enough for them.
            while True:
                await asyncio.sleep(every)
                await self._check()
        async with self.passages.watch() as changes:
            while True:
                await changes.wait(every)
                await self._check()

    async def _check(self) -> None:
        # Off the UI thread: in PostgreSQL the stamp is a query, and a server that is slow to
        # answer must not freeze the screen.
        if await asyncio.to_thread(self.live.changed):
            self.rebuild()

    def rebuild(self) -> None:
        """Build a new engine over the passages as they are now, off the UI thread; newest
        rebuild wins."""
        self.app.run_worker(
            self.live.rebuild(), group="knowledge-base-index", name="rebuild the BM25 index"
        )

    def _problem(self, message: str) -> None:
        # A hand-broken file: the last good index keeps answering; say why it was not reloaded,
        # to whoever can mend it. A customer cannot, and the bots say it in their log.
        if not self.editing:
            log.info("%s", message)
        elif isinstance(message, Unreachable):
            # An outage: nothing to mend, and the driver's line (address, FATAL) helps no editor.
            log.info("%s", message)
            plain = translations(self.app.ui_locale).gettext(KB_AWAY)
            self.app.notify(plain, severity="warning", markup=False)
        else:
            self.app.notify(message, severity="error", markup=False)

    def _rebuilt(self, engine: Engine) -> None:
        self.rebuilt.publish(len(engine.passages))
