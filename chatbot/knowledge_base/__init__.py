"""The help-center passages: their model, validation, file storage and safe editing."""

from chatbot.knowledge_base.models import MAX_TEXT_CHARS, Passage, validate_passage_id
from chatbot.knowledge_base.storage import (
    KnowledgeBaseError,
    load_knowledge_base,
    load_passages_file,
    shipped_knowledge_base,
)
from chatbot.knowledge_base.store import (
    ConflictError,
    DuplicatePassageError,
    PassageNotFoundError,
    PassageStore,
    StoredPassage,
    Version,
)

__all__ = [
    "MAX_TEXT_CHARS",
    "ConflictError",
    "DuplicatePassageError",
    "KnowledgeBaseError",
    "Passage",
    "PassageNotFoundError",
    "PassageStore",
    "StoredPassage",
    "Version",
    "load_knowledge_base",
    "load_passages_file",
    "shipped_knowledge_base",
    "validate_passage_id",
]
