"""Finding a conversation by what was said in it (or its number), to open it again: resolved ones
can then be reopened to follow up."""

from __future__ import annotations

import re

from rich.console import Group
from rich.padding import Padding
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from chatbot.desk.aio import unreachable
from chatbot.desk.models import SearchHit, State
from chatbot.errors import HelpdeskError
from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.notices import note_heading
from chatbot.text import number_pattern, printable, searched_number
from chatbot.tui.localize import localize_bindings
from chatbot.tui.screens.modal import Dialog
from chatbot.tui.services import Services
from chatbot.tui.state_words import state_word
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.plain_input import PlainInput
from chatbot.tui.widgets.queue_list import agent_error, one_line

FOUND_CELLS = 110
"""How much of the message found a result shows: about two lines of the dialog."""
LEAD_CHARS = 20
"""Characters shown before a match that lies further into its message than twice this."""
DEBOUNCE_S = 0.15
"""Searching waits for a pause in typing, not every key."""
RETRY_S = 1.0
"""How soon a search the database could not answer is tried again, while its words stay: a server
back from an outage sends no change notice, and the dialog said it could not be reached, over
screens that had recovered, until the agent typed or closed it."""
SEARCHING = N_("Searching…")
"""Said while a search waits on the database: one waiting on a slow or unreachable server (its
timeout can be long) showed nothing new, and looked like a search that found nothing."""


def hit_parts(
    hit: SearchHit, *, query: str = "", locale: Locale = DEFAULT_LOCALE
) -> tuple[Text, Text]:
    """A hit as the results list shows it: the conversation's line (number, state, time), and
    the words found, from a little before the first place they match `query` (marked)."""
    t = translations(locale)
    state = state_word(hit.state, locale=locale)  # In the agent's words, as the header says it.
    if hit.agent and hit.state is not State.BOT:
        state = t.gettext("{state} by {agent}").format(state=state, agent=printable(hit.agent))
    when = hit.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")  # Local, as elsewhere.
    heading = Text.assemble((f"#{hit.conversation_id}", "bold"), f"  {state} · {when}")
    flat = " ".join(printable(hit.text).split())
    wanted = " ".join(printable(query).split())
    matched: re.Pattern[str] | None
    if (number := searched_number(wanted)) is not None:  # As the desk searches it.
        matched = number_pattern(number)
    else:
        matched = re.compile(re.escape(wanted), re.IGNORECASE) if wanted else None
    at = match.start() if matched and (match := matched.search(flat)) else -1
    if at > LEAD_CHARS * 2:
        # A match far into a long message was cut off the end, and the hit said nothing of why
        # it was found: shown from a little before it.
        flat = "…" + flat[at - LEAD_CHARS :].lstrip()
    found = Text(one_line(flat, FOUND_CELLS) or t.gettext("(no message)"))
    if hit.note_by is not None:  # Said as the transcript heads it, in the agent's language.
        found = Text.assemble(f"{note_heading(printable(hit.note_by), locale=locale)}: ", found)
    if matched is not None:
        found.highlight_regex(matched, "reverse")
    return heading, found


def hit_line(hit: SearchHit, *, query: str = "", locale: Locale = DEFAULT_LOCALE) -> Group:
    """The words found on lines of their own, indented under the conversation's (a wrapped
    second line too): after the state and time they wrapped under them and were cut at 40
    cells, in a dialog with room for far more."""
    heading, found = hit_parts(hit, query=query, locale=locale)
    return Group(heading, Padding(found, (0, 0, 0, 2)))


