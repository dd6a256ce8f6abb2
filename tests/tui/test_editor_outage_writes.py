"""The editor while its knowledge base in PostgreSQL cannot be reached, and after.

A tester found: Ctrl+S in an outage said the driver's error under the text and as a notification
("postgresql://postgres@…/qa_eve_1: cannot connect to the knowledge base: connection failed: …
FATAL: database "qa_eve_1" is not currently accepting connections"), and once the database was
allowed again that line stayed until the next save, while the chat and the console said the desk
was back. The outage here: the database refuses connections (`ALLOW_CONNECTIONS false`) and every
one it has is ended; the server itself is shared, and never stopped.
"""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Static, TextArea

from chatbot.knowledge_base.postgres import PostgresPassageStore
from chatbot.tui.screens.editor import Confirm, EditorScreen
from chatbot.tui.widgets.synonyms_panel import SynonymsPanel
from tests.kb.backends import pg_url
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.editor_helpers import open_editor, open_passage, problem, type_into
from tests.tui.helpers import wait_until
from tests.tui.postgres_helpers import (
    NOT_DONE,
    NOT_DONE_BACK,
    Outage,
    kb_url,
    locale,
    notices,
    outage,
    settings,
)

__all__ = ["kb_url", "locale", "outage", "pg_url", "settings"]

AWAY = {
    "en": "Not saved: the knowledge base cannot be reached. Your changes stay here: press Ctrl+S "
    "again in a moment.",
    "zh": "未保存：无法连接知识库。您的修改会保留在这里：请稍后再按 Ctrl+S。",
}
BACK = {
    "en": "The knowledge base can be reached again, but your changes are not saved yet: press "
    "Ctrl+S to save them.",
    "zh": "知识库已恢复连接，但您的修改尚未保存：请按 Ctrl+S 保存。",
}
MINE = "Helmets are lent free at every station."


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
        # The toast follows the line under the form, a message later.
        await wait_until(pilot, lambda: BACK[locale] in notices(editor))
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
