"""Keeps the app's engine in step with the knowledge base on disk.

A save in this app's editor rebuilds the index at once; a save from another process (another
app's editor, `helpdesk kb ...`) is noticed by a cheap poll of the directory's modification time,
which every atomic write changes (it renames a file into the directory). Rebuilds run in a thread
worker and the new engine is swapped in on the UI thread, so no question waits on a rebuild and a
question already in flight keeps the engine it started with.
"""

from __future__ import annotations

import logging
from pathlib import Path

from textual.app import App
from textual.signal import Signal

from chatbot.engine.engine import Engine
from chatbot.errors import HelpdeskError
from chatbot.knowledge_base.storage import read_knowledge_base
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui.services import Services

log = logging.getLogger(__name__)

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
        self._said: tuple[str, ...] = ()
        """The problems last shown, so a problem that persists is not shown every second."""

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
            # Nothing on disk may stop the app: whatever goes wrong, it keeps answering from the
            # last good index and says why.
            try:
                loaded = read_knowledge_base(self.passages.directory)
                engine = base.with_passages(loaded.passages)
            except HelpdeskError as error:  # A broken file, named in the message.
                self.app.call_from_thread(self._tell, (f"Knowledge base not reloaded: {error}",))
                return
            except Exception as error:  # noqa: BLE001 - a bug must not end every running app.
                log.exception("rebuilding the knowledge-base index failed")
                message = f"Knowledge base not reloaded: unexpected {type(error).__name__}: {error}"
                self.app.call_from_thread(self._tell, (message,))
                return
            self.app.call_from_thread(self._swap, generation, engine, tuple(loaded.skipped))

        # exit_on_error=False as well: a worker that raised would otherwise close the app.
        self.app.run_worker(build, thread=True, group="knowledge-base-index",
                            name="rebuild the BM25 index", exit_on_error=False)  # fmt: skip

    def _tell(self, problems: tuple[str, ...]) -> None:
        if problems and problems != self._said:
            for problem in problems:
                self.app.notify(problem, severity="error", markup=False)
        self._said = problems

    def _swap(self, generation: int, engine: Engine, skipped: tuple[str, ...] = ()) -> None:
        if generation != self._generation:
            return  # A newer rebuild is on its way; this one may have read an older directory.
        self.services.engine = engine
        self._tell(skipped)
        self.rebuilt.publish(len(engine.passages))
