"""The chat's suggested questions, and another process changing the passage that answers
the first of them."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from chatbot.knowledge_base.store import PassageStore
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.suggestion_list import SuggestedQuestion
from tests.tui.helpers import screen_text, wait_until

CHARGED_TWICE = "card-charged-twice"
"""The passage that answers Q1."""


def shown(app: HelpDeskApp) -> dict[str, bool]:
    """Each suggested question on screen, and whether the bot answers it; the screen says "a
    person will reply" after each of the others."""
    rows = app.screen.query(SuggestedQuestion)
    marks = screen_text(app).count("(a person will reply)")
    assert marks == sum(not row.suggestion.answered for row in rows), screen_text(app)
    return {row.suggestion.question: row.suggestion.answered for row in rows}


def edit(kb_copy: Path, text: str) -> None:
    """Another process saves the passage with `text`."""
    store = PassageStore(kb_copy)
    current = store.get(CHARGED_TWICE)
    store.save(current.passage.model_copy(update={"text": text}), based_on=current.revision)


async def started(app: HelpDeskApp, pilot: Pilot[None]) -> None:
    await app.services.live.wait_ready()
    await wait_until(pilot, lambda: not app.workers)
