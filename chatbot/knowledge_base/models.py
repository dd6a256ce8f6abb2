"""The passage model. Ids double as file names, so they are restricted to safe slugs."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

# Valen reads a question and a passage within an 8,192-token context; 4,000 characters keeps a
# passage well inside it with room for the question.
MAX_TEXT_CHARS = 4000
MAX_TITLE_CHARS = 200
MAX_ID_CHARS = 64
_SLUG = re.compile(r"[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?")


def validate_passage_id(value: str) -> str:
    """Return `value` if it is a safe slug (a file name that cannot leave its folder)."""
    if not value:
        raise ValueError("id is empty")
    if len(value) > MAX_ID_CHARS:
        raise ValueError(f"id is longer than {MAX_ID_CHARS} characters")
    if not _SLUG.fullmatch(value) or ".." in value:
        raise ValueError(
            f"id {value!r} is not a safe slug (lowercase letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit)"
        )
    return value


PassageId = Annotated[str, AfterValidator(validate_passage_id)]


class Passage(BaseModel):
    """One help-center passage: the unit the bot retrieves, judges and answers from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: PassageId
    """Stable identifier, also the passage's file name."""
    text: str = Field(max_length=MAX_TEXT_CHARS)
    """What the bot shows the customer, and what Valen reads."""
    title: str = Field(default="", max_length=MAX_TITLE_CHARS)
    """Short human label shown as the answer's source."""
    tags: tuple[str, ...] = ()
    """Free-form labels for editors."""

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("text is empty")
        return value

    @property
    def source(self) -> str:
        """How the answer's source is named to a customer: the title, or the id without one."""
        return f"{self.title} ({self.id})" if self.title else self.id
