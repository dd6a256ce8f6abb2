"""The screen behind the knowledge-base editor when the editor is all a session offers (the
`/editor` page of `helpdesk serve`): the app opens the editor over it at once."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Header, Static

from chatbot.tui.screens.mode import ModeScreen
from chatbot.tui.widgets.footer import Footer


class EditorHomeScreen(ModeScreen):
    """Shown only when the editor is closed: how to open it again or leave."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(
            "The knowledge-base editor is closed. Press F2 to open it again, or Ctrl+Q to end "
            "this session.",
            id="editor-home",
        )
        yield Footer()
