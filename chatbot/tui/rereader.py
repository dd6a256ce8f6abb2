"""Reading the desk again when it changes, in a worker, one read for a burst of changes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual.css.query import NoMatches
from textual.widget import Widget


class Rereader:
    """Reads again when asked (`soon`), in a worker of `owner`'s: a handler that awaited the read
    itself took no key, Escape included, while the desk answered (the whole deadline, in an
    outage). Asks that come while a read runs make one more read, not one each."""

    def __init__(
        self,
        owner: Widget,
        read: Callable[[], Awaitable[None]],
        *,
        group: str,
        done: Callable[[], bool] = lambda: False,
    ) -> None:
        """`done`: true once `owner` reads no more (closed)."""
        self._owner = owner
        self._read = read
        self._group = group
        self._done = done
        self._again = False
        """A change was heard of: `_follow` reads again."""
        self._following = False

    def soon(self) -> None:
        if self._done():
            return
        self._again = True
        if not self._following:
            self._following = True
            self._owner.run_worker(self._follow(), group=self._group)

    async def _follow(self) -> None:
        try:
            while self._again and not self._done():
                self._again = False
                await self._read()
        except NoMatches:
            if self._owner.display and self._owner.is_attached:
                raise
            # Taken down while the desk answered (dismissed, the app closing): its parts are gone.
        finally:
            self._following = False
