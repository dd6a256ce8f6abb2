"""The screen behind the knowledge-base editor when the editor is all a session offers (the
`/editor` page of `helpdesk serve`): the app opens the editor over it at once."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from chatbot.i18n import DEFAULT_LOCALE, N_, translations
from chatbot.tui.screens.mode import ModeScreen
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.header import Header

CLOSED = N_(
    "The knowledge-base editor is closed. Press F2 to open it again, or Ctrl+Q to end this session."
)


class EditorHomeScreen(ModeScreen):
    """Shown only when the editor is closed: how to open it again or leave."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(self._closed_text(), id="editor-home")
        yield Footer()

    def _closed_text(self) -> str:
        """In the editor's language, once the settings (which name it) are loaded."""
        locale = self.services.locale if self.services is not None else DEFAULT_LOCALE
        return translations(locale).gettext(CLOSED)

    async def started(self) -> None:
        self.query_one("#editor-home", Static).update(self._closed_text())
