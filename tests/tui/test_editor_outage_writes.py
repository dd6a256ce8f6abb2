"""The editor while its knowledge base in PostgreSQL cannot be reached, and after.

A tester found: Ctrl+S in an outage said the driver's error under the text and as a notification
("postgresql://postgres@…/qa_eve_1: cannot connect to the knowledge base: connection failed: …
FATAL: database "qa_eve_1" is not currently accepting connections"), and once the database was
allowed again that line stayed until the next save, while the chat and the console said the desk
was back. The outage here: the database refuses connections (`ALLOW_CONNECTIONS false`) and every
one it has is ended; the server itself is shared, and never stopped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from psycopg import sql
from textual.pilot import Pilot
from textual.widgets import Static, TextArea

from chatbot.config import Settings, load_settings
from chatbot.knowledge_base.postgres import PostgresPassageStore
from chatbot.tui.screens.editor import Confirm, EditorScreen
from chatbot.tui.widgets.synonyms_panel import SynonymsPanel
from tests.conftest import SHIPPED_CACHE
from tests.kb.backends import admin_url, pg_url
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.helpers import wait_until
from tests.tui.test_editor import open_editor, open_passage, problem, type_into
from tests.tui.test_editor_postgres import kb_url  # The shipped passages, imported there.

__all__ = ["kb_url", "pg_url"]

AWAY = {
    "en": "Not saved: the knowledge base cannot be reached. Your changes stay here: press Ctrl+S "
    "again in a moment.",
    "zh": "未保存：无法连接知识库。您的修改会保留在这里：请稍后再按 Ctrl+S。",
}
NOT_DONE = {
    "en": "Not done: the knowledge base cannot be reached. Try again in a moment.",
    "zh": "未完成：无法连接知识库。请稍后再试。",
}
NOT_DONE_BACK = {
    "en": "The knowledge base can be reached again, but that was not done: try it again now.",
    "zh": "知识库已恢复连接，但刚才的操作未完成：请现在重试。",
}
BACK = {
    "en": "The knowledge base can be reached again, but your changes are not saved yet: press "
    "Ctrl+S to save them.",
    "zh": "知识库已恢复连接，但您的修改尚未保存：请按 Ctrl+S 保存。",
}
MINE = "Helmets are lent free at every station."


@pytest.fixture(params=["en", "zh"])
def locale(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def settings(db_path: Path, kb_url: str, locale: str) -> Settings:
    # The desk stays in SQLite: only the knowledge base goes away.
    return load_settings(
        store={"db": db_path},
        knowledge_base={"path": kb_url},
        valen={"cache": SHIPPED_CACHE, "replay": "on"},
        ui={"locale": locale},
    )


class Outage:
    """Makes the knowledge base's database refuse connections, and allows them again."""

    def __init__(self, url: str) -> None:
        self.name = urlsplit(url).path.lstrip("/")
        self._admin = psycopg.connect(admin_url(), autocommit=True)

    def start(self) -> None:
        database = sql.Identifier(self.name)
        self._admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(database))
        self._admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (self.name,),
        )

    def end(self) -> None:
        database = sql.Identifier(self.name)
        self._admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(database))

    def close(self) -> None:
        self.end()  # Whatever the test did: the database is dropped afterwards.
        self._admin.close()


@pytest.fixture
def outage(kb_url: str) -> Iterator[Outage]:
    made = Outage(kb_url)
    try:
        yield made
    finally:
        made.close()


def notices(editor: EditorScreen) -> list[str]:
    """The editor's notifications. Not the index's "Knowledge base not reloaded: …", which the
    app's follower of the knowledge base says of a failed rebuild (`chatbot.tui.kb_index`), with
    or without the editor: another part's wording (an outage it says plainly, once: see
    test_kb_outage_notice)."""
    said = [notification.message for notification in editor.app._notifications]
    return [line for line in said if not line.startswith("Knowledge base not reloaded: ")]


async def saved_in_an_outage(pilot: Pilot[None], outage: Outage) -> EditorScreen:
    """The helmet passage edited (`MINE`), the knowledge base gone, then Ctrl+S."""
    editor = await open_editor(pilot)
    await open_passage(pilot, "helmet")
    await type_into(pilot, "#form-text", MINE)
    outage.start()
    await pilot.press("ctrl+s")
    return editor


async def test_a_save_in_an_outage_says_so_plainly_and_its_line_goes_once_it_is_back(
    make_app: MakeApp, kb_url: str, outage: Outage, locale: str
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await saved_in_an_outage(pilot, outage)
        await wait_until(pilot, lambda: problem(editor) != "", timeout=10)
        assert problem(editor) == AWAY[locale]
        assert AWAY[locale] in notices(editor)
        said = [problem(editor), *notices(editor)]
        for raw in ("postgresql://", "FATAL", "cannot connect", kb_url):
            assert not any(raw in line for line in said), said
        assert editor.query_one("#form-text", TextArea).text == MINE  # Kept to save again.

        outage.end()  # No key pressed: the editor notices by itself.
        await wait_until(pilot, lambda: problem(editor) == BACK[locale], timeout=10)
        assert BACK[locale] in notices(editor)
        assert editor.query_one("#form-text", TextArea).text == MINE

        await pilot.press("ctrl+s")  # And it saves, as the line says.
        await wait_until(pilot, lambda: problem(editor) == "", timeout=10)
    with PostgresPassageStore.open(kb_url) as store:
        assert store.get("helmet").passage.text == MINE


async def test_typing_after_the_outage_line_is_not_overwritten_when_it_is_back(
    make_app: MakeApp, kb_url: str, outage: Outage, locale: str
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await saved_in_an_outage(pilot, outage)
        await wait_until(pilot, lambda: problem(editor) == AWAY[locale], timeout=10)
        await pilot.press("end", "!")  # Typing replaces the line, as any refusal's.
        assert problem(editor) == ""
        outage.end()
        await wait_until(pilot, lambda: BACK[locale] in notices(editor), timeout=10)
        assert problem(editor) == ""  # Said as a notice only: the line stays the form's own.
        assert editor.query_one("#form-text", TextArea).text == MINE + "!"


async def test_a_delete_in_an_outage_says_so_plainly_and_then_that_it_is_back(
    make_app: MakeApp, kb_url: str, outage: Outage, locale: str
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        outage.start()
        await pilot.press("f8")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.click("#confirm-yes")
        await wait_until(pilot, lambda: problem(editor) != "", timeout=10)
        assert problem(editor) == NOT_DONE[locale]
        assert NOT_DONE[locale] in notices(editor)
        assert not any("postgresql://" in line for line in notices(editor))
        outage.end()
        await wait_until(pilot, lambda: problem(editor) == NOT_DONE_BACK[locale], timeout=10)
    with PostgresPassageStore.open(kb_url) as store:
        assert store.exists("helmet")  # Not deleted: as the line says.


async def test_synonyms_saved_in_an_outage_say_so_plainly_and_then_that_it_is_back(
    make_app: MakeApp, kb_url: str, outage: Outage, locale: str
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+o")
        panel = editor.query_one(SynonymsPanel)
        await type_into(pilot, "#synonyms-text", "helmet = headgear\n")

        def said() -> str:
            return str(panel.query_one("#synonyms-problem", Static).render())

        await wait_until(pilot, lambda: said() == "")
        outage.start()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: said() != "", timeout=10)
        assert said() == AWAY[locale]
        assert not any("postgresql://" in line for line in notices(editor))
        outage.end()
        await wait_until(pilot, lambda: said() == BACK[locale], timeout=10)
        assert panel.text == "helmet = headgear\n"
