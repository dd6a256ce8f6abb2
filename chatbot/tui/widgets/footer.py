"""The key footer, rebuilt once per burst of binding changes and only when its keys change."""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer as TextualFooter

PALETTE_CELLS = 12
"""What the command palette's key takes at the right: `▏^p palette`."""


def _keys(screen: Screen[object]) -> tuple[object, ...]:
    """Everything about the screen's bindings that the footer shows."""
    return tuple(
        (key, active.binding, active.enabled, active.tooltip)
        for key, active in screen.active_bindings.items()
    )


class Footer(TextualFooter):
    """Textual's footer rebuilds all its keys on every binding change. Opening a conversation
    makes three or more changes in a row (focus leaves the queue, lands on the transcript, the
    view's actions change), and each rebuild cost ~15 ms. Here the changes that arrive before the
    next refresh make one rebuild, and none if the keys are the ones already shown (focus moved
    between widgets with the same keys)."""

    def __init__(self) -> None:
        # Compact: one space between keys instead of two fits the agent console's keys and the
        # app's in 80 columns.
        super().__init__(compact=True)

    _rebuild_pending = False
    _asked = False
    """Textual's footer shows no keys until the first binding change; then `_shown` is kept."""
    _shown: tuple[object, ...] | None = None

    @property
    def is_current(self) -> bool:
        """Whether the keys shown are the screen's keys now (no rebuild waiting to happen)."""
        return (
            not self._rebuild_pending
            and self._shown is not None
            and self.is_attached
            and self._shown == _keys(self.screen)
        )

    def bindings_changed(self, screen: Screen[object]) -> None:
        if not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_after_refresh(self._rebuild, screen)

    def _rebuild(self, screen: Screen[object]) -> None:
        self._rebuild_pending = False
        if self._shown is not None and _keys(screen) == self._shown:
            return
        self._asked = True
        super().bindings_changed(screen)

    def compose(self) -> ComposeResult:
        # Taken as the keys are composed, so `_shown` is what the footer shows.
        if self._asked and self.is_attached:
            self._shown = _keys(self.screen)
            # The palette's key gives way when the screen's own keys need its room: it is the
            # one key the palette itself lists, and Ctrl+P works all the same.
            self.set_reactive(TextualFooter.show_command_palette, self._palette_fits())
        yield from super().compose()

    def _palette_fits(self) -> bool:
        width = self.size.width or self.app.size.width
        keys = [
            cell_len(self.app.get_key_display(active.binding))
            + 1
            + cell_len(active.binding.description)
            for active in self.screen.active_bindings.values()
            if active.binding.show and active.binding.action != "command_palette"
        ]
        return sum(keys) + len(keys) + PALETTE_CELLS <= width

    def on_resize(self, event: events.Resize) -> None:
        if self._asked and self.is_attached and self._palette_fits() != self.show_command_palette:
            self._shown = None
            self.bindings_changed(self.screen)
