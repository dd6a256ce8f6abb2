"""A sparkline that draws every value whole, however narrow the screen: the analytics' days and
hours. Textual's `Sparkline` spreads its values over its whole width, which a fixed width wider
than the screen cut off at the right (today's bar, at 60 columns), and a width between one and
two columns a value drew some values twice as wide as others."""

from __future__ import annotations

from textual.app import RenderResult
from textual.renderables.sparkline import Sparkline as SparklineRenderable
from textual.widgets import Sparkline

LEAST = 8
"""The fewest columns drawn (a single value, or a few, is not a dot)."""


def drawn_width(values: int, room: int) -> int:
    """The columns `values` values take in `room`: two each where they fit, one each where two
    do not, else all of `room` (values then share columns, the newest in the last)."""
    if room <= 0:
        return 0
    for each in (2, 1):
        if values * each <= room:
            return max(min(LEAST, room), values * each)
    return room


class FittedSparkline(Sparkline):
    """`Sparkline` drawn from the left in `drawn_width` columns of its width: give it the room
    (`width: 1fr`, a `max-width`) rather than a width of its own."""

    DEFAULT_CSS = """
    FittedSparkline {
        width: 1fr;
    }
    """

    def render(self) -> RenderResult:
        # Textual's own `render`, drawn in `drawn_width` columns instead of the whole width.
        data = self.data or []
        _, base = self.background_colors
        min_color = base + (
            self.get_component_styles("sparkline--min-color").color
            if self.min_color is None
            else self.min_color
        )
        max_color = base + (
            self.get_component_styles("sparkline--max-color").color
            if self.max_color is None
            else self.max_color
        )
        return SparklineRenderable(
            data,
            width=drawn_width(len(data), self.size.width),
            height=self.size.height,
            min_color=min_color.rich_color,
            max_color=max_color.rich_color,
            summary_function=self.summary_function,
        )
