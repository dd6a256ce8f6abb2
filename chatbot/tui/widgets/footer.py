"""The key footer, rebuilt once per burst of binding changes and only when its keys change."""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey

PALETTE_MARGIN = 2
"""Cells the command palette's key takes at the right besides its label: a blank before it and
its border, `▏`."""
GIVE_WAY_FIRST = ("feedback('helpful')", "feedback('not-helpful')")
"""Keys left out together first when the screen's keys do not fit (after the palette's): Helpful
and Not helpful, whose buttons stay on the answer (the chat panel's `FEEDBACK_ACTIONS`, not
imported: the footer comes with the first screen, the chat panel after it)."""
ALWAYS = "quit"
"""A key never left out for want of room; the screen's way back (`BACK_KEY`) is the other."""
BACK_KEY = "escape"
"""The key whose action is never left out for want of room either: a screen's way back (Back,
Close, Cancel). The editor's 60-column footer dropped `esc Back` and kept greyed Save and Delete,
so a keyboard user could not see how to leave."""
CLOSED_NOT_QUIT = "CLOSED_NOT_QUIT"
"""A screen whose class sets this true is ended in a browser by closing its page: there the
footer offers no Quit (a customer's chat, where Quit sat next to "Talk to a person" and ended
the chat on one tap). The key itself still works, and a terminal's footer offers it."""


def left_by_closing(screen: Screen[object]) -> bool:
    """Whether `screen` is left by closing its browser page (`CLOSED_NOT_QUIT`), not by Quit."""
    return screen.app.is_web and bool(getattr(screen, CLOSED_NOT_QUIT, False))


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
    _left_out: frozenset[str] = frozenset()
    """The actions whose keys are left out, for want of room."""

    @property
    def is_current(self) -> bool:
        """Whether the keys shown are the screen's keys now, as many as fit the footer's width
        now (no rebuild waiting to happen)."""
        return (
            not self._rebuild_pending
            and self._shown is not None
            and self.is_attached
            and self._shown == _keys(self.screen)
            and self._fit() == (self._left_out, self.show_command_palette)
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
        # Textual's footer draws nothing while the app is blurred. A browser session starts
        # blurred (its driver says so) and the page's focus may come before that: then the
        # footer stayed empty until a key was pressed. Blurred, it shows the screen's keys.
        self._bindings_ready = True
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self.recompose)

    def compose(self) -> ComposeResult:
        # Taken as the keys are composed, so `_shown` is what the footer shows.
        if self._asked and self.is_attached:
            self._shown = _keys(self.screen)
            self._left_out, palette = self._fit()
            self.set_reactive(TextualFooter.show_command_palette, palette)
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                if widget.action in self._left_out:
                    continue
                # No tooltips on keys: one comes up where the pointer rests, so over whatever
                # lies just above the footer. Clicking "^n Note" left "Write a note only agents
                # see" over the note box it had opened, which looked empty. The label says what
                # a key does; the keys panel (Ctrl+P, "Keys") describes each.
                widget.tooltip = None
            yield widget

    def _fit(self, width: int | None = None) -> tuple[frozenset[str], bool]:
        """The actions whose keys to leave out so that every key shown is whole, and whether the
        palette's key fits too. Measured from the labels as shown (in the screen's language, a
        Chinese character taking two cells): the palette's key gives way first (it is the one
        key the palette itself lists, and Ctrl+P works all the same), then Helpful and Not
        helpful, then greyed keys (which do nothing now) from the right, then the other keys
        from the right (the app's, then the screen's; the focused part's come first), never
        Quit nor the way back (Escape's key). Keys left out work all the same. `width` is the
        footer's own unless given (a test asks what another width would show)."""
        width = width or self.size.width or self.app.size.width
        never = self._never_shown()
        cells: dict[str, int] = {}
        greyed: set[str] = set()
        kept = {ALWAYS}
        palette = 0
        for key, active in self.screen.active_bindings.items():
            binding = active.binding
            if binding.action == "command_palette":
                palette = PALETTE_MARGIN + self._cells(binding)
            elif binding.show and binding.action not in never:
                # Textual's footer shows one key per action, the first bound.
                if binding.action not in cells:
                    cells[binding.action] = self._cells(binding)
                    if not active.enabled:
                        greyed.add(binding.action)
                if key == BACK_KEY:
                    kept.add(binding.action)

        def needed(actions: list[str]) -> int:
            # One blank between keys (the compact footer's margin).
            return sum(cells[action] for action in actions) + len(actions) - 1

        shown = list(cells)
        if needed(shown) + palette <= width:
            return never, True
        # Helpful and Not helpful go together: one without the other would look like a choice.
        order = [[action for action in GIVE_WAY_FIRST if action in cells]]
        rest = [action for action in reversed(shown) if action not in GIVE_WAY_FIRST]
        order += [[action] for action in rest if action in greyed]
        order += [[action] for action in rest if action not in greyed]
        for actions in order:
            if needed(shown) <= width:
                break
            shown = [action for action in shown if action in kept or action not in actions]
        return frozenset(cells) - frozenset(shown) | never, False

    def _never_shown(self) -> frozenset[str]:
        """The actions whose keys this screen's footer never shows, room or not."""
        return frozenset({"quit"}) if left_by_closing(self.screen) else frozenset()

    def _cells(self, binding: Binding) -> int:
        """The cells a key takes in the compact footer: `^t Talk to a person`."""
        key = cell_len(self.app.get_key_display(binding))
        return key + 1 + cell_len(binding.description) if binding.description else key

    def on_mount(self) -> None:
        self.watch(self.app, "app_focus", self._app_focused, init=False)

    def _app_focused(self, focused: bool) -> None:
        # Focused again, the focused widget's keys come back: by the focus event, and also by a
        # key press, which focuses the app with no such event.
        if focused and self.is_attached and not self.is_current:
            self.bindings_changed(self.screen)

    def on_resize(self, event: events.Resize) -> None:
        if not (self._asked and self.is_attached):
            return
        if self._fit() != (self._left_out, self.show_command_palette):
            self._shown = None
            self.bindings_changed(self.screen)
