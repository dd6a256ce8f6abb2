"""Messages that more than one widget posts or handles. Widget-specific ones live in the widget."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class StoreWritten(Message):
    """A widget changed the store; the app polls at once instead of within half a second."""
