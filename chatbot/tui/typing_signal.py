"""Telling the other side of a conversation that someone is typing, without a write per key."""

from __future__ import annotations

import logging
from datetime import datetime

from chatbot.desk.models import Author
from chatbot.errors import HelpdeskError
from chatbot.tui.services import Services

log = logging.getLogger(__name__)

TYPING_EVERY_S = 3.0
"""While a person types, the desk hears it at most this often. The signal lasts `TYPING_S` (6 s)
in the desk, so it holds across the gaps and lapses soon after the last key."""


class TypingSignal:
    """One side's typing in the conversations one widget shows, sent only while an agent holds
    the conversation (the widget decides). Best effort: a failure to say so is logged and
    forgotten, never shown to the person typing."""

    def __init__(self, services: Services, author: Author) -> None:
        self.services = services
        self.author = author
        self._sent: tuple[int, datetime] | None = None
        """The conversation last told, and when."""

    def due(self, conversation_id: int) -> bool:
        """Whether a key typed now should tell the desk (a worker then calls `typed`)."""
        if self._sent is None or self._sent[0] != conversation_id:
            return True
        return (self.services.clock() - self._sent[1]).total_seconds() >= TYPING_EVERY_S

    async def typed(self, conversation_id: int) -> None:
        self._sent = (conversation_id, self.services.clock())
        await self._say(conversation_id, typing=True)

    async def stopped(self, conversation_id: int) -> None:
        """After a send: the other side stops showing it at once, not when it lapses."""
        if self._sent is None or self._sent[0] != conversation_id:
            return
        self._sent = None
        await self._say(conversation_id, typing=False)

    async def _say(self, conversation_id: int, *, typing: bool) -> None:
        try:
            await self.services.desk.set_typing(conversation_id, author=self.author, typing=typing)
        except HelpdeskError as error:
            log.info("could not say that %s is typing: %s", self.author.value, error)
