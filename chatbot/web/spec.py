"""What one browser session's app process is."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, unquote

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


def as_argument(text: str) -> str:
    """`text` (a display name, which its account's owner chose) for a session's command line,
    where nothing can take it for an option: percent-encoded, "-" too, so that it never starts
    with one. Given as the next argument, `-Bob` or `--editor` was read as an option and the
    console could not start; even as `--agent=--`, argparse drops a lone `--`. `from_argument`
    reads it back."""
    return quote(text, safe=" ").replace("-", "%2D")


def from_argument(argument: str) -> str:
    """The text `as_argument` wrote."""
    return unquote(argument, errors="replace")
