"""Keeps the app's engine in step with the knowledge base on disk.

A save in this app's editor rebuilds the index at once; a save from another process (another
app's editor, `helpdesk kb ...`) is noticed by a cheap poll of the directory's modification time,
which every atomic write changes (it renames a file into the directory). Rebuilds run in a thread
worker and the new engine is swapped in on the UI thread, so no question waits on a rebuild and a
question already in flight keeps the engine it started with.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.signal import Signal

from chatbot.engine.engine import Engine
from chatbot.errors import HelpdeskError
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui.services import Services

POLL_SECONDS = 1.0


class KnowledgeBaseIndex:
    """Rebuilds `services.engine` from the knowledge-base directory when it changes."""

    def __init__(self, app: App[None], services: Services, directory: Path) -> None:
        self.app = app
        self.services = services
        self.passages = PassageStore(directory, lock_timeout=2.0)
        self.rebuilt: Signal[int] = Signal(app, "knowledge-base-rebuilt")
        """Published with the passage count each time a new engine is in place."""
        self._stamp = self.passages.stamp()
        self._generation = 0

    def poll(self) -> None:
        """Rebuild if anyone changed the directory since the last rebuild started."""
        if self.passages.stamp() != self._stamp:
            self.rebuild()

    def rebuild(self) -> None:
        """Build a new engine over what is on disk now, in a thread; newest rebuild wins."""
        # Stamp before reading: a write that lands during the read is caught by the next poll.
        self._stamp = self.passages.stamp()
        self._generation += 1
        generation = self._generation
        base = self.services.engine

        def build() -> None:
            try:
                engine = base.with_passages(self.passages.passages())
            except HelpdeskError as error:
                # A hand-broken file: keep answering from the last good index, and say why.
                self.app.call_from_thread(
                    self.app.notify,
                    f"Knowledge base not reloaded: {error}",
                    severity="error",
                    markup=False,
                )
                return
            self.app.call_from_thread(self._swap, generation, engine)

        self.app.run_worker(
            build, thread=True, group="knowledge-base-index", name="rebuild the BM25 index"
        )

    def _swap(self, generation: int, engine: Engine) -> None:
        if generation != self._generation:
            return  # A newer rebuild is on its way; this one may have read an older directory.
        self.services.engine = engine
        self.rebuilt.publish(len(engine.passages))
