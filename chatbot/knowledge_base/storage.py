"""Reading passages from disk, refusing bad data with one line that names file, passage and problem.

A knowledge base is a directory with one pretty-printed JSON file per passage, named after its id
(`card-charged-twice.json`), so a change to one passage is a one-file diff. Files and folders whose
names start with a dot (history, temporary files) are not passages.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from chatbot.errors import HelpdeskError
from chatbot.knowledge_base.models import Passage


class KnowledgeBaseError(HelpdeskError):
    """A knowledge-base file or passage that cannot be used."""


def shipped_knowledge_base() -> Path:
    """The bike-share help center that ships beside the package."""
    return Path(__file__).resolve().parents[2] / "knowledge_base"


def describe_validation_error(error: ValidationError) -> str:
    """Condense pydantic's multi-line report to the first problem, on one line."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def parse_passage(raw: Any, *, where: str) -> Passage:
    """Validate one passage object, naming `where` (file and position) in any error."""
    if not isinstance(raw, dict):
        raise KnowledgeBaseError(f"{where}: a passage must be a JSON object")
    label = raw.get("id")
    if isinstance(label, str) and label:
        where = f"{where}: passage {label!r}"
    try:
        return Passage.model_validate(raw)
    except ValidationError as error:
        raise KnowledgeBaseError(f"{where}: {describe_validation_error(error)}") from None


def read_json(path: Path) -> Any:
    """Load a JSON file, turning every way it can fail into one `KnowledgeBaseError` line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KnowledgeBaseError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise KnowledgeBaseError(f"{path}: is a directory, expected a JSON file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise KnowledgeBaseError(f"{path}: cannot read: {error}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise KnowledgeBaseError(
            f"{path}: malformed JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None


def check_unique(passages: Iterable[Passage], *, where: str) -> None:
    """Refuse two passages with one id."""
    seen: set[str] = set()
    for passage in passages:
        if passage.id in seen:
            raise KnowledgeBaseError(f"{where}: passage {passage.id!r}: duplicate id")
        seen.add(passage.id)


def passage_files(directory: Path) -> list[Path]:
    """The passage files of a knowledge-base directory, in a stable order."""
    return sorted(p for p in directory.glob("*.json") if not p.name.startswith("."))


def load_knowledge_base(directory: Path) -> list[Passage]:
    """Load and validate every passage of a knowledge-base directory."""
    if not directory.exists():
        raise KnowledgeBaseError(f"{directory}: knowledge base not found")
    if not directory.is_dir():
        raise KnowledgeBaseError(f"{directory}: knowledge base must be a directory of JSON files")
    passages = []
    for path in passage_files(directory):
        passage = parse_passage(read_json(path), where=str(path))
        if passage.id != path.stem:
            raise KnowledgeBaseError(
                f"{path}: passage {passage.id!r}: id does not match the file name {path.stem!r}"
            )
        passages.append(passage)
    return passages


def load_passages_file(path: Path) -> list[Passage]:
    """Load `{"passages": [...]}` (the cookbook's data file or this project's export)."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("passages"), list):
        raise KnowledgeBaseError(f"{path}: expected an object with a 'passages' list")
    passages = [
        parse_passage(raw, where=f"{path}: passages[{index}]")
        for index, raw in enumerate(data["passages"])
    ]
    check_unique(passages, where=str(path))
    return passages


def export_passages(passages: Sequence[Passage]) -> dict[str, Any]:
    """The project's export shape: the cookbook's `passages` list plus titles and tags."""
    return {"passages": [p.model_dump(mode="json") for p in passages]}
