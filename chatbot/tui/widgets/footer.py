"""The key footer, rebuilt once per burst of binding changes."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer as TextualFooter


class Footer(TextualFooter):
    """Textual's footer rebuilds all its keys on every binding change. Opening a conversation
    makes three or more changes in a row (focus leaves the queue, lands on the transcript, the
    view's actions change), and each rebuild cost ~15 ms; here changes that arrive before the
    next refresh make one rebuild, which reads the bindings as they are by then."""

    _rebuild_pending = False

    def bindings_changed(self, screen: Screen[object]) -> None:
        if not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_after_refresh(self._rebuild, screen)

    def _rebuild(self, screen: Screen[object]) -> None:
        self._rebuild_pending = False
        super().bindings_changed(screen)
