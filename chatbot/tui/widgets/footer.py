"""The key footer, rebuilt once per burst of binding changes and only when its keys change."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer as TextualFooter


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

    _rebuild_pending = False
    _asked = False
    """Textual's footer shows no keys until the first binding change; then `_shown` is kept."""
    _shown: tuple[object, ...] | None = None

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
        yield from super().compose()
