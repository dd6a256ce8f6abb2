"""Small dialogs of the agent console: the agent's display name, and what becomes of their claims
when they quit. Centred over the screen they ask about (app.tcss)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from rich.text import Text
from textual import events, on
from textual._time import get_time
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Button, Input, Static, TextArea

from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.notices import hand_back_question
from chatbot.text import is_blank, strip_control
from chatbot.tui.localize import localize_bindings
from chatbot.tui.screens.modal import Dialog, DialogButton, handed_on, typing
from chatbot.tui.widgets.button_row import ButtonRow
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.plain_input import PlainInput

ClaimsAnswer = Literal["hand-back", "hand-back-here", "keep"]
"""Every claim back to the queue, only those this console took, or none."""

BURST_S = 1.0
"""Keys typed this close to a dialog opening, and to each other after that, were typed before it
could be read: the reply the agent was writing when Ctrl+L (F6, Ctrl+N) asked their name, or when
Ctrl+Q, pressed by mistake, asked about their claims."""

BURST_KEYS = frozenset({"enter", "backspace"})
"""Keys besides typing that go on with a burst (`NameDialog.hand_on_typed`): its Enter saved the
reply's words as the agent's name, which customers see."""


def check_name(name: str, *, locale: Locale = DEFAULT_LOCALE) -> str:
    """The name as it will be shown, or a `ValueError` saying (in `locale`) what is wrong with
    it. The rule is every display name's (`check_display_name`: an account's, `--agent`'s,
    `[agent] name`'s), so the name saved here is one the settings loader takes back; what the
    field cannot show (control and invisible characters, as pasted) is dropped rather than
    refused."""
    from chatbot.accounts.models import MAX_DISPLAY_NAME, check_display_name, drop_invisible
    from chatbot.errors import HelpdeskError

    name = drop_invisible(strip_control(name, one_line=True))
    name = " ".join(name.split())  # A line separator, as the other breaks, is a space.
    t = translations(locale)
    if is_blank(name):  # Nothing left, or only what shows as blank (a joiner, a Hangul filler).
        raise ValueError(t.gettext("Type the name customers will see."))
    if len(name) > MAX_DISPLAY_NAME:
        raise ValueError(t.gettext("Keep it to {limit} characters.").format(limit=MAX_DISPLAY_NAME))
    try:
        return check_display_name(name)
    except HelpdeskError as error:  # Nothing the lines above leave through; in English if so.
        raise ValueError(str(error)) from None


def typed_into(dialog: Dialog[Any]) -> Input | TextArea | None:
    """The text box beneath `dialog` that typing is for: the one with the focus, or a
    conversation's reply box when a part of it has the focus (its transcript hands typing on to
    the box). Not a transcript itself: the keys it leaves to the box's bindings (Enter) reached
    the bindings of the dialog, and saved the name. None on the queue, where typing opens a
    search."""
    focused = dialog.app.screen_stack[-2].focused
    if isinstance(focused, Input | TextArea):
        return focused
    for node in focused.ancestors if focused is not None else ():
        if isinstance(node, ConversationView):
            box = node.reply_input
            box.focus()  # There when the dialog closes, as typing on the transcript does.
            return box
    return None


class NameDialog(Dialog[str | None]):
    """Asks for the agent's display name (the first time they claim or write a note).

    It opens on a key an agent presses as they start a reply (Ctrl+L, then the words): those
    typed on went into the name box, and their Enter made the reply's first words the name
    customers see. Typing in a burst under way as it opens goes on to the box beneath instead
    (`hand_on_typed`); a name typed once it has been read is the dialog's."""

    BINDINGS = [Binding("escape", "cancel", N_("Cancel"))]

    def __init__(
        self, *, locale: Locale = DEFAULT_LOCALE, holding: Mapping[str, int] | None = None
    ) -> None:
        super().__init__()
        self.locale: Locale = locale
        self.holding = dict(holding or {})
        """Conversations claimed now, by the name they are claimed under: a name some console
        already works under is asked about before it is taken."""
        self._confirmed: str | None = None
        self._burst: float | None = get_time()
        """When the last key was handed on (at first, the dialog opening); None once a key is
        the dialog's: the burst is over."""
        self._handing_on = False
        """Whether a key of the burst has been handed on (only typing starts one)."""
        localize_bindings(self, locale)

    def compose(self) -> ComposeResult:
        t = translations(self.locale)
        with Vertical(id="name-dialog", classes="dialog"):
            yield Static(t.gettext("Your name, as customers will see it"), classes="section-title")
            yield Static(
                Text(
                    t.gettext(
                        "Shown when you join a conversation and above your replies. It is saved "
                        "in your settings file for next time (--agent NAME overrides it)."
                    )
                ),
                classes="dialog-text",
            )
            # Empty, not the OS login: an Enter took "root" as the name customers see.
            yield _NameInput(placeholder=t.gettext("e.g. Ana"), id="name-input")
            yield Static(id="name-error", classes="dialog-error")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#name-error").display = False
        if self._burst is not None and not self._handing_on:
            self._burst = get_time()  # Shown now: a moment to read it from here.

    def hand_on_typed(self, event: events.Event) -> bool:
        """Whether `event` is a key of a burst the agent was typing as the dialog opened, and
        was handed on to the field they typed it in (the reply box beneath): typing within
        `BURST_S` of the opening starts it, typing (and Enter, Backspace) within `BURST_S` of
        the key before goes on with it. Any other key, or a pause, ends it: the dialog takes
        the keys from then on."""
        if self._burst is None or not self.is_active:
            return False
        if not isinstance(event, events.Key | events.Paste):
            return False  # Not a key (a click): the burst goes on.
        field = typed_into(self)
        if field is None:
            self._burst = None  # Typed where nothing takes words (the queue): the name's.
            return False
        own = isinstance(event, events.Key) and event.key in self._bindings.key_to_bindings
        goes_on = typing(event) or (
            self._handing_on and isinstance(event, events.Key) and event.key in BURST_KEYS
        )
        if own or not goes_on or event.time - self._burst > BURST_S:
            self._burst = None
            return False
        self._burst, self._handing_on = max(self._burst, event.time), True
        field._forward_event(event)
        return True

    @on(Input.Submitted, "#name-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        message = self.query_one("#name-error", Static)
        try:
            name = check_name(event.value, locale=self.locale)
        except ValueError as error:
            message.update(Text(str(error)))
            message.display = True
            return
        # Two consoles under one name share its claims, each able to reply, resolve and hand
        # back as the other: said first, and taken on a second Enter (the same person, back).
        count = self.holding.get(name, 0)
        if count and self._confirmed != name:
            self._confirmed = name
            t = translations(self.locale)
            warning = t.ngettext(
                "{name} holds {count} conversation now: another console may be working under "
                "this name, and would share it. Press Enter again to use it anyway.",
                "{name} holds {count} conversations now: another console may be working under "
                "this name, and would share them. Press Enter again to use it anyway.",
                count,
            ).format(name=name, count=count)
            message.update(Text(warning))
            message.display = True
            return
        self.dismiss(name)

    def action_cancel(self) -> None:
        self.dismiss(None)


class _NameInput(PlainInput):
    """The name box: the keys of a burst typed for the box beneath go on (`handed_on`)."""

    def _forward_event(self, event: events.Event) -> None:
        if not handed_on(self, event):
            super()._forward_event(event)


class ClaimsOnQuit(Dialog[ClaimsAnswer | None]):
    """Before quitting with claims held: hand them back to the queue, keep them, or stay.

    With another console of the agent's still open (`others`), the claims are that console's
    work too (one agent's consoles share them): keeping is the first choice, handing back all an
    explicit one, and handing back only the ones this console took (`here`) a third when some,
    not all, are. Handing back by default told the customer of a conversation open in the other
    console that the agent had stepped away, and took it from under them.

    Ctrl+Q pressed by mistake mid-reply, the reply typed on ("thanks, have a nice day") answered
    it with its `h`, `a` or `k`: every claim handed back (each customer told the agent stepped
    away) or kept, and the app quit with the words lost. Typing in a burst under way as it opens
    (`BURST_S`, as the name dialog reckons one) cancels it now, and goes on to the field it was
    typed in (`hand_on_typed`); a letter pressed once it has been read is its button's key."""

    BINDINGS = [
        Binding("h", "hand_back", N_("Hand back")),
        Binding("a", "answer('hand-back')", N_("Hand back all")),
        Binding("k", "answer('keep')", N_("Keep")),
        Binding("escape,c", "answer(None)", N_("Cancel")),
    ]

    def __init__(
        self,
        count: int,
        *,
        locale: Locale = DEFAULT_LOCALE,
        others: int = 0,
        here: Sequence[int] = (),
    ) -> None:
        super().__init__()
        self.count = count
        self.locale: Locale = locale
        self.others = others
        """Other consoles of the agent's open now (0: none, the question as it always was)."""
        self.here = list(here)
        """The held claims this console took."""
        self._burst: float | None = get_time()
        """When the dialog opened, while a key typed now would be part of a burst under way;
        None once a key has reached it: the burst, if any, is over."""
        t = translations(locale)
        if others:
            # The footer names what each key does as its button does: a bare "this console's"
            # read as cut, and "all" for one claim said more than there was.
            localize_bindings(
                self,
                locale,
                hand_back=t.gettext("Hand back only {numbers}").format(numbers=self._numbers()),
                **{
                    "answer('hand-back')": t.ngettext(
                        "Hand it back", "Hand back all {count}", count
                    ).format(count=count)
                },
            )
        else:
            localize_bindings(self, locale)

    @property
    def first(self) -> ClaimsAnswer:
        """The first choice, the button with the focus and Ctrl+Q's again."""
        return "keep" if self.others else "hand-back"

    @property
    def _some_here(self) -> bool:
        """Handing back this console's claims alone is a choice of its own: some are, not all."""
        return 0 < len(self.here) < self.count

    def compose(self) -> ComposeResult:
        t = translations(self.locale)
        with Vertical(id="claims-dialog", classes="dialog"):
            yield Static(Text(self._question()), classes="dialog-text")
            with ButtonRow():
                if not self.others:
                    yield DialogButton(
                        t.gettext("Hand back (h, Ctrl+Q)"), variant="primary", id="hand-back"
                    )
                    yield DialogButton(t.gettext("Keep (k)"), id="keep")
                else:
                    yield DialogButton(t.gettext("Keep (k, Ctrl+Q)"), variant="primary", id="keep")
                    if self._some_here:
                        yield DialogButton(
                            t.gettext("Hand back only {numbers} (h)").format(
                                numbers=self._numbers()
                            ),
                            id="hand-back-here",
                        )
                    yield DialogButton(
                        t.ngettext("Hand it back (a)", "Hand back all {count} (a)", self.count)
                        .format(count=self.count),
                        id="hand-back",
                    )  # fmt: skip
                yield DialogButton(t.gettext("Cancel (Esc)"), id="cancel")
        yield Footer()

    def _numbers(self) -> str:
        return ", ".join(f"#{number}" for number in self.here)

    def _question(self) -> str:
        if not self.others:
            return hand_back_question(self.count, locale=self.locale)
        t = translations(self.locale)
        said = t.ngettext(
            "You hold 1 claimed conversation, and another of your consoles is still open: "
            "kept, it stays with that console. Handed back, its customer is told you stepped "
            "away.",
            "You hold {count} claimed conversations, and another of your consoles is still "
            "open: kept, they stay with that console. Handed back, each customer is told you "
            "stepped away.",
            self.count,
        ).format(count=self.count)
        if self._some_here:
            said += " " + t.gettext("This console took {numbers}.").format(numbers=self._numbers())
        return said

    def on_mount(self) -> None:
        self.query_one(f"#{self.first}", Button).focus()
        if self._burst is not None:
            self._burst = get_time()  # Shown now: a moment to read it from here.

    def hand_on_typed(self, event: events.Event) -> bool:
        """Whether `event` is typing within `BURST_S` of the dialog opening: the reply the agent
        was writing as Ctrl+Q asked. If so it cancels the dialog and goes on to the field it was
        typed in (`Dialog.hand_on_typed`), and the keys after it, the dialog gone, follow it
        there by themselves. The first key to reach the dialog ends the burst either way: a
        letter after a pause, or after a key of the dialog's own (Tab, an arrow), answers."""
        if self._burst is None or not isinstance(event, events.Key | events.Paste):
            return False  # Not a key (a click): a burst may still go on.
        opened, self._burst = self._burst, None
        if event.time - opened > BURST_S:
            return False
        if typing(event):
            return super().hand_on_typed(event)
        # Backspace mending a typo, Enter sending the reply: the burst's too, where a text box
        # takes them (on the queue, Enter at once is still the dialog's).
        key = isinstance(event, events.Key) and event.key in BURST_KEYS
        return key and typed_into(self) is not None and self.hand_on(event)

    def answer_typing(self) -> bool:
        self.dismiss(None)  # Stay: nothing handed back, no quit; the words go on to the field.
        return True

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "hand_back":  # h: every claim, or with another console open, this one's.
            return not self.others or self._some_here
        if action == "answer" and parameters == ("hand-back",):  # a: every claim, said so.
            return bool(self.others)
        return True

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        answer = event.button.id
        if answer in ("hand-back", "hand-back-here", "keep"):
            self.dismiss(answer)  # type: ignore[arg-type]
        else:
            self.dismiss(None)

    def action_hand_back(self) -> None:
        self.dismiss("hand-back-here" if self.others else "hand-back")

    def action_answer(self, answer: ClaimsAnswer | None) -> None:
        self.dismiss(answer)
