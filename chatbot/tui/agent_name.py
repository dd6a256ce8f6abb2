"""An agent's first move that needs their name (claim, note, take the next) asks for it first."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual.widget import Widget

from chatbot.tui.services import Services


def named(
    widget: Widget,
    services: Services,
    then: Callable[[], Awaitable[object]],
    *,
    before: Callable[[], object] | None = None,
    cancelled: Callable[[], object] | None = None,
) -> bool:
    """Whether the agent has a name; if not, ask for it and run `then` once it is known (or
    `cancelled` if none was given). `before` runs as the question is asked: what the move needs
    in place while it is, as the note's box for a note typed on at once. The question is a
    dialog, so it is asked from a worker of `widget`."""
    if services.agent is not None:
        return True
    ask = getattr(widget.app, "ask_agent_name", None)
    if ask is None:
        return False
    if before is not None:
        before()

    async def named_then() -> None:
        if await ask():
            await then()
        elif cancelled is not None:
            cancelled()

    widget.run_worker(named_then(), group="agent-name", exclusive=True)
    return False
