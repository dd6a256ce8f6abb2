"""Asked once a person resolved the customer's conversation: how satisfied were they, 1 to 5."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Static

from chatbot.desk.models import RATINGS
from chatbot.i18n import DEFAULT_LOCALE, Locale, translations
from chatbot.notices import rating_prompt
from chatbot.tui.widgets.chat_log import ChatLog


class RatingPrompt(Vertical, can_focus=True):
    """The question and five buttons. One Tab stop as a whole (its keys 1–5 rate), so Tab never
    steps through five buttons, and the buttons answer clicks."""

    # Not in the footer, which has no room left at 80 columns: the question says which keys
    # rate while the prompt has the keyboard, and the key that brings the keyboard to it from
    # the widget next to it (the question box, which keeps the focus while the prompt shows).
    BINDINGS = [Binding(str(rating), f"rate({rating})", show=False) for rating in RATINGS]

    @dataclass
    class Rated(Message):
        """The customer picked a rating."""

        rating: int

    def __init__(self, *, locale: Locale = DEFAULT_LOCALE, id: str | None = None) -> None:
        super().__init__(id=id)
        self.agent: str | None = None
        """Who resolved the conversation, named in the question."""
        self.locale: Locale = locale
        """The customer's language, which the question is asked in."""

    def compose(self) -> ComposeResult:
        yield Static(Text(rating_prompt(self.agent, locale=self.locale)), id="rating-question")
        # The buttons come with the first question: until a conversation is resolved the prompt
        # is hidden, and the first screen need not make (and style) five buttons.
        yield Horizontal(id="rating-buttons")

    def ask(self, agent: str | None) -> None:
        """Show the question, naming who resolved the conversation."""
        self.agent = agent
        buttons = self.query_one("#rating-buttons", Horizontal)
        if not buttons.children:
            buttons.mount_all(self._buttons())
        self.display = True
        self._show_question()
        # Again once shown: only then is it in the focus chain, which says the key to it.
        self.call_after_refresh(self._show_question)

    def _buttons(self) -> list[Button]:
        made = []
        for rating in RATINGS:
            button = Button(str(rating), id=f"rate-{rating}", compact=True)
            button.can_focus = False
            made.append(button)
        return made

    def show_in(self, locale: Locale) -> None:
        """Ask in `locale` from now on."""
        self.locale = locale
        if self.is_mounted:
            self._show_question()

    def on_mount(self) -> None:
        self.watch(self.screen, "focused", self._focus_moved, init=False)

    def _focus_moved(self, _focused: Widget | None) -> None:
        if self.display:
            self._show_question()

    def _show_question(self) -> None:
        self.query_one("#rating-question", Static).update(Text(self.question()))

    def question(self) -> str:
        """The question as shown now: from the question box below it or the conversation above
        (whose typed keys go to the box), a number typed and sent rates; in a terminal, the key
        that reaches the prompt from there too (Shift+Tab from the box, Tab from the
        conversation); once it has the keyboard, the keys that rate. A browser is told of its
        buttons instead: a phone has no Shift+Tab."""
        if self.has_focus:
            return rating_prompt(self.agent, keys=True, locale=self.locale)
        question = rating_prompt(self.agent, locale=self.locale)
        focused = self.screen.focused
        chain = self.screen.focus_chain
        if focused is None or self not in chain or focused not in chain:
            return question
        t = translations(self.locale)
        step = chain.index(focused) - chain.index(self)
        if step not in (1, -1):
            return question
        if self.app.is_web:
            return t.gettext("{question} type a number and press Enter, or pick one below.").format(
                question=question
            )
        if step == 1:
            return t.gettext(
                "{question} type a number and press Enter, or press Shift+Tab, then a number."
            ).format(question=question)
        return t.gettext(
            "{question} type a number and press Enter, or press Tab, then a number."
        ).format(question=question)

    def watch_has_focus(self, has_focus: bool) -> None:
        super().watch_has_focus(has_focus)
        if self.is_mounted:
            self._show_question()

    def on_key(self, event: events.Key) -> None:
        # Any other character, and a key that deletes text, is meant for the question box, as
        # one typed on the conversation. The keys 1-5 go on to the app, which runs this prompt's
        # binding for them.
        typed = ChatLog.Typed.of(event)
        if typed is not None and event.key not in self._bindings.key_to_bindings:
            event.stop()
            event.prevent_default()
            self.post_message(typed)

    def action_rate(self, rating: int) -> None:
        self.post_message(self.Rated(rating))

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id is not None and event.button.id.startswith("rate-"):
            self.post_message(self.Rated(int(event.button.id.removeprefix("rate-"))))
