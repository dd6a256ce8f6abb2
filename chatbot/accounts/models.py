"""An account, its role and the rules its fields follow."""

from __future__ import annotations

import re
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from chatbot.accounts.roles import ALLOWED as ALLOWED
from chatbot.accounts.roles import Area as Area
from chatbot.accounts.roles import Role as Role
from chatbot.errors import HelpdeskError
from chatbot.text import first_control

NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9._@-]{0,63}")
"""Sign-in names: lower case (so `Ana` and `ana` are one account), no spaces, at most 64."""
MAX_DISPLAY_NAME = 64
MIN_PASSWORD = 8
MAX_PASSWORD = 1024
"""Longer is no safer, and a megabyte-long password would only make each hash slower."""


class Account(BaseModel):
    """One person's account, without its password hash."""

    model_config = ConfigDict(frozen=True)

    name: str
    display_name: str
    """What customers see when this person replies; never the OS user."""
    role: Role
    session_epoch: int
    """Bumped whenever the password or role changes: every session signed before is void."""
    created_at: datetime

    def may_open(self, area: Area) -> bool:
        return area in ALLOWED[self.role]


def check_name(name: str) -> str:
    """The account name as stored (lower case), or a one-line error."""
    folded = name.strip().lower()
    if not NAME_PATTERN.fullmatch(folded):
        raise HelpdeskError(
            f"account name {name!r} is not allowed: use 1-64 letters, digits, '.', '_', '@' or "
            "'-', starting with a letter or digit"
        )
    return folded


def check_display_name(display_name: str) -> str:
    cleaned = display_name.strip()
    if not cleaned:
        raise HelpdeskError("display name is empty")
    if len(cleaned) > MAX_DISPLAY_NAME:
        raise HelpdeskError(f"display name is longer than {MAX_DISPLAY_NAME} characters")
    if (bad := first_control(cleaned, one_line=True)) is not None:
        raise HelpdeskError(f"display name holds a control character ({bad})")
    return cleaned


def check_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise HelpdeskError(f"password is shorter than {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise HelpdeskError(f"password is longer than {MAX_PASSWORD} characters")
    if "\x00" in password:
        raise HelpdeskError("password holds a NUL character")
    return password
