"""A session that may not edit the knowledge base follows it all the same (a browser
customer's or agent's, `create_app(..., editor=False)`). Only editing sessions followed it: an
open customer page kept its suggestions' "(a person will reply)" marks as they were when it
opened, and an agent's Ctrl+O put a passage's old text in the reply box after `helpdesk kb edit`
changed it. Editing rights stay as they were."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from chatbot.config import Settings, load_settings
from chatbot.desk.service import DeskService
from chatbot.knowledge_base.postgres import PostgresPassageStore
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.passage_picker import PassagePicker
from tests.conftest import ROOT, SHIPPED_CACHE
from tests.kb.backends import pg_url
from tests.tui.conftest import Q1, Q2, Q3, SIZE, MakeApp, editor_settings
from tests.tui.desk_helpers import asked_for_a_person, claim
from tests.tui.helpers import wait_until
from tests.tui.postgres_helpers import _listening, kb_url
from tests.tui.suggestions_helpers import CHARGED_TWICE, edit, shown, started

__all__ = ["kb_url", "pg_url"]

THEIRS = "Write to support about double charges."
FOLLOW_S = 10.0
"""Ample for a poll a second and a rebuild, on a busy machine."""


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


def passage_text(app: HelpDeskApp, passage_id: str) -> str:
    """The passage's text in the app's engine of this moment."""
    return next(p.text for p in app.services.engine.passages if p.id == passage_id)


async def pick(pilot: Pilot[None], app: HelpDeskApp, passage_id: str) -> str:
    """Ctrl+O, pick `passage_id` from the list, and return what lands in the reply box."""
    await pilot.press("ctrl+o")
    await wait_until(pilot, lambda: isinstance(app.screen, PassagePicker))
    picker = app.screen
    assert isinstance(picker, PassagePicker)
    options = picker.query_one("#passages", OptionList)
    options.focus()
    options.highlighted = next(
        index for index, item in enumerate(picker.items) if item.passage.id == passage_id
    )
    await pilot.press("enter")
    await wait_until(pilot, lambda: not isinstance(app.screen, PassagePicker))
    return app.screen.query_one("#reply", Input).value


async def test_a_customers_chat_that_cannot_edit_follows_the_suggestions_marks(
    make_app: MakeApp, kb_copy: Path
) -> None:
    original = PassageStore(kb_copy).get(CHARGED_TWICE).passage.text
    app = make_app("chat", editor=False, fixed_conversation=True)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        assert not app.check_action("edit_knowledge_base", ())  # Still no editor.
        assert shown(app) == {Q1: True, Q2: True, Q3: False}
        edit(kb_copy, THEIRS)
        await wait_until(pilot, lambda: shown(app)[Q1] is False, timeout=FOLLOW_S)
        assert shown(app) == {Q1: False, Q2: True, Q3: False}
        edit(kb_copy, original)  # Its recorded answer matches again.
        await wait_until(pilot, lambda: shown(app)[Q1] is True, timeout=FOLLOW_S)


async def test_an_agents_passage_picker_that_cannot_edit_gives_the_new_text(
    make_app: MakeApp, kb_copy: Path, other: DeskService
) -> None:
    app = make_app("agent", bot=False, editor=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        assert not app.check_action("edit_knowledge_base", ())
        await claim(pilot, other, asked_for_a_person(other))
        edit(kb_copy, THEIRS)  # `helpdesk kb edit`, or an editor elsewhere.
        await wait_until(
            pilot, lambda: passage_text(app, CHARGED_TWICE) == THEIRS, timeout=FOLLOW_S
        )
        assert await pick(pilot, app, CHARGED_TWICE) == THEIRS


async def test_a_session_that_cannot_edit_tells_no_one_of_a_broken_file(
    make_app: MakeApp, kb_copy: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A customer cannot mend a passage file: the last good engine goes on, and the screen says
    nothing of it (the bots say it in their log); an editor's session still says it."""
    app = make_app("chat", bot=False, editor=False)
    with caplog.at_level(logging.INFO, logger="chatbot.tui.kb_index"):
        async with app.run_test(size=SIZE) as pilot:
            await started(app, pilot)
            # Renamed in, as an editor program saves: the folder's stamp changes.
            broken = kb_copy / "broken.tmp"
            broken.write_text("{broken", encoding="utf-8")
            broken.replace(kb_copy / f"{CHARGED_TWICE}.json")
            await wait_until(pilot, lambda: bool(caplog.records), timeout=FOLLOW_S)
            assert CHARGED_TWICE in caplog.records[0].getMessage()
            assert not app._notifications


@pytest.fixture
def pg_settings(db_path: Path, kb_url: str) -> Settings:
    return load_settings(
        store={"db": db_path},
        knowledge_base={"path": kb_url},
        valen={"cache": SHIPPED_CACHE, "replay": "on"},
    )


async def test_on_postgresql_a_session_that_cannot_edit_follows_without_listening(
    pg_settings: Settings, kb_url: str
) -> None:
    """Each listening session holds a PostgreSQL connection of its own (`LISTEN`): a browser
    server's customers and agents compare the stamp each second on the store's connection
    instead. The change still arrives, by that poll."""
    from chatbot.tui import create_app

    app = create_app(pg_settings, mode="agent", agent="ana", bot=False, editor=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        edited = subprocess.run(
            [sys.executable, "-m", "chatbot", "kb", "edit", "helmet", "--text", "Theirs.",
             "--kb", kb_url],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert edited.returncode == 0, edited.stderr
        await wait_until(pilot, lambda: passage_text(app, "helmet") == "Theirs.", timeout=FOLLOW_S)
        assert not _listening(kb_url)
    with PostgresPassageStore.open(kb_url) as store:
        assert store.get("helmet").passage.text == "Theirs."
