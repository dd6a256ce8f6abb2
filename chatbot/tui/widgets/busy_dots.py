"""Textual's pulsing dots, kept dots when animations are off."""

from __future__ import annotations

from rich.text import Text
from textual.app import RenderResult
from textual.widgets import LoadingIndicator


class BusyDots(LoadingIndicator):
    """A `LoadingIndicator` that draws still dots, not its "Loading...", when animations are
    off (`TEXTUAL_ANIMATIONS=none`, which people set to calm their screen): cut to a narrow
    place it read "LoadinThe bot is looking…", and in English beside Chinese."""

    def render(self) -> RenderResult:
        if self.app.animation_level == "none":
            return Text("● ● ●")
        return super().render()
