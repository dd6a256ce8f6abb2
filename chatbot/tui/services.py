"""What every screen and widget of the app works with, handed to them when they are built."""

from __future__ import annotations

from dataclasses import dataclass

from textual.signal import Signal

from chatbot.engine.engine import Engine
from chatbot.store import Clock, Store


@dataclass
class Services:
    """The store, the engine and the app-wide change signal, shared by all screens."""

    store: Store
    engine: Engine
    """Replaced as a whole when the knowledge base changes; read it at the moment of use."""
    clock: Clock
    agent: str
    """The name this app's agent claims and replies under."""
    changed: Signal[int]
    """Published with the store's version whenever anyone (this process or another) commits."""
    timings: bool = True
    """Show latencies; snapshot tests turn this off because latencies differ from run to run."""
    suggestions: tuple[str, ...] = ()
    """Questions with recorded answers, offered in replay mode (where nothing else is judged)."""
