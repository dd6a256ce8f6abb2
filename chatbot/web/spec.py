"""What one browser session's app process is."""

from __future__ import annotations

from dataclasses import dataclass

from chatbot.accounts.models import Account, Area


@dataclass(frozen=True)
class SessionSpec:
    """Fixed by the server from a verified cookie; nothing the page sends can change it."""

    area: Area | None
    """None: the customer chat."""
    conversation_id: int | None = None
    account: Account | None = None
