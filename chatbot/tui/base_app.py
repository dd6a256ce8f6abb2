"""What every screen of the app can rely on, whoever wrote it: toasts show text literally, no box
draws a pasted escape sequence, and quitting asks first while a screen holds unsaved work."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.driver import Driver
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Input

from chatbot.text import printable, strip_control
from chatbot.tui import cjk_wrap
from chatbot.tui.widgets.plain_input import PlainInput, joined_lines


@runtime_checkable
class HoldsUnsavedWork(Protocol):
    """A screen that would lose what a person typed if the app quit now (the editor)."""

    def has_unsaved_work(self) -> bool: ...

    def confirm_quit(self) -> None:
        """Ask whether to throw the work away, and quit if the answer is yes."""


def auto_focus(screen: Screen[Any]) -> None:
    """Focus the first focusable match of the screen's `AUTO_FOCUS` (else the app's) if nothing
    has the focus, as Textual does when it shows a screen while the app has the focus."""
    selector = screen.AUTO_FOCUS if screen.AUTO_FOCUS is not None else screen.app.AUTO_FOCUS
    if not selector or screen.focused is not None:
        return
    for widget in screen.query(selector):
        if widget.focusable:
            screen.set_focus(widget)
            return


class SafeApp(App[None]):
    """An `App` whose toasts and quit cannot be misused by any caller."""

    BINDINGS = [
        # Textual's keys panel (Ctrl+P → "Keys") closed only by picking "Keys" again. Escape
        # closes it too, but only where nothing else takes Escape first (Back, Close, Cancel:
        # the screen's bindings come before the app's), and only while it is shown (see
        # `check_action`). A system key: the panel does not list it among the screen's keys.
        Binding("escape", "hide_help_panel", show=False, system=True),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Chinese breaks between characters, not only at spaces, in every widget of the app
        # (patched into Rich and Textual when an app is made, never at import).
        cjk_wrap.install()
        super().__init__(*args, **kwargs)

    _page_focused = False
    """The page has told the app it has the keyboard (a browser session)."""
    _blurred_once = False
    """The first blur has come: in a browser session, the web driver's own."""

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

    async def on_event(self, event: events.Event) -> None:
        # Our boxes (PlainInput) keep no control character; Textual's own, the command palette's,
        # draws what it holds as it is, so a paste of `\x1b[2J` there reached the terminal.
        # Such a box gets the paste as our boxes would keep it.
        if (
            isinstance(event, events.Paste)
            and not event.is_forwarded
            and isinstance(self.focused, Input)
            and not isinstance(self.focused, PlainInput)
        ):
            event = events.Paste(strip_control(joined_lines(event.text), one_line=True))
        await super().on_event(event)

    def get_driver_class(self) -> type[Driver]:
        # A terminal's pastes are cleaned as a browser's are (see `terminal_driver`).
        driver = super().get_driver_class()
        if driver.__name__ == "LinuxDriver":
            from chatbot.tui.terminal_driver import TerminalDriver

            return TerminalDriver
        return driver

    async def _on_app_blur(self, event: events.AppBlur) -> None:
        # The web driver blurs the app as it starts, from a callback queued behind what the page
        # sent meanwhile; the page focuses its terminal once the app draws, so its focus could
        # come first and be undone: the app drew itself inactive (no cursor, half its keys) and
        # dropped a paste, until a key press. That first blur, after the page's focus, is moot.
        # (Textual calls each class's handler in turn: preventing the default skips `App`'s.)
        first, self._blurred_once = not self._blurred_once, True
        if first and self._page_focused and self.is_web:
            event.prevent_default()

    def on_app_focus(self, _event: events.AppFocus) -> None:
        self._page_focused = True
        # Textual focuses a screen's AUTO_FOCUS only while the app has the focus. A browser
        # session starts without it (the page's terminal tells the app once it is focused), so
        # its first screen could come up with nothing focused, and what the customer typed then
        # went nowhere.
        auto_focus(self.screen)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "hide_help_panel":
            # Otherwise Escape goes on its way (a box, a dialog's own handling of it).
            return bool(self.screen.query("HelpPanel"))
        return super().check_action(action, parameters)

    async def action_quit(self) -> None:
        for screen in reversed(self.screen_stack):
            if isinstance(screen, HoldsUnsavedWork) and screen.has_unsaved_work():
                screen.confirm_quit()
                return
        self.exit()
