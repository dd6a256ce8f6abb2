"""The help-center passages: their model, validation, file storage and safe editing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chatbot.lazy import lazy_exports

# Names are imported from their modules when first used (PEP 562): the settings and an app's
# first screen import a light submodule (the seed, a directory check) without the passage model
# and the store.
if TYPE_CHECKING:
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

_HOME = {
    "MAX_TEXT_CHARS": "chatbot.knowledge_base.models",
    "Passage": "chatbot.knowledge_base.models",
    "validate_passage_id": "chatbot.knowledge_base.models",
    "KnowledgeBaseError": "chatbot.knowledge_base.storage",
    "load_knowledge_base": "chatbot.knowledge_base.storage",
    "load_passages_file": "chatbot.knowledge_base.storage",
    "shipped_knowledge_base": "chatbot.knowledge_base.storage",
    "ConflictError": "chatbot.knowledge_base.store",
    "DuplicatePassageError": "chatbot.knowledge_base.store",
    "PassageNotFoundError": "chatbot.knowledge_base.store",
    "PassageStore": "chatbot.knowledge_base.store",
    "StoredPassage": "chatbot.knowledge_base.store",
    "Version": "chatbot.knowledge_base.store",
}

__getattr__ = lazy_exports(__name__, _HOME)
