"""An engine that follows the knowledge base on disk, for the app and for bot workers alike.

A write through the editor or `helpdesk kb` renames a file into the passage directory, which
changes the directory's modification time: a cheap stat tells whether to rebuild. Rebuilds read
the files and build the BM25 index in a thread, then swap the new engine in whole, so a question
in flight keeps the engine it started with and no question waits on a rebuild. A broken file
never stops anything: the last good engine keeps answering, and the problem is reported.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from chatbot.engine.engine import Engine
from chatbot.errors import HelpdeskError
from chatbot.knowledge_base.storage import read_knowledge_base
from chatbot.knowledge_base.store import PassageStore

log = logging.getLogger(__name__)

POLL_S = 1.0


class LiveEngine:
    """Holds the current engine; `engine` is read at the moment of use."""

    def __init__(
        self,
        engine: Engine,
        directory: Path | None = None,
        *,
        on_problem: Callable[[str], None] | None = None,
        on_rebuilt: Callable[[Engine], None] | None = None,
    ) -> None:
        self.engine = engine
        """The engine of this moment; replaced whole when the knowledge base changes."""
        self.passages = None if directory is None else PassageStore(directory, lock_timeout=2.0)
        self.on_problem = on_problem
        """Told (one line each) why a rebuild was refused, the last good engine staying, or
        which entries it skipped; a problem that persists is told once, not at every poll."""
        self.on_rebuilt = on_rebuilt
        """Told of each new engine once it is in place."""
        self._stamp = None if self.passages is None else self.passages.stamp()
        self._generation = 0
        self._told: tuple[str, ...] = ()

    def changed(self) -> bool:
        """Whether anyone changed the directory since the last rebuild started."""
        return self.passages is not None and self.passages.stamp() != self._stamp

    async def poll(self) -> None:
        if self.changed():
            await self.rebuild()

    async def follow(self, interval: float = POLL_S) -> None:
        """Poll the directory every `interval` seconds, for as long as the task runs."""
        while True:
            await asyncio.sleep(interval)
            await self.poll()

    async def rebuild(self) -> Engine | None:
        """Build a new engine over what is on disk now, off the loop; newest rebuild wins.
        Returns the engine put in place, or None (refused, or overtaken by a newer rebuild)."""
        passages = self.passages
        if passages is None:
            return None
        # Stamp before reading: a write that lands during the read is caught by the next poll.
        self._stamp = passages.stamp()
        self._generation += 1
        generation = self._generation
        base = self.engine

        def build() -> tuple[Engine, list[str]]:
            loaded = read_knowledge_base(passages.directory)
            # Synonyms too: an editor's save of them renames a file into the directory as well.
            engine = base.with_passages(loaded.passages).with_synonyms(passages.synonyms())
            return engine, loaded.skipped

        # Nothing on disk may stop the app or a worker: whatever goes wrong, the last good engine
        # keeps answering, and the problem is told.
        try:
            engine, skipped = await asyncio.to_thread(build)
        except HelpdeskError as error:  # A broken file, named in the message.
            self._tell((f"Knowledge base not reloaded: {error}",))
            return None
        except Exception as error:  # noqa: BLE001 - a bug must not stop every running app.
            log.exception("rebuilding the knowledge-base index failed")
            unexpected = f"unexpected {type(error).__name__}: {error}"
            self._tell((f"Knowledge base not reloaded: {unexpected}",))
            return None
        return self.swap(generation, engine, tuple(skipped))

    def swap(self, generation: int, engine: Engine, skipped: tuple[str, ...] = ()) -> Engine | None:
        """Put a rebuilt engine in place unless a newer rebuild started after it."""
        if generation != self._generation:
            return None  # A newer rebuild is on its way; this one may have read an older directory.
        self.engine = engine
        self._tell(skipped)
        if self.on_rebuilt is not None:
            self.on_rebuilt(engine)
        return engine

    def _tell(self, problems: tuple[str, ...]) -> None:
        if problems and problems != self._told and self.on_problem is not None:
            for problem in problems:
                self.on_problem(problem)
        self._told = problems
