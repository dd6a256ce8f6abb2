"""An account, its role and the rules its fields follow."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from chatbot.accounts.roles import ALLOWED as ALLOWED
from chatbot.accounts.roles import Area as Area
from chatbot.accounts.roles import Role as Role
from chatbot.errors import HelpdeskError
from chatbot.text import BLANK_LETTERS, first_control, is_blank, shows_nothing

NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9._@-]{0,63}")
"""Sign-in names: lower case (so `Ana` and `ana` are one account), no spaces, at most 64."""
MAX_DISPLAY_NAME = 64
"""One limit for every display name: an account's, `--agent`, `[agent] name` and the console's
name dialog. 64, not less: accounts were made with names up to 64 long, and the web hands an
account's name to the console as the agent's; the screens cut a long one where it is shown."""
JOINERS = frozenset("\u200c\u200d")
"""The zero-width non-joiner and joiner, which Persian and Indic names and emoji sequences (👩‍💻)
need."""
BIDI_MARKS = frozenset("\u200e\u200f\u061c")
"""The left-to-right, right-to-left and Arabic letter marks, which right-to-left names need to show
the digits and brackets beside them in order. `printable` lets them through too: they only steer
the neutral characters next to them, never reorder the rest of a line as an override does."""
KEPT_FORMATTING = JOINERS | BIDI_MARKS
"""The only invisible formatting characters a display name may hold. Comparing names drops them
(`display_name_key`), so `Ana\\u200f` is still `Ana`."""
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
    incarnation: str = ""
    """Made at random when the account is added and never reused: an account removed and added
    again under its name has another, so a cookie signed for the earlier one (whose session epoch
    the new one starts over from) is refused. Every store gives one; "" is only an account made
    by hand (a test's), which no cookie signs in to."""

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
    """The display name as kept (spaces at its ends dropped, a run of spaces inside made one), or
    a one-line error: the one rule for what customers see as an agent's name, wherever it comes
    from (an account, `--agent`, `[agent] name`, the console's name dialog)."""
    cleaned = display_name.strip()
    if not cleaned:
        raise HelpdeskError("display name is empty")
    if is_blank(cleaned):  # Only joiners, variation selectors, Hangul fillers: shown as blank.
        raise HelpdeskError("display name shows nothing: it needs a visible character")
    if (bad := first_control(cleaned, one_line=True)) is not None:
        raise HelpdeskError(f"display name holds a control character ({bad})")
    if (hidden := first_unshown(cleaned)) is not None:
        raise HelpdeskError(f"display name holds an invisible or formatting character ({hidden})")
    cleaned = " ".join(cleaned.split())
    if len(cleaned) > MAX_DISPLAY_NAME:
        raise HelpdeskError(f"display name is longer than {MAX_DISPLAY_NAME} characters")
    return cleaned


def unshown(char: str) -> bool:
    """Whether a name may not hold `char` because it is not shown as written: a formatting
    character (category Cf: a zero-width space, a bidi override, a soft hyphen; not the joiners),
    a line or paragraph separator, or half of a surrogate pair (undecodable bytes in argv). The
    joiners and the bidi marks are shown as written (`KEPT_FORMATTING`)."""
    return unicodedata.category(char) in ("Cs", "Zl", "Zp") or _hidden_formatting(char)


def _hidden_formatting(char: str) -> bool:
    """A formatting character (category Cf) other than those a name keeps."""
    return unicodedata.category(char) == "Cf" and char not in KEPT_FORMATTING


def drop_invisible(text: str) -> str:
    """`text` without the formatting characters `unshown` refuses (a zero-width space, a
    byte-order mark, a bidi override), which show nothing: what the console's name dialog drops
    from a name, and what a name saved by its older version held (`Bob\\u200b`). Control
    characters, separators and undecodable bytes stay, for `check_display_name` to refuse."""
    return "".join(char for char in text if not _hidden_formatting(char))


def first_unshown(text: str) -> str | None:
    """The first character of `text` that `unshown` refuses, named (`U+200B ZERO WIDTH SPACE`),
    or None."""
    for char in text:
        if unshown(char):
            name = unicodedata.name(char, "")
            return f"U+{ord(char):04X} {name}".rstrip()
    return None


def display_name_key(display_name: str) -> str:
    """What two display names are compared by, so that names alike on screen are one name:
    compatibility forms folded (NFKC: fullwidth `Ｂｏｂ` is `Bob`), what shows nothing dropped
    (formatting characters and variation selectors: with a zero-width space or U+FE0F inside,
    `Bob` shows as `Bob`), letters that show as a blank (a Hangul filler) made spaces, case
    folded, and a run of spaces one space."""
    text = unicodedata.normalize("NFKC", display_name)
    text = "".join(char for char in text if not shows_nothing(char))
    text = unicodedata.normalize("NFKC", text.casefold())
    text = "".join(" " if char in BLANK_LETTERS else char for char in text)
    return " ".join(text.split())


def check_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise HelpdeskError(f"password is shorter than {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise HelpdeskError(f"password is longer than {MAX_PASSWORD} characters")
    if "\x00" in password:
        raise HelpdeskError("password holds a NUL character")
    return password