class FindScreen(Dialog[int | None]):
    """A search box over every conversation's messages, newest first; Enter opens one."""

    # A small terminal (60x20) gave the results two rows, the margins of a large one around
    # them: each hit showed its number and one line of its words. There the dialog takes the
    # screen, and drops its margins (see app.tcss).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (80, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (24, "-high")]

    BINDINGS = [
        Binding("escape", "close", N_("Close")),
        Binding("down", "to_results", N_("Results"), show=False),
    ]

    def __init__(self, services: Services, *, text: str = "") -> None:
        super().__init__()
        self.services = services
        localize_bindings(self, services.locale)
        self.text = text
        self._early: list[tuple[str, str | None]] | None = []
        """Keys typed on the queue after the one that opened this search, before its box was in
        the screen: typed into it, in order, by `on_mount` (None from then on). Each is a
        character, or an editing key (its character None)."""
        self.hits: list[SearchHit] = []
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="find-dialog", classes="dialog -tall"):
            t = translations(self.services.locale)
            yield Static(t.gettext("Find a conversation: words from it, or its number"),
                         classes="section-title")  # fmt: skip
            yield PlainInput(
                value=self.text, placeholder=t.gettext("e.g. helmet, or #12"), id="find-input"
            )
            yield OptionList(id="find-results")
            yield Static(id="find-status", classes="dialog-text")
        yield Footer()

    def add_typed(self, character: str) -> None:
        """A key typed on the queue after the one that opened this search: it joins the words,
        in turn with the editing keys typed around it (see `edit_typed`)."""
        if self._early is not None:  # The box is not in the screen yet.
            self._early.append(("", character))
        else:
            self.query_one("#find-input", PlainInput).append(character)

    async def edit_typed(self, key: str) -> None:
        """An editing key (Backspace, Ctrl+U, …) typed on the queue after the letters that
        opened this search: it acts on the words in the order it was typed. Left to its binding,
        it ran once it had passed every widget up to the app, after the letters typed behind it:
        a Backspace typed between letters took out a later one."""
        if self._early is not None:
            self._early.append((key, None))
        else:
            await self._type(self.query_one("#find-input", PlainInput), key, None)

    async def _type(self, field: PlainInput, key: str, character: str | None) -> None:
        """A character put after the words, or the box's own binding for an editing key run."""
        if character is not None:
            field.append(character)
            return
        for binding in field._bindings.key_to_bindings.get(key, ()):
            await field.run_action(binding.action)
            break

    async def on_mount(self) -> None:
        field = self.query_one("#find-input", PlainInput)
        field.value = self.text
        field.focus()
        field.cursor_position = len(field.value)
        early, self._early = self._early or [], None
        for key, character in early:  # The keys that came while the box was being made.
            await self._type(field, key, character)
        self.call_later(self.search)

    @on(Input.Changed, "#find-input")
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE_S, self.search)

    async def search(self, *, again: bool = False) -> None:
        """Search for the words in the box; `again`: a retry of a search the database could not
        answer, whose line stays until the database does (not "Searching…" at every try)."""
        text = self.query_one("#find-input", Input).value
        locale = self.services.locale
        t = translations(locale)
        status = self.query_one("#find-status", Static)
        if not again:
            status.update(Text(t.gettext(SEARCHING)))
        try:
            hits = await self.services.desk.search(text, limit=50)
        except HelpdeskError as error:
            if text != self.query_one("#find-input", Input).value:
                return  # Typing went on meanwhile: its own search says how it went.
            # The results of other words go too: Enter opened one of them, as if found for these.
            self._show([], text)
            status.update(Text(agent_error(error, locale)))
            if unreachable(error):
                # Tried again until it answers, as the screens behind recover by themselves;
                # typing replaces the retry with the new words' own search (`_typed`).
                if self._timer is not None:
                    self._timer.stop()
                self._timer = self.set_timer(RETRY_S, self._search_again)
            return
        if text != self.query_one("#find-input", Input).value:
            return  # Typing went on meanwhile: its own search follows.
        self._show(hits, text)
        if not hits:
            said = t.gettext("Nothing found.")
        else:
            if len(hits) < 50:
                found = t.gettext("{count} found").format(count=len(hits))
            else:
                found = t.gettext("the 50 most recent shown")
            said = t.gettext("{found}. Enter opens; ↓ to choose.").format(found=found)
        status.update(Text(said))

    async def _search_again(self) -> None:
        await self.search(again=True)

    def _show(self, hits: list[SearchHit], query: str) -> None:
        self.hits = hits
        results = self.query_one("#find-results", OptionList)
        results.clear_options()
        locale = self.services.locale
        results.add_options([Option(hit_line(hit, query=query, locale=locale)) for hit in hits])
        if hits:
            results.highlighted = 0

    @on(Input.Submitted, "#find-input")
    def _open_first(self, event: Input.Submitted) -> None:
        event.stop()
        results = self.query_one("#find-results", OptionList)
        if self.hits:
            self.dismiss(self.hits[results.highlighted or 0].conversation_id)

    @on(OptionList.OptionSelected, "#find-results")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.hits[event.option_index].conversation_id)

    def action_to_results(self) -> None:
        if self.hits:
            self.query_one("#find-results", OptionList).focus()

    def action_close(self) -> None:
        self.dismiss(None)
