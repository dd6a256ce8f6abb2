"""The "bot is working" line under the chat while a question is being judged."""

from __future__ import annotations

from datetime import datetime, timedelta

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widgets import Label

from chatbot.desk.clock import Clock
from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.tui.widgets.busy_dots import BusyDots

WORKING = N_("The bot is looking for an answer in the help center…")
SLOW = N_("This is taking longer than usual. Ctrl+T hands your question to a person.")
SLOW_IN_A_BROWSER = N_(
    "This is taking longer than usual. “Talk to a person”, below, hands your question to a person."
)
"""In a browser, which keeps Ctrl+T for a new tab and never passes it to the page: the footer's
button does it there."""


class BotWorking(Horizontal):
    """Shown while the engine judges the customer's question; the input stays usable meanwhile.
    A customer left looking at it is told, after `stalled_s`, that a person is one key away."""

    def __init__(
        self,
        *,
        clock: Clock,
        stalled_s: float,
        locale: Locale = DEFAULT_LOCALE,
        id: str | None = None,
    ):
        super().__init__(id=id)
        self.clock = clock
        self.stalled_s = stalled_s
        self.locale: Locale = locale
        self.since: datetime | None = None
        """When the bot started looking, as far as this chat saw; None while it is not."""
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield BusyDots()
        yield Label(self._sentence(self.slow))

    def on_mount(self) -> None:
        # The clock is checked once a second only while the line shows.
        self._timer = self.set_interval(1.0, self._update, pause=self.since is None)

    def start(self) -> None:
        """The bot is looking (from now) for an answer to the customer's question."""
        self.since = self.clock()
        self.display = True
        self._update()
        if self._timer is not None:
            self._timer.resume()

    def stop(self) -> None:
        self.since = None
        self.display = False
        if self._timer is not None:
            self._timer.pause()

    @property
    def slow(self) -> bool:
        stalled = timedelta(seconds=self.stalled_s)
        return self.since is not None and self.clock() - self.since >= stalled

    def _sentence(self, slow: bool) -> str:
        if not slow:
            return translations(self.locale).gettext(WORKING)
        return translations(self.locale).gettext(SLOW_IN_A_BROWSER if self.app.is_web else SLOW)

    def _update(self) -> None:
        if self.is_mounted:
            slow = self.slow
            label = self.query_one(Label)
            sentence = self._sentence(slow)
            if str(label.content) != sentence:  # Redrawn only when it changes, not each second.
                label.update(sentence)
            self.set_class(slow, "-slow")

    def show_in(self, locale: Locale) -> None:
        """Say it in `locale` from now on."""
        self.locale = locale
        self._update()
