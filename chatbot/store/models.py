"""What the store hands out: plain immutable models, never database rows."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from chatbot.engine.models import Decision, Reason


class State(StrEnum):
    """Who is answering a conversation."""

    BOT = "bot"
    """The bot answers each customer message."""
    WAITING = "waiting"
    """Escalated: in the handoff queue until an agent claims it; the bot stays silent."""
    CLAIMED = "claimed"
    """An agent owns it; the bot stays silent."""
    RESOLVED = "resolved"
    """Done; the customer writing again hands it back to the bot."""


class Author(StrEnum):
    """Who wrote a message."""

    CUSTOMER = "customer"
    BOT = "bot"
    AGENT = "agent"
    SYSTEM = "system"
    """Notices about the conversation itself (escalated, claimed, resolved, handed back)."""


class Feedback(StrEnum):
    """The customer's verdict on one bot answer."""

    HELPFUL = "helpful"
    NOT_HELPFUL = "not-helpful"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Conversation(_Frozen):
    """One customer's conversation and where it stands in the queue."""

    id: int
    state: State
    created_at: datetime
    updated_at: datetime
    agent: str | None = None
    """The agent who claimed it (kept after a resolve, cleared on hand back)."""
    reason: Reason | None = None
    """Why it was last escalated."""
    top_probability: float | None = None
    """The best probability of the decision behind the last escalation, if any."""
    waiting_since: datetime | None = None
    """When it last entered the queue."""


class ChatMessage(_Frozen):
    """One line of a conversation's transcript."""

    id: int
    conversation_id: int
    author: Author
    text: str
    created_at: datetime
    agent: str | None = None
    """The agent's name, for agent messages."""
    passage_id: str | None = None
    """The knowledge-base passage this message quotes (bot answers, passages sent by an agent)."""
    passage_title: str | None = None
    decision_id: int | None = None
    """The decision that produced a bot answer."""
    feedback: Feedback | None = None

    @property
    def source(self) -> str | None:
        """How the quoted passage is named to a customer: title and id, or the id alone."""
        if self.passage_id is None:
            return None
        return (
            f"{self.passage_title} ({self.passage_id})" if self.passage_title else self.passage_id
        )


class StoredDecision(_Frozen):
    """The engine's decision on one customer message, as it was made."""

    id: int
    conversation_id: int
    message_id: int
    created_at: datetime
    decision: Decision


class QueueItem(_Frozen):
    """A conversation waiting for, or owned by, a person, as the queue panel lists it."""

    conversation_id: int
    state: State
    waiting_since: datetime
    first_question: str
    reason: Reason | None
    top_probability: float | None
    agent: str | None


class ContentGap(_Frozen):
    """An escalated question: something the knowledge base could not answer well enough."""

    id: int
    conversation_id: int
    question: str
    reason: Reason
    top_probability: float | None
    created_at: datetime
    agent_reply: str | None
    """The first thing an agent wrote in the conversation after the escalation, if anything."""
    handled: bool
    passage_id: str | None
    """The passage written from this gap, once handled."""


class ClaimResult(_Frozen):
    """The outcome of a claim attempt: exactly one of two racing agents gets `won=True`."""

    won: bool
    conversation: Conversation
