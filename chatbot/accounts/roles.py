"""Roles and the areas they may open: plain enums with no pydantic, so that `helpdesk users`
can offer the roles as choices without loading the models (the CLI's --help stays fast)."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """What an account may open: agents the agent console, editors the knowledge-base editor,
    admins both."""

    AGENT = "agent"
    EDITOR = "editor"
    ADMIN = "admin"


class Area(StrEnum):
    """A part of the desk that needs signing in."""

    AGENT = "agent"
    EDITOR = "editor"


ALLOWED: dict[Role, frozenset[Area]] = {
    Role.AGENT: frozenset({Area.AGENT}),
    Role.EDITOR: frozenset({Area.EDITOR}),
    Role.ADMIN: frozenset({Area.AGENT, Area.EDITOR}),
}
