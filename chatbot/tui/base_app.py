"""What every screen of the app can rely on, whoever wrote it: toasts show text literally, and
quitting asks first while a screen holds unsaved work."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from textual.app import App
from textual.notifications import SeverityLevel

from chatbot.text import printable


@runtime_checkable
class HoldsUnsavedWork(Protocol):
    """A screen that would lose what a person typed if the app quit now (the editor)."""

    def has_unsaved_work(self) -> bool: ...

    def confirm_quit(self) -> None:
        """Ask whether to throw the work away, and quit if the answer is yes."""


class SafeApp(App[None]):
    """An `App` whose toasts and quit cannot be misused by any caller."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        # Toasts name passages, files and errors that come from outside: one rendering path for
        # all of them, never markup, and every control character spelled out, never sent raw.
        super().notify(printable(message), title=printable(title), severity=severity,
                       timeout=timeout, markup=False)  # fmt: skip

    async def action_quit(self) -> None:
        for screen in reversed(self.screen_stack):
            if isinstance(screen, HoldsUnsavedWork) and screen.has_unsaved_work():
                screen.confirm_quit()
                return
        self.exit()
