"""The app's view of the live engine (`chatbot.engine.live`): rebuilds run as app workers, a
refused rebuild becomes a notification, and each new engine is announced to the editor.

`follow` runs for as long as the app does: it polls a knowledge base on files every second, and
wakes at once when a knowledge base in PostgreSQL announces another process's change."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual.app import App
from textual.signal import Signal

from chatbot.engine.live import POLL_S, LiveEngine

if TYPE_CHECKING:
    from chatbot.engine.engine import Engine
    from chatbot.knowledge_base.interface import KnowledgeBaseStore

POLL_SECONDS = POLL_S


class KnowledgeBaseIndex:
    """Rebuilds the app's engine from the knowledge-base directory when it changes."""

    def __init__(self, app: App[None], live: LiveEngine) -> None:
        assert live.passages is not None, "the editor needs a knowledge base to write to"
        self.app = app
        self.live = live
        self.passages: KnowledgeBaseStore = live.passages
        self.rebuilt: Signal[int] = Signal(app, "knowledge-base-rebuilt")
        """Published with the passage count each time a new engine is in place."""
        live.on_problem = self._problem
        live.on_rebuilt = self._rebuilt

    def poll(self) -> None:
        """Rebuild if anyone changed the passages since the last rebuild started."""
        if self.live.changed():
            self.rebuild()

    async def follow(self, interval: float | None = None) -> None:
        """Poll after each announced change, and every `interval` seconds (default
        `POLL_SECONDS`) in any case."""
        every = POLL_SECONDS if interval is None else interval
        async with self.passages.watch() as changes:
            while True:
                await changes.wait(every)
                # Off the UI thread: in PostgreSQL the stamp is a query, and a server that is
                # slow to answer must not freeze the screen.
                if await asyncio.to_thread(self.live.changed):
                    self.rebuild()

    def rebuild(self) -> None:
        """Build a new engine over the passages as they are now, off the UI thread; newest
        rebuild wins."""
        self.app.run_worker(
            self.live.rebuild(), group="knowledge-base-index", name="rebuild the BM25 index"
        )

    def _problem(self, message: str) -> None:
        # A hand-broken file: the last good index keeps answering; say why it was not reloaded.
        self.app.notify(message, severity="error", markup=False)

    def _rebuilt(self, engine: Engine) -> None:
        self.rebuilt.publish(len(engine.passages))
