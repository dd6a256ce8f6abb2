"""Files a hand broke under the running app: a `synonyms.toml` nested 10,000 deep is said in the
Synonyms tab (the app closed with a RecursionError), one that is a FIFO leaves no reload stuck on
it, one unreadable history file leaves the other versions listed, and a passage file broken
since the editor opened it is said as unreadable, then replaced on a second Ctrl+S (it was
"changed by someone else", forever)."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

from chatbot.config import Settings
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui.screens.editor import Confirm, EditorScreen
from chatbot.tui.widgets.synonyms_panel import SynonymsPanel
from tests.tui.conftest import SIZE, MakeApp, editor_settings
from tests.tui.editor_follows_helpers import open_editor, open_passage, problem, text
from tests.tui.editor_helpers import synonyms_from_palette
from tests.tui.helpers import engine_ready, flat, screen_text, type_text, wait_until

NESTED = "a = " + "[" * 10_000 + "\n"


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


def synonyms_problem(panel: SynonymsPanel) -> str:
    return flat(str(panel.query_one("#synonyms-problem", Static).render()))


async def test_deeply_nested_synonyms_are_said_in_the_tab_and_the_app_goes_on(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("editor")
    async with app.run_test(size=SIZE) as pilot:
        await engine_ready(app)
        path = kb_copy / "synonyms.toml"
        path.write_text(NESTED, encoding="utf-8")
        panel = await synonyms_from_palette(pilot)
        await wait_until(pilot, lambda: "nested too deeply" in synonyms_problem(panel))
        assert synonyms_problem(panel) == f"{path}: nested too deeply (saving replaces the file)"
        assert app.is_running


@contextlib.contextmanager
def releasing_readers(fifo: Path) -> Iterator[None]:
    """Whatever the test finds, no thread is left waiting to open `fifo` for reading (one that
    was would keep the test's process from ending): each is given a writer that closes at once."""
    try:
        yield
    finally:
        for _ in range(100):
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError as error:  # ENXIO: no reader waits.
                assert error.errno == errno.ENXIO
                break


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX feature")
async def test_a_fifo_named_synonyms_toml_is_said_and_no_reload_waits_on_it(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("editor")
    async with app.run_test(size=SIZE) as pilot:
        await engine_ready(app)
        fifo = kb_copy / "synonyms.toml"
        os.mkfifo(fifo)
        with releasing_readers(fifo):
            assert app.kb_index is not None
            app.kb_index.poll()  # The app notices the new entry and reloads.
            said = f"{fifo}: is a FIFO (named pipe), not a regular file"

            def told() -> bool:
                return any(said in str(n.message) for n in app._notifications)

            await wait_until(pilot, told, timeout=10)
            await app.workers.wait_for_complete()  # No rebuild is left waiting.


async def test_one_unreadable_history_file_leaves_the_other_versions_listed(
    make_app: MakeApp, kb_copy: Path
) -> None:
    store = PassageStore(kb_copy)
    for number in range(1, 6):
        current = store.get("helmet")
        store.save(current.passage.model_copy(update={"text": f"Helmets, take {number}."}),
                   based_on=current.revision)  # fmt: skip
    broken = kb_copy / ".history" / "helmet" / "000001.json"
    broken.write_text("[" * 100_000, encoding="utf-8")
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        assert text(editor) == "Helmets, take 5."
        options = editor.query_one("#history-options", OptionList)
        await wait_until(pilot, lambda: options.option_count == 5)
        assert [options.get_option_at_index(i).id for i in range(5)] == ["5", "4", "3", "2", "1"]
        options.focus()
        options.highlighted = 4  # Version 1, the oldest, last.
        diff = editor.query_one("#history-diff")
        await wait_until(pilot, lambda: "nested too deeply" in flat(screen_text(app, diff)))
        assert "cannot be restored" in flat(screen_text(app, diff))
        options.highlighted = 1  # Version 4 says what restoring it would change.
        await wait_until(pilot, lambda: "take [-5.-]{+3.+}" in flat(screen_text(app, diff)))


async def test_a_passage_file_broken_since_it_was_opened_is_said_and_replaced(
    make_app: MakeApp, kb_copy: Path
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        assert isinstance(editor, EditorScreen)
        await open_passage(pilot, "helmet")
        editor.form.text_area.focus()
        await type_text(pilot, " Mine.")
        mine = text(editor)
        path = kb_copy / "helmet.json"
        path.write_text('{"id": "helmet",', encoding="utf-8")  # Broken from outside.
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "unreadable" in problem(editor))
        said = flat(problem(editor))
        # The file by its name, why in the parser's words (cut to fit two rows in a small window).
        assert said.startswith("helmet.json is unreadable now (malformed JSON at line 1 column 17")
        assert "changed by someone else" not in said and "Ctrl+S saves yours over it" in said
        assert text(editor) == mine  # The typing is kept.

        await pilot.press("ctrl+s")  # Asks, then replaces the broken file.
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        assert "Replace their version of 'helmet' with yours?" in flat(screen_text(app))
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: not editor.form.dirty)
        store = PassageStore(kb_copy)
        assert store.get("helmet").passage.text == mine and problem(editor) == ""
        assert store.history("helmet")[-1].content == '{"id": "helmet",'  # Kept, as it was.
