"""The team view: every agent's claims, live, to see who has what and open any of them."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from chatbot.desk.models import QueueItem
from chatbot.errors import HelpdeskError
from chatbot.i18n import N_, translations
from chatbot.tui.localize import localize_bindings
from chatbot.tui.rereader import Rereader
from chatbot.tui.screens.modal import Dialog
from chatbot.tui.services import Services
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.queue_list import NO_QUESTION, agent_error, one_line
from chatbot.tui.widgets.queue_list import status as claim_status

READING = N_("Reading the claims…")
"""Where the claims will be, until the first read: "Nobody holds a claim." said then was false
while agents held claims (for the whole deadline, while the database did not answer)."""


def claim_line(
    item: QueueItem, services: Services, seen: Mapping[str, datetime] | None = None
) -> Text:
    status = claim_status(item, services.clock(), locale=services.locale, seen=seen)
    question = one_line(item.question, 50) or translations(services.locale).gettext(NO_QUESTION)
    return Text.assemble((f"#{item.conversation_id}", "bold"), f"  {status} · {question}")


class TeamScreen(Dialog[int | None]):
    """Lists every claim, by agent; Enter opens one, Escape closes."""

    BINDINGS = [Binding("escape", "close", N_("Close"))]

    def __init__(self, services: Services) -> None:
        super().__init__()
        self.services = services
        localize_bindings(self, services.locale)
        self.claims: list[QueueItem] = []
        self.seen: dict[str, datetime] = {}
        """When each agent was last seen: a colleague gone a while shows as away."""
        self._current = False
        """Whether the dialog shows what the last read found (not before the first read, nor
        after a failed one, whose line stood after the desk answered again)."""
        self._reader = Rereader(self, self.reload, group="team-read")

    def compose(self) -> ComposeResult:
        with Vertical(id="team-dialog", classes="dialog -tall"):
            t = translations(self.services.locale)
            yield Static(
                t.gettext("Claims by agent (Enter opens, Escape closes)"), classes="section-title"
            )
            yield OptionList(id="team-claims")
            yield Static(Text(t.gettext(READING)), id="team-empty")
        yield Footer()

    def on_mount(self) -> None:
        self.services.changed.subscribe(self, self._changed)
        self._read_soon()
        # The queue's times tick; these stood at what they said when last read ("for 17s").
        self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        options = self.query_one("#team-claims", OptionList)
        for index, item in enumerate(self.claims):
            options.replace_option_prompt_at_index(
                index, claim_line(item, self.services, self.seen)
            )

    def _changed(self, _version: int) -> None:
        self._read_soon()

    def _read_soon(self) -> None:
        self._reader.soon()

    async def reload(self) -> None:
        try:
            claims = await self.services.desk.claims()
            seen = await self.services.desk.agents_seen()
        except HelpdeskError as error:
            # Said where the claims would be: "Nobody holds a claim" under a notice of the
            # driver's English was false (they could not be read).
            self._current = False
            empty = self.query_one("#team-empty", Static)
            empty.update(Text(agent_error(error, self.services.locale)))
            empty.display = not self.claims
            if self.claims:
                self.notify(agent_error(error, self.services.locale), severity="error")
            return
        # This console's own agent is here, whatever the clock says of its last tick.
        self.seen = {agent: at for agent, at in seen.items() if agent != self.services.agent}
        if claims == self.claims and self._current:
            return
        self.claims = claims
        self._current = True
        options = self.query_one("#team-claims", OptionList)
        highlighted = options.highlighted
        options.clear_options()
        options.add_options([Option(claim_line(item, self.services, self.seen)) for item in claims])
        if claims:
            options.highlighted = min(highlighted or 0, len(claims) - 1)
        empty = self.query_one("#team-empty", Static)
        empty.update(Text(translations(self.services.locale).gettext("Nobody holds a claim.")))
        empty.display = not claims
        options.display = bool(claims)
        options.focus()

    @on(OptionList.OptionSelected, "#team-claims")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.claims[event.option_index].conversation_id)

    def action_close(self) -> None:
        self.dismiss(None)
