"""A row of buttons that wraps: dialogs end with one, and an answer's Helpful / Not helpful sit
in one."""

from __future__ import annotations

from fractions import Fraction

from textual import events
from textual.containers import Container
from textual.geometry import Size
from textual.widget import Widget


class ButtonRow(Container):
    """A dialog's buttons side by side, as many to a row as its width holds: the rest go on to
    the next row. One row cut the last button off in a narrow window (`Cancel (` at 60 columns,
    the quit dialog's), and Textual's layouts never wrap."""

    DEFAULT_CSS = """
    ButtonRow {
        layout: grid;
        grid-size: 1;
        grid-columns: auto;
        grid-rows: auto;
        grid-gutter: 0 1;
        height: auto;
    }
    ButtonRow > * {
        margin: 0;
    }
    """

    def on_resize(self, event: events.Resize) -> None:
        self.styles.grid_size_columns = self.columns_for(event.size.width)

    def on_mount(self) -> None:
        # Laid out in one column until the first resize says how wide the row is.
        self.styles.grid_size_columns = len(self.children) or 1

    def columns_for(self, width: int) -> int:
        """The most buttons to a row that fit in `width` cells (at least one)."""
        widths = [self._natural_width(child) for child in self.children if child.display]
        gap = self.styles.grid_gutter_vertical
        for count in range(len(widths), 1, -1):
            columns = [max(widths[column::count]) for column in range(count)]
            if sum(columns) + gap * (count - 1) <= width:
                return count
        return 1

    def _natural_width(self, widget: Widget) -> int:
        """The cells `widget` takes when nothing squeezes it, as the grid measures an auto
        column: its content, padding and border, within its min and max width."""
        viewport = self.app.size
        container = Size(max(self.size.width, 1), max(self.size.height, 1))
        width = widget.get_content_width(container, viewport) + widget.styles.gutter.width
        styles = widget.styles
        if styles.min_width is not None:
            width = max(width, int(styles.min_width.resolve(container, viewport, Fraction(width))))
        if styles.max_width is not None:
            width = min(width, int(styles.max_width.resolve(container, viewport, Fraction(width))))
        return width
