"""What one browser session's app process is."""

from __future__ import annotations

from dataclasses import dataclass

from chatbot.accounts.models import Account, Area
from chatbot.i18n import DEFAULT_LOCALE, Locale


@dataclass(frozen=True)
class SessionSpec:
    """Fixed by the server from a verified cookie; nothing the page sends can change it."""

    area: Area | None
    """None: the customer chat."""
    conversation_id: int | None = None
    account: Account | None = None
    locale: Locale = DEFAULT_LOCALE
    """The browser's `Accept-Language`, as the page around the app: a customer's chat starts in
    it until their first message decides; an agent's or editor's screens are in it unless the
    settings name a language (`ui.locale`)."""
