"""A version whose history file cannot be read (`printf '{"id": "helmet", "te\\xff' >
.history/helmet/000002.json`), in the editor's History at 80x24: its row read "replaced by
unreadable", the pane below "Restoring v2 would change the text: …; cannot be restored", and
Enter, a click or the palette's Restore opened "Restore version 2 of helmet?" whose Restore only
produced an error. Now the row says it is unreadable and why, the pane only why it cannot be
restored, and no restore is offered for it: each way to one is refused where it is said."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, OptionList

from chatbot.config import Settings
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui.screens.editor import Confirm, EditorScreen
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor, open_passage
from tests.tui.helpers import flat, palette_ready, screen_text, wait_until

SIZE = (80, 24)
BROKEN = b'{"id": "helmet", "te\xff'


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


def three_versions_the_second_unreadable(kb_copy: Path) -> Path:
    store = PassageStore(kb_copy)
    for number in range(1, 4):
        current = store.get("helmet")
        store.save(current.passage.model_copy(update={"text": f"Helmets, take {number}."}),
                   based_on=current.revision)  # fmt: skip
    broken = kb_copy / ".history" / "helmet" / "000002.json"
    broken.write_bytes(BROKEN)
    return broken


async def highlight(pilot: Pilot[None], editor: EditorScreen, number: int) -> OptionList:
    options = editor.query_one("#history-options", OptionList)
    await wait_until(pilot, lambda: options.option_count == 3)
    options.focus()
    options.highlighted = options.get_option_index(str(number))
    await pilot.pause()
    return options


def diff_text(editor: EditorScreen) -> str:
    """The pane under the versions, its words run together: a path is folded mid-word."""
    shown = screen_text(editor.app, editor.query_one("#history-diff-scroll"))  # type: ignore[arg-type]
    return "".join(shown.split())


async def test_an_unreadable_version_is_said_and_never_offered_for_restore(
    make_app: MakeApp, kb_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = three_versions_the_second_unreadable(kb_copy)
    current = (kb_copy / "helmet.json").read_bytes()
    app = make_app("editor")
    refused: list[None] = []  # Each refusal rings the bell: the condition to wait on.
    monkeypatch.setattr(app, "bell", lambda: refused.append(None))
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        restore = editor.query_one("#history-restore", Button)

        # A readable version: what restoring it would change, and Restore offered.
        options = await highlight(pilot, editor, 1)
        await wait_until(pilot, lambda: "Restoringv1wouldchangethetext" in diff_text(editor))
        assert not restore.disabled

        await highlight(pilot, editor, 2)
        row = options.get_option(str(2)).prompt
        assert isinstance(row, str)
        assert row.endswith("  unreadable: not UTF-8 text (byte 20)")
        assert "replaced by" not in row
        # On screen, the row is cut to fit (the path left out: the row says which version).
        lines = screen_text(app, options).splitlines()
        [shown] = [line for line in lines if line.startswith("v2 ")]
        assert "unreadable: not UTF-8 t…" in shown
        said = "".join(f"v2 cannot be restored: {broken}: not UTF-8 text (byte 20)".split())
        await wait_until(pilot, lambda: diff_text(editor) == said)
        assert restore.disabled

        # Enter on the row, a click on it, the palette's Restore: refused, no dialog.
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(refused) == 1)
        assert app.screen is editor and diff_text(editor) == said
        index = options.get_option_index("2")
        # Its row as the list is scrolled now (it shows two versions at 80x24).
        assert await pilot.click(options, offset=(4, index - round(options.scroll_y)))
        await wait_until(pilot, lambda: len(refused) == 2)
        assert app.screen is editor and options.highlighted == index
        await pilot.press("ctrl+p", *"restore version")
        await palette_ready(pilot, "restore version")
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(refused) == 3)
        await pilot.pause()
        assert app.screen is editor and diff_text(editor) == said
    assert (kb_copy / "helmet.json").read_bytes() == current


async def test_a_readable_version_still_asks_before_it_is_restored(
    make_app: MakeApp, kb_copy: Path
) -> None:
    """What the refusal above is not: Enter on a version that can be restored asks."""
    three_versions_the_second_unreadable(kb_copy)
    app = make_app("editor")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        await highlight(pilot, editor, 3)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        assert "Restore version 3 of helmet?" in flat(screen_text(app))
