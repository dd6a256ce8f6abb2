"""The suggested questions follow the knowledge base: an edited passage no longer matches its
recorded answer, so the bot hands its question to a person, and the suggestion says so; put the
text back and the bot answers it again."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.config import Settings
from chatbot.knowledge_base.store import PassageStore
from tests.tui.conftest import Q1, Q2, Q3, SIZE, MakeApp, editor_settings
from tests.tui.helpers import wait_until
from tests.tui.suggestions_helpers import CHARGED_TWICE, edit, shown, started


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


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
