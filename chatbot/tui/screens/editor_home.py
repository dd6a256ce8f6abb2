"""The screen behind the knowledge-base editor when the editor is all a session offers (the
`/editor` page of `helpdesk serve`): the app opens the editor over it at once."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Header, Static

from chatbot.tui.services import Services
from chatbot.tui.widgets.footer import Footer


class EditorHomeScreen(Screen[None]):
    """Shown only when the editor is closed: how to open it again or leave."""

    def __init__(self, services: Services, *, conversation_id: int | None = None) -> None:
        super().__init__()
        self.services = services

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(
            "The knowledge-base editor is closed. Press F2 to open it again, or Ctrl+Q to end "
            "this session.",
            id="editor-home",
        )
        yield Footer()
