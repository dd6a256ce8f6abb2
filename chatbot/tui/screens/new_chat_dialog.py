"""Asked before a customer starts a new chat while a person has theirs, or it waits for one: the
request stays in the queue, and the person's replies go to it, not to the new chat."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Button, Static

from chatbot.desk.models import State
from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.text import printable
from chatbot.tui.localize import localize_bindings
from chatbot.tui.screens.modal import Dialog, DialogButton
from chatbot.tui.widgets.button_row import ButtonRow
from chatbot.tui.widgets.footer import Footer


def new_chat_question(state: State, agent: str | None, *, locale: Locale = DEFAULT_LOCALE) -> str:
    """What starting a new chat leaves behind, for a conversation a person has (`CLAIMED`, by
    `agent`) or is waited for (`WAITING`)."""
    t = translations(locale)
    if state is State.WAITING:
        return t.gettext(
            "You are waiting for a person. If you start a new chat, your request stays in the "
            "queue and the person's reply goes to this conversation: it will not appear in the "
            "new chat."
        )
    if agent is None:
        helping = t.gettext("A person (support agent) is helping you.")
    else:
        helping = t.gettext("{agent} (support agent) is helping you.").format(
            agent=printable(agent)
        )
    return t.gettext(
        "{helping} If you start a new chat, their replies go to this conversation: they will "
        "not appear in the new chat."
    ).format(helping=helping)


class NewChatDialog(Dialog[bool]):
    """Start a new chat (True) or stay in this one. Staying has the focus: Enter pressed on
    the dialog by habit loses nothing.

    It opens on Ctrl+B, which a customer may press by mistake while typing: no letter answers
    it. The `y` of "my bike has a flat tyre" started the new chat, the waiting conversation left
    behind and the words typed lost. A character typed (or a paste) on it answers "stay" and goes
    on to the chat, in turn with the keys typed after it (`Dialog.hand_on_typed`)."""

    BINDINGS = [
        # Ctrl+B again is the new chat the customer asked for, as Ctrl+Q again hands back on the
        # quit dialog.
        Binding("ctrl+b", "answer(True)", N_("New chat")),
        Binding("escape", "answer(False)", N_("Stay")),
    ]

    def __init__(self, state: State, agent: str | None, *, locale: Locale = DEFAULT_LOCALE) -> None:
        super().__init__()
        self.state = state
        self.agent = agent
        self.locale: Locale = locale
        localize_bindings(self, locale)

    def compose(self) -> ComposeResult:
        t = translations(self.locale)
        with Vertical(id="new-chat-dialog", classes="dialog"):
            yield Static(
                Text(new_chat_question(self.state, self.agent, locale=self.locale)),
                classes="dialog-text",
                id="new-chat-question",
            )
            with ButtonRow():
                yield DialogButton(
                    t.gettext("Start a new chat (Ctrl+B)"), variant="warning", id="new-chat"
                )
                yield DialogButton(t.gettext("Stay here (Esc)"), id="stay")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#stay", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "new-chat")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    def answer_typing(self) -> bool:
        self.dismiss(False)  # Stay: off the stack at once, the words go on to the chat.
        return True
