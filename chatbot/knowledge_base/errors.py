"""The knowledge base's error, the shipped folder and the directory check: light enough for the
settings and an app's first screen, which need no passage model yet."""

from __future__ import annotations

import stat
from pathlib import Path

from chatbot.errors import HelpdeskError
from chatbot.resources import shipped


class KnowledgeBaseError(HelpdeskError):
    """A knowledge-base file or passage that cannot be used."""


class KnowledgeBaseUnreachable(KnowledgeBaseError):
    """The knowledge base's server cannot be reached just now (a connection failed, ended, or
    went unanswered): nothing in the knowledge base is wrong, and it passes once the server is
    back. Its message keeps the detail (never a password), for a log."""


def shipped_knowledge_base() -> Path:
    """The bike-share help center that ships with the package (read-only: seed copies from it)."""
    return shipped("knowledge_base")


def require_directory(directory: Path) -> None:
    try:
        info = directory.stat()
    except FileNotFoundError:
        raise KnowledgeBaseError(f"{directory}: knowledge base not found") from None
    except OSError as error:
        raise KnowledgeBaseError(f"{directory}: cannot open: {error.strerror or error}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise KnowledgeBaseError(f"{directory}: knowledge base must be a directory of JSON files")
