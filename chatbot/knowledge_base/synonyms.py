"""Synonyms an editor maintains beside the passages, in `synonyms.toml`:

    senior = "pensioner, retiree, elderly"
    bike = ["bicycle", "cycle"]
    "return station" = "dock"

Each entry is one group of interchangeable words or phrases, the key and its values alike: a
question with any of them also searches for the others. Retrieval expands questions with them;
the passages and what Valen reads stay as written.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path

from chatbot.knowledge_base.storage import KnowledgeBaseError

SYNONYMS_FILE = "synonyms.toml"
MAX_WORD_CHARS = 100

SynonymGroup = tuple[str, ...]


def parse_synonyms(data: Mapping[str, object], *, where: str) -> tuple[SynonymGroup, ...]:
    """Groups from a parsed mapping of word to synonyms (a comma-separated string or a list of
    strings), refusing anything else with one line naming `where` and the entry."""
    groups: list[SynonymGroup] = []
    for key, value in data.items():
        label = f"{where}: {key!r}"
        if isinstance(value, str):
            others = value.split(",")
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            others = list(value)
        else:
            raise KnowledgeBaseError(
                f"{label}: expected synonyms as a comma-separated string or a list of strings"
            )
        words = [w.strip() for w in (key, *others)]
        if not all(words):
            raise KnowledgeBaseError(f"{label}: an empty word (two commas, or a blank name)")
        long = next((w for w in words if len(w) > MAX_WORD_CHARS), None)
        if long is not None:
            raise KnowledgeBaseError(
                f"{label}: a synonym is longer than {MAX_WORD_CHARS} characters"
            )
        if len(words) < 2:
            raise KnowledgeBaseError(f"{label}: no synonyms given")
        groups.append(tuple(dict.fromkeys(words)))
    return tuple(groups)


def load_synonyms_file(path: Path) -> tuple[SynonymGroup, ...]:
    """The synonym groups of a `synonyms.toml` file; every way it can fail is one line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KnowledgeBaseError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise KnowledgeBaseError(f"{path}: cannot read: {error}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise KnowledgeBaseError(f"{path}: malformed TOML: {error}") from None
    return parse_synonyms(data, where=str(path))


def load_synonyms(knowledge_base: Path) -> tuple[SynonymGroup, ...]:
    """The synonyms of a knowledge-base directory; none when it has no `synonyms.toml`."""
    path = knowledge_base / SYNONYMS_FILE
    if not knowledge_base.is_dir() or not path.exists():
        return ()
    return load_synonyms_file(path)
