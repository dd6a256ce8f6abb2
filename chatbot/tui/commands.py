"""The command palette: whatever the widgets on the current screen offer, plus the app's own."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from textual.command import CommandPalette, DiscoveryHit, Hit, Hits, Provider
from textual.widget import Widget

from chatbot.i18n import N_, Locale, translations

PLACEHOLDER = N_("Search for commands…")
"""The palette's search box, Textual's words (it shows them in English whatever the screen's)."""


def command_palette(locale: Locale) -> CommandPalette:
    """The command palette as Textual opens it (its providers are the app's and the screen's),
    its search box in `locale`."""
    return CommandPalette(
        placeholder=translations(locale).gettext(PLACEHOLDER), id="--command-palette"
    )


@dataclass(frozen=True)
class PaletteCommand:
    """One entry in the command palette. `title` and `help` are fixed text, never user text."""

    title: str
    help: str
    run: Callable[[], object]


@runtime_checkable
class OffersCommands(Protocol):
    """A screen or widget that puts its main actions in the command palette."""

    def palette_commands(self) -> Iterable[PaletteCommand]: ...


class HelpDeskCommands(Provider):
    """Collects `palette_commands()` from the screen and every widget on it that offers some."""

    def _commands(self) -> Iterator[PaletteCommand]:
        screen = self.screen
        for node in (screen, *screen.query(Widget)):
            if isinstance(node, OffersCommands):
                yield from node.palette_commands()

    async def discover(self) -> Hits:
        for command in self._commands():
            yield DiscoveryHit(command.title, command.run, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = matcher.match(command.title)
            if score > 0:
                yield Hit(score, matcher.highlight(command.title), command.run, help=command.help)
