"""A one-line field that shows what it holds: no control character, and every line of a paste."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Input

from chatbot.text import printable, strip_control

JOINERS = frozenset("\u200c\u200d")
"""The zero-width non-joiner and joiner: Python counts them unprintable, so Textual's boxes
dropped them as they were typed, and 👨‍👩‍👧 came out as three faces and Persian or Hindi words lost
the joins they are written with."""


def joined_lines(text: str) -> str:
    """Pasted text for a one-line field: its lines joined by single spaces, blank lines and the
    spaces around each line dropped, so a paragraph copied from an email reads as one. A paste
    that starts with a space keeps one, to stay apart from the word it follows ("abc" then
    " My\nline" was "abcMy line"); the line break a copied line ends with is dropped."""
    lines = text.splitlines()
    if len(lines) <= 1:
        return lines[0] if lines else ""
    joined = " ".join(stripped for line in lines if (stripped := line.strip()))
    return " " + joined if joined and text[0].isspace() else joined


async def own_key_in_turn(widget: Widget, event: events.Key) -> bool:
    """Run `event`'s key now if it is one of `widget`'s own bindings; whether it was.

    A binding runs once its key has passed every widget up to the app, while a character is
    put in the box as its key arrives: keys typed in a burst (a slow link, the browser) came
    out of order, and `helmt` Backspace `et` gave `helmtet`. Taken here, each key
    acts in the order it was typed.

    A binding whose action does not act (`SkipAction`, as Textual's does) leaves the key to go
    on, as Textual's own binding lookup does: an `Input`'s scroll bindings took Down and Up,
    which it cannot scroll by, and the Find screen's Down never reached its results."""
    for binding in widget._bindings.key_to_bindings.get(event.key, ()):
        if await widget.app.run_action(binding.action, widget):
            event.prevent_default()
            event.stop()
            return True
    return False


FOCUS_MOVES = {"app.focus_next": 1, "app.focus_previous": -1}
"""The screen's Tab and Shift+Tab: the actions `move_focus_in_turn` runs as their key arrives."""


def move_focus_in_turn(widget: Widget, event: events.Event) -> bool:
    """Move the focus now if `event` is a key the screen moves the focus by (Tab, Shift+Tab)
    and nothing nearer takes it; whether it did. For the box the app is handing the key to.

    The app hands each key to the widget focused as it takes the key, while the screen's Tab
    runs once its key has passed every widget up to the app: the keys typed behind Tab in a
    burst (a slow link, the browser) had been handed to the box it was leaving by then, and
    `burst-two` Tab `Second title` went whole into the editor's Id. Moved as the key is handed
    on, the focus is where the keys behind it go, as it is for slow typing."""
    if not isinstance(event, events.Key):
        return False
    screen = widget.screen
    moves = screen._bindings.key_to_bindings.get(event.key, ())
    if not any(binding.action in FOCUS_MOVES for binding in moves):
        return False  # Not the screen's Tab: the lookup below is for the few keys that are.
    # Textual's own lookup (`App._check_bindings`), from the box up: the first binding for the
    # key is the one that would run (a box that takes the key itself leaves it out of the chain).
    for node, bindings in screen._modal_binding_chain:
        for binding in bindings.key_to_bindings.get(event.key, ()):
            if binding.priority:  # The app has run those already.
                continue
            if node is not screen or binding.action not in FOCUS_MOVES:
                return False
            if FOCUS_MOVES[binding.action] > 0:
                screen.focus_next()
            else:
                screen.focus_previous()
            return True
    return False


class PlainInput(Input):
    """An `Input` for everything people type in the app (a question, a reply, a search, a title).

    - It drops control characters and escape sequences from whatever is typed, pasted or set.
      Textual draws a field's value as it is, so an ESC pasted into it reached the terminal (a
      customer's paste of `\\x1b[2J` cleared their screen). A field cannot spell the character
      out (its cursor counts characters), so it keeps none; colour codes copied from a terminal
      leave their words behind.
    - A paste keeps every line, joined by spaces. Textual's `Input` keeps only the first line of
      a paste and drops the rest without a word: a question written over three lines went out
      as its first.
    - Ctrl+J submits, as Enter does (and as readline takes it): an Enter typed before the app
      had the terminal (in the same breath as the command) reaches it as a line feed, Ctrl+J,
      and the words typed with it stayed in the box, unsent.
    - It shows a bidi override, embedding or isolate spelled out (`\\u202e`), as `printable` shows
      it everywhere else, and keeps it in its value: sent or saved as written. Drawn as it is, it
      reached the terminal, which took it for no column (the box's border moved) or, with bidi
      support, showed the rest of the line reversed. The cursor steps over it as one character."""

    BINDINGS = [Binding("ctrl+j", "submit", show=False)]

    def validate_value(self, value: str) -> str:
        return strip_control(value, one_line=True)

    def replace(self, text: str, start: int, end: int) -> None:
        # Cleaned here as well, so the cursor lands after what was really inserted.
        super().replace(strip_control(text, one_line=True), start, end)

    def append(self, text: str) -> None:
        """`text` added after what the box holds, the cursor after it: keys typed or text pasted
        on a part of the screen that takes none, and meant for this box."""
        self.cursor_position = len(self.value)
        self.insert_text_at_cursor(text)

    def _forward_event(self, event: events.Event) -> None:
        # How the app hands a key to the focused widget (`App.on_event`; Textual is pinned):
        # Tab and Shift+Tab move the focus before the keys typed behind them are handed on.
        if not move_focus_in_turn(self, event):
            super()._forward_event(event)

    async def _on_key(self, event: events.Key) -> None:
        if event.character in JOINERS:
            event.prevent_default()  # `Input`'s own handler would drop it.
            event.stop()
            self._put(event.character)
        else:
            await own_key_in_turn(self, event)

    def _on_paste(self, event: events.Paste) -> None:
        # Textual runs the handler of every class in the MRO: stop `Input`'s from pasting again.
        event.prevent_default()
        self.paste(event.text)
        event.stop()

    def paste(self, text: str) -> None:
        """`text` as pasted: its lines joined, in place of the selection or at the cursor."""
        if joined := joined_lines(text):
            self._put(joined)

    def _put(self, text: str) -> None:
        """`text` in place of the selection, or at the cursor when nothing is selected."""
        selection = self.selection
        if selection.is_empty:
            self.insert_text_at_cursor(text)
        else:
            self.replace(text, *selection)

    # Drawing spelled-out characters: Textual's `Input` counts a character as its own cells
    # (`_position_to_cell`, `_cell_offset_to_index`) and styles the cursor and selection by
    # character index, so the four below map each character to where its spelling is drawn
    # (Textual's version is pinned, and tests/tui/test_narrow_layout_and_bidi.py drives each).
    # A value with nothing to spell out takes Textual's own path.

    def _spelled(self) -> list[int] | None:
        """Where each character of the value starts in what is drawn, and where the last ends;
        None when the value is drawn as it is."""
        value = self.value
        if self.password or printable(value) == value:
            return None
        starts = [0]
        for char in value:
            starts.append(starts[-1] + len(printable(char)))
        return starts

    @property
    def _value(self) -> Text:
        if self._spelled() is None:
            return super()._value
        text = Text(printable(self.value), no_wrap=True, overflow="ignore", end="")
        return text if self.highlighter is None else self.highlighter(text)

    def _position_to_cell(self, position: int) -> int:
        if self._spelled() is None:
            return super()._position_to_cell(position)
        return cell_len(printable(self.value[:position]))

    def _cell_offset_to_index(self, offset: int) -> int:
        if self._spelled() is None:
            return super()._cell_offset_to_index(offset)
        offset += self.scroll_offset.x
        cell = 0
        for index, char in enumerate(self.value):
            width = cell_len(printable(char))
            if cell <= offset < cell + width:
                return index
            cell += width
        return len(self.value) if offset >= cell else 0

    def render_line(self, y: int) -> Strip:
        starts = self._spelled()
        if y != 0 or starts is None:
            return super().render_line(y)
        value = self.value
        result = self._value
        suggestion = self._suggestion
        show_suggestion = len(suggestion) > len(value) and self.has_focus
        if show_suggestion:
            style = self.get_component_rich_style("input--suggestion")
            result += Text(printable(suggestion[len(value) :]), style, end="")
        if self.has_focus:
            if not self.selection.is_empty:
                start, end = sorted(self.selection)
                style = self.get_component_rich_style("input--selection")
                result.stylize_before(style, starts[start], starts[end])
            if self._cursor_visible:
                cursor = self.cursor_position
                if not show_suggestion and self.cursor_at_end:
                    result.pad_right(1)
                # On a spelled-out character, the cursor covers all of its spelling.
                end = starts[cursor + 1] if cursor < len(value) else starts[cursor] + 1
                result.stylize(self.get_component_rich_style("input--cursor"), starts[cursor], end)
        console = self.app.console
        options = self.app.console_options.update_width(self.content_width)
        width = self.scrollable_content_region.width
        scroll_x = self.scroll_offset.x
        strip = Strip(list(console.render(result, options)))
        strip = strip.crop(scroll_x, scroll_x + width + 1).extend_cell_length(width + 1)
        return strip.apply_style(self.rich_style)
