"""The passage model. Ids double as file names, so they are restricted to safe slugs."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from chatbot.text import first_control

# Valen reads a question and a passage within an 8,192-token context; 4,000 characters keeps a
# passage well inside it with room for the question.
MAX_TEXT_CHARS = 4000
MAX_TITLE_CHARS = 200
MAX_ID_CHARS = 64
_SLUG_CHARS = re.compile(r"[a-z0-9._-]")
_SLUG_ENDS = re.compile(r"[a-z0-9]")
# Device names Windows reserves in every folder, whatever follows the first dot (`nul.txt.json`
# opens the null device there): a knowledge base exported or synced to Windows must still open.
WINDOWS_RESERVED = frozenset(
    ["con", "prn", "aux", "nul"] + [f"com{n}" for n in range(10)] + [f"lpt{n}" for n in range(10)]
)


def validate_passage_id(value: str) -> str:
    """Return `value` if it is a safe slug (a file name that cannot leave its folder): lowercase
    letters, digits, '-', '_' and '.', starting and ending with a letter or digit, with no '..'.
    A refusal names the rule broken: one list of rules, said of `a..b`, named none it broke."""
    if not value:
        raise ValueError("id is empty")
    if len(value) > MAX_ID_CHARS:
        raise ValueError(f"id has {len(value):,} characters; the limit is {MAX_ID_CHARS}")
    bad = next((char for char in value if not _SLUG_CHARS.fullmatch(char)), None)
    if bad is not None:
        raise ValueError(
            f"id {value!r} is not a safe slug: {bad!r} is not allowed (only lowercase letters, "
            "digits, '-', '_' and '.')"
        )
    if not (_SLUG_ENDS.fullmatch(value[0]) and _SLUG_ENDS.fullmatch(value[-1])):
        raise ValueError(
            f"id {value!r} is not a safe slug: it must start and end with a lowercase letter or "
            "a digit"
        )
    if ".." in value:
        raise ValueError(
            f"id {value!r} is not a safe slug: two dots in a row ('..') are not allowed"
        )
    if value.split(".")[0] in WINDOWS_RESERVED:
        raise ValueError(f"id {value!r} is a device name on Windows; choose another")
    return value


PassageId = Annotated[str, AfterValidator(validate_passage_id)]

_LINE_ENDING = re.compile(r"\r\n?")


def unix_newlines(value: str) -> str:
    """`value` with Windows (`\\r\\n`) and old Mac (a lone `\\r`) line endings as `\\n`: a text
    file saved on Windows, or an import holding one, says what the same text typed here says."""
    return _LINE_ENDING.sub("\n", value)


def _no_control(value: str, *, field: str, one_line: bool) -> str:
    # A passage is shown to customers and agents in terminals: an ESC in it could retitle or clear
    # their screen. Refusing it here means no such passage is ever saved or loaded.
    bad = first_control(value, one_line=one_line)
    if bad is not None:
        breaks = ("\\x0a", "\\x09")
        kind = "a line break or tab" if bad in breaks else f"a control character ({bad})"
        raise ValueError(f"{field} contains {kind}")
    return value


class Passage(BaseModel):
    """One help-center passage: the unit the bot retrieves, judges and answers from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: PassageId
    """Stable identifier, also the passage's file name."""
    text: str = Field(max_length=MAX_TEXT_CHARS)
    """What the bot shows the customer, and what Valen reads. Surrounding whitespace is dropped."""
    title: str = Field(default="", max_length=MAX_TITLE_CHARS)
    """Short human label shown as the answer's source: one line."""
    tags: tuple[str, ...] = ()
    """Free-form labels for editors, each one line."""

    # Every way in (`kb add --text-file`, an import, a file on disk, the editor) passes here, so
    # line endings are made one before the checks, which refuse a carriage return.
    @field_validator("text", mode="before")
    @classmethod
    def _strip_text(cls, value: object) -> object:
        return unix_newlines(value).strip() if isinstance(value, str) else value

    @field_validator("title", mode="before")
    @classmethod
    def _strip_title(cls, value: object) -> object:
        return unix_newlines(value).strip() if isinstance(value, str) else value

    @field_validator("text")
    @classmethod
    def _text_is_clean(cls, value: str) -> str:
        if not value:
            raise ValueError("text is empty")
        return _no_control(value, field="text", one_line=False)

    @field_validator("title")
    @classmethod
    def _title_is_clean(cls, value: str) -> str:
        return _no_control(value, field="title", one_line=True)

    @field_validator("tags")
    @classmethod
    def _tags_are_clean(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for tag in value:
            if not tag.strip():
                raise ValueError("a tag is empty")
            _no_control(tag, field="a tag", one_line=True)
        return value

    @property
    def source(self) -> str:
        """How the answer's source is named to a customer: the title, or the id without one."""
        return f"{self.title} ({self.id})" if self.title else self.id
