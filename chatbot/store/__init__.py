"""Conversations, messages, decisions, the handoff queue and claims. Never imports Textual."""

from chatbot.store.models import (
    Author,
    ChatMessage,
    ClaimResult,
    ContentGap,
    Conversation,
    Feedback,
    QueueItem,
    State,
    StoredDecision,
)
from chatbot.store.store import (
    ASKED_NOTICE,
    ESCALATED_NOTICE,
    Clock,
    ConflictError,
    ConversationNotFound,
    Store,
    StoreError,
    utc_now,
)

__all__ = [
    "ASKED_NOTICE",
    "ESCALATED_NOTICE",
    "Author",
    "ChatMessage",
    "ClaimResult",
    "Clock",
    "ConflictError",
    "ContentGap",
    "Conversation",
    "ConversationNotFound",
    "Feedback",
    "QueueItem",
    "State",
    "Store",
    "StoreError",
    "StoredDecision",
    "utc_now",
]
