"""Two consoles under one `--agent` name (ben's), and the question one of them asks when it
quits while the other is open."""

from __future__ import annotations

from typing import Any

import httpx
from textual.drivers.headless_driver import HeadlessDriver
from textual.widgets import Button

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp, create_app
from tests.tui.conftest import FrozenClock
from tests.tui.helpers import flat, screen_text

SIZE = (80, 24)
ANOTHER = "another of your consoles is still open"


def console(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, **options: Any
) -> HelpDeskApp:
    """`helpdesk agent --agent ben --no-bot`."""
    return create_app(settings, mode="agent", http=http, clock=clock, agent="ben",
                      timings=False, bot=False, **options)  # fmt: skip


def waiting(desk: DeskService, question: str) -> int:
    conversation = desk.start_conversation().id
    desk.talk_to_person(conversation)
    desk.ask(conversation, question)
    return conversation


def held_by_ben(other: DeskService) -> tuple[int, int, int]:
    """#1 and #2 claimed by ben in his first console; #3 waiting."""
    first, second = waiting(other, "Where is my refund?"), waiting(other, "The dock is broken")
    for conversation in (first, second):
        assert other.claim(conversation, agent="ben").won
    return first, second, waiting(other, "My helmet strap broke")


def question(app: HelpDeskApp) -> str:
    """The dialog's words, and its buttons' labels, as shown."""
    dialog = app.screen.query_one("#claims-dialog")
    return (
        flat(screen_text(app, dialog.query_one(".dialog-text")))
        + " | "
        + " | ".join(str(button.label) for button in dialog.query(Button) if button.display)
    )


def consoles_open(other: DeskService) -> int:
    return len(other.store.sessions_seen("ben"))


class UrlsOpened(HeadlessDriver):
    """Keeps the URLs the app asks to open, as a browser would get them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.opened: list[str] = []

    def open_url(self, url: str, new_tab: bool = True) -> None:
        self.opened.append(url)
