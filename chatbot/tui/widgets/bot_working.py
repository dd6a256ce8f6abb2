"""The "bot is working" line under the chat while a question is being judged."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, LoadingIndicator

from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations

WORKING = N_("The bot is looking for an answer in the help center…")


class BotWorking(Horizontal):
    """Shown while the engine judges the customer's question; the input stays usable meanwhile."""

    def __init__(self, *, locale: Locale = DEFAULT_LOCALE, id: str | None = None) -> None:
        super().__init__(id=id)
        self.locale: Locale = locale

    def compose(self) -> ComposeResult:
        yield LoadingIndicator()
        yield Label(translations(self.locale).gettext(WORKING))

    def show_in(self, locale: Locale) -> None:
        """Say it in `locale` from now on."""
        self.locale = locale
        if self.is_mounted:
            self.query_one(Label).update(translations(locale).gettext(WORKING))
