"""The header line: Textual's, with a title that follows the app's and the screen's as it does,
and that an app ending as it starts leaves be."""

from __future__ import annotations

from textual import events
from textual.widgets import Header as TextualHeader
from textual.widgets._header import HeaderTitle


class Header(TextualHeader):
    """Textual's header, updating its title without a coroutine.

    Textual's own makes a coroutine for each change of the title (four as it mounts), and finds
    its title part in it. An app ending as its first screen is built (a browser's page closed
    within a second of opening) mounts none of the header's parts: the first coroutine failed,
    and the others were never run, each said on stderr, in serve's log, once collected."""

    def _on_mount(self, event: events.Mount) -> None:
        # In place of Textual's header's own handler (and `Widget`'s, for scrollbars it lacks).
        event.prevent_default()
        for node in (self.app, self.screen):
            self.watch(node, "title", self._show_title)
            self.watch(node, "sub_title", self._show_title)

    def _show_title(self) -> None:
        # Its title part is missing where the header was built as the app ended (see
        # `HelpDeskApp.ending`); detached, it has no screen to take the title from.
        if self.is_attached:
            for title in self.query(HeaderTitle):
                title.update(self.format_title())
