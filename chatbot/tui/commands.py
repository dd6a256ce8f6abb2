"""The command palette: whatever the widgets on the current screen offer, plus the app's own."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from rich.align import Align
from rich.text import Text
from textual.command import CommandList, CommandPalette, DiscoveryHit, Hit, Hits, Provider
from textual.widget import Widget

from chatbot.i18n import N_, Locale, translations

PLACEHOLDER = N_("Search for commands…")
"""The palette's search box, Textual's words (it shows them in English whatever the screen's)."""
NO_MATCHES = N_("No matches found")
"""Under the search box when nothing matches what was typed: Textual's words, in English."""


class LocalizedPalette(CommandPalette):
    """Textual's command palette, saying "No matches found" in the screen's language. Textual
    writes that line in English with no setting for it (its placeholder has one): it adds it as a
    disabled option, then shows the list (`_list_visible`), and this puts its own words in."""

    def __init__(self, *, placeholder: str, no_matches: str, id: str | None = None) -> None:
        super().__init__(placeholder=placeholder, id=id)
        self.no_matches = no_matches

    def on_mount(self) -> None:
        self.watch(self, "_list_visible", self._say_no_matches, init=False)

    def _say_no_matches(self, visible: bool) -> None:
        commands = self.query_one(CommandList)
        if visible and commands.option_count == 1:
            option = commands.get_option_at_index(0)
            if option.id == self._NO_MATCHES:
                # Textual's own look: centred, not bold.
                prompt = Align.center(Text(self.no_matches, style="not bold"))
                commands.replace_option_prompt(self._NO_MATCHES, prompt)


def command_palette(locale: Locale) -> CommandPalette:
    """The command palette as Textual opens it (its providers are the app's and the screen's),
    its search box and its "No matches found" in `locale`."""
    t = translations(locale)
    return LocalizedPalette(
        placeholder=t.gettext(PLACEHOLDER),
        no_matches=t.gettext(NO_MATCHES),
        id="--command-palette",
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
