"""The help-center passages: their model, validation and file storage."""

from chatbot.knowledge_base.models import MAX_TEXT_CHARS, Passage, validate_passage_id
from chatbot.knowledge_base.storage import (
    KnowledgeBaseError,
    load_knowledge_base,
    load_passages_file,
    shipped_knowledge_base,
)

__all__ = [
    "MAX_TEXT_CHARS",
    "KnowledgeBaseError",
    "Passage",
    "load_knowledge_base",
    "load_passages_file",
    "shipped_knowledge_base",
    "validate_passage_id",
]
