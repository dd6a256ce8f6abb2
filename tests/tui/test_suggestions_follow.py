"""The suggested questions follow the knowledge base: an edited passage no longer matches its
recorded answer, so the bot hands its question to a person, and the suggestion says so; put the
text back and the bot answers it again."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from chatbot.config import Settings
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.suggestion_list import SuggestedQuestion
from tests.tui.conftest import Q1, Q2, Q3, SIZE, MakeApp, editor_settings
from tests.tui.helpers import screen_text, wait_until

CHARGED_TWICE = "card-charged-twice"
"""The passage that answers Q1."""


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


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


async def test_a_passage_edited_before_the_start_sends_its_question_to_a_person(
    make_app: MakeApp, kb_copy: Path
) -> None:
    edit(kb_copy, "Write to support about double charges.")
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        # The recordings alone said the bot answers Q1: its passage has changed since.
        assert shown(app) == {Q1: False, Q2: True, Q3: False}


async def test_an_edit_meanwhile_is_followed_both_ways(make_app: MakeApp, kb_copy: Path) -> None:
    original = PassageStore(kb_copy).get(CHARGED_TWICE).passage.text
    app = make_app("all")
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        assert shown(app) == {Q1: True, Q2: True, Q3: False}
        edit(kb_copy, "Write to support about double charges.")
        await wait_until(pilot, lambda: shown(app)[Q1] is False)
        assert shown(app) == {Q1: False, Q2: True, Q3: False}
        edit(kb_copy, original)  # Its recorded answer matches again.
        await wait_until(pilot, lambda: shown(app)[Q1] is True)
