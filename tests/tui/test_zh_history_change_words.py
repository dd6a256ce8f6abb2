"""The editor's History for an editor reading Chinese: each version said what replaced it as a
code, `v1 2026-12-07 23:16 因 edit 被替换`; now the change is a Chinese word (编辑, 恢复, 删除)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.config import Settings
from chatbot.knowledge_base.store import PassageStore
from tests.tui.conftest import FrozenClock, editor_settings
from tests.tui.editor_helpers import open_editor, open_passage
from tests.tui.helpers import agent_app, screen_text, squashed, wait_until


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy, ui={"locale": "zh"})


async def test_history_says_what_replaced_each_version_in_chinese(
    settings: Settings, http: object, clock: FrozenClock, kb_copy: Path
) -> None:
    # v1 replaced by an edit, v2 by a restore (of v1), v3 by a delete (restored since).
    store = PassageStore(kb_copy)
    seen = store.get("helmet")
    store.save(seen.passage.model_copy(update={"text": "Helmets are free at every station."}),
               based_on=seen.revision)  # fmt: skip
    store.restore("helmet", version=1)
    store.delete("helmet")
    store.restore("helmet", version=3)
    app = agent_app(settings, http, clock)
    async with app.run_test(size=(100, 30)) as pilot:
        editor = await open_editor(pilot)
        await open_passage(pilot, "helmet")
        rows = editor.query_one("#history-options")
        await wait_until(pilot, lambda: "因删除被替换" in squashed(app))
        shown = "".join(screen_text(app, rows).split())
        assert "因删除被替换" in shown and "因恢复被替换" in shown and "因编辑被替换" in shown
        for code in ("edit", "restore", "delete"):
            assert code not in shown, code
