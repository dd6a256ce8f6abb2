"""A conversation's state as a plain enum with no pydantic, so that `helpdesk conversations`
can offer the states as choices without loading the models (the CLI's --help stays fast)."""

from __future__ import annotations

from enum import StrEnum


class State(StrEnum):
    """Who is answering a conversation."""

    BOT = "bot"
    """The bot answers each customer message."""
    WAITING = "waiting"
    """Escalated: in the handoff queue until an agent claims it; the bot stays silent."""
    CLAIMED = "claimed"
    """An agent owns it; the bot stays silent."""
    RESOLVED = "resolved"
    """Done; the customer writing again hands it back to the bot (a thank-you leaves it done)."""
