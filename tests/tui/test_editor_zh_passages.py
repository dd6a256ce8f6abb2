"""The editor edits the Chinese passages too. A tester who works in Chinese found F2 listing the
main knowledge base only: Ctrl+F `刹车` said no passage matches, though `zh/` (what a Chinese
conversation is answered from) holds ten translated passages, and `--kb .../zh` was the only way
in. Now F9 (footer, command palette) switches between English (the main folder) and 中文 (`zh/`),
the heading says which, unsaved changes are asked about first, and saving, deleting, history,
restore and another process's edits work on `zh/`, whose engine follows at once. A knowledge base
with no translation folder, or in PostgreSQL, offers no such choice."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import Input, TabbedContent, TextArea

from chatbot import drafts
from chatbot.config import Settings, load_settings
from chatbot.drafts import drafts_for
from chatbot.engine.models import Decision
from chatbot.knowledge_base import Passage
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.editor import Confirm, EditorScreen
from chatbot.tui.widgets.try_it import TryItPanel
from tests.conftest import ROOT, SHIPPED_CACHE, SHIPPED_KB
from tests.kb.backends import pg_url
from tests.tui.conftest import SIZE, FrozenClock, MakeApp, editor_settings
from tests.tui.editor_helpers import open_editor, settle, try_question, type_into
from tests.tui.helpers import (
    agent_app,
    flat,
    footer_line,
    palette_ready,
    screen_text,
    squashed,
    type_text,
    wait_until,
)

__all__ = ["pg_url"]

SMALL = (80, 24)
NO_MATCH = "No passage matches your search."
NEW_TEXT = "损坏费用：刹车磨损等正常损耗绝不收费；人为损坏最高收取 60 欧元。"


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


def shows(app: HelpDeskApp, *sentences: str) -> bool:
    """Whether the screen shows each sentence (spaces aside: a wide character takes two cells)."""
    shown = squashed(app)
    return all("".join(sentence.split()) in shown for sentence in sentences)


def listed(editor: EditorScreen) -> str:
    """What the passage list shows, its lines joined."""
    app = editor.app
    assert isinstance(app, HelpDeskApp)
    return flat(screen_text(app, editor.query_one("#passage-options")))


def form_text(editor: EditorScreen) -> str:
    return editor.form.query_one("#form-text", TextArea).text


async def switched(pilot: Pilot[None], editor: EditorScreen, title: str) -> None:
    """The editor shows the other language's passages: its heading says so, its list is read
    and its first passage (or the one asked for) is in the form."""
    await wait_until(pilot, lambda: editor.title == title)
    await settle(pilot)


def zh_engine_text(app: HelpDeskApp, passage_id: str) -> str | None:
    """The text the bot answers a Chinese conversation with for `passage_id` (None: none)."""
    engine = app.services.translated["zh"].engine
    return next((p.text for p in engine.passages if p.id == passage_id), None)


async def test_f9_shows_the_chinese_passages_and_searches_them(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock
) -> None:
    app = agent_app(settings, http, clock)
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        assert editor.title == "Knowledge base: English"
        assert "Knowledge base: English" in screen_text(app).splitlines()[0]
        assert "f9 中文" in await footer_line(pilot)
        await type_into(pilot, "#passage-search", "刹车")
        assert NO_MATCH in listed(editor)

        await pilot.press("f9")
        await switched(pilot, editor, "Knowledge base: 中文 (zh/)")
        assert shows(app, "Knowledge base: 中文 (zh/)")
        # The search typed stays, and finds the Chinese passage now.
        assert NO_MATCH not in listed(editor)
        assert shows(app, "damage-fee", "损坏费用")
        line = await footer_line(pilot)
        assert "f9 English" in line and "esc Back" in line and "^s Save" in line
        editor.query_one("#passage-search", Input).focus()
        await pilot.press("enter")  # Opens the first match.
        await pilot.pause()
        assert editor.form.passage_id == "damage-fee"
        assert editor.query_one("#form-title", Input).value == "损坏费用"

        # And back: the main folder's passages.
        await pilot.press("f9")
        await switched(pilot, editor, "Knowledge base: English")
        assert NO_MATCH in listed(editor)
        assert "f9 中文" in await footer_line(pilot)


async def test_save_delete_and_restore_go_to_zh_and_the_bot_follows(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, kb_copy: Path
) -> None:
    english = (kb_copy / "damage-fee.json").read_bytes()
    app = agent_app(settings, http, clock)
    answered: list[Decision] = []

    def hook(message: Message) -> None:
        if isinstance(message, TryItPanel.Answered):
            answered.append(message.decision)

    async with app.run_test(size=SMALL, message_hook=hook) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("f9")
        await switched(pilot, editor, "Knowledge base: 中文 (zh/)")
        editor.open_passage("damage-fee", focus=False)
        await pilot.pause()

        # Save: into zh/, the main folder's passage untouched; the Chinese engine has it at once.
        await type_into(pilot, "#form-text", NEW_TEXT)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not editor.form.dirty)
        saved = json.loads((kb_copy / "zh" / "damage-fee.json").read_text("utf-8"))
        assert saved["text"] == NEW_TEXT
        assert (kb_copy / "damage-fee.json").read_bytes() == english
        await wait_until(pilot, lambda: zh_engine_text(app, "damage-fee") == NEW_TEXT)
        assert all(p.text != NEW_TEXT for p in app.services.engine.passages)
        # Its history is zh/'s: the translation as shipped, restorable.
        history = editor.query_one("#history-options")
        await wait_until(pilot, lambda: "replaced by edit" in screen_text(app, history))
        assert [v.reason for v in PassageStore(kb_copy / "zh").history("damage-fee")] == ["edit"]
        assert PassageStore(kb_copy).history("damage-fee") == []

        # Delete: from zh/ only, after asking; the Chinese engine drops it.
        await pilot.press("f8")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: editor.form.deleted)
        assert not (kb_copy / "zh" / "damage-fee.json").exists()
        assert (kb_copy / "damage-fee.json").read_bytes() == english
        await wait_until(pilot, lambda: zh_engine_text(app, "damage-fee") is None)
        await wait_until(pilot, lambda: shows(app, "damage-fee (deleted)"))

        # Restore the edited version from zh/'s history.
        editor.action_restore()
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: not editor.form.deleted)
        assert form_text(editor) == NEW_TEXT
        assert (kb_copy / "zh" / "damage-fee.json").exists()
        await wait_until(pilot, lambda: zh_engine_text(app, "damage-fee") == NEW_TEXT)

        # A new passage written here is a Chinese one: in zh/.
        await pilot.press("ctrl+n")
        await type_into(pilot, "#form-id", "lost-item")
        await type_into(pilot, "#form-title", "失物招领")
        await type_into(pilot, "#form-text", "车筐里的遗失物品会在失物招领处保管 30 天。")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: (kb_copy / "zh" / "lost-item.json").exists())
        assert not (kb_copy / "lost-item.json").exists()
        await wait_until(pilot, lambda: zh_engine_text(app, "lost-item") is not None)
        # Try it asks a Chinese question of them, as the bot would.
        await try_question(pilot, "车筐里的遗失物品会保管多久？")
        await wait_until(pilot, lambda: bool(answered))
        assert answered[-1].candidates[0].id == "lost-item"


async def test_unsaved_changes_are_asked_about_before_switching(
    db_path: Path, kb_copy: Path, http: httpx.AsyncClient, clock: FrozenClock
) -> None:
    settings = editor_settings(db_path, kb_copy, ui={"locale": "zh"})
    app = agent_app(settings, http, clock)
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        assert editor.title == "知识库：English"
        assert "f9 中文" in await footer_line(pilot)
        await type_into(pilot, "#form-text", "Mine, not saved.")
        assert editor.form.dirty

        await pilot.press("f9")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        assert shows(app, "放弃对 card-charged-twice 的未保存修改吗？")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is editor)
        assert editor.title == "知识库：English" and editor.edited == "en"
        assert form_text(editor) == "Mine, not saved."

        await pilot.press("f9")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("tab", "enter")
        await switched(pilot, editor, "知识库：中文 (zh/)")
        assert shows(app, "知识库：中文 (zh/)")
        assert not editor.form.dirty
        assert editor.query_one("#form-title", Input).value == "一次骑行被扣了两次款"
        # Nothing typed reached either folder.
        for folder in (kb_copy, kb_copy / "zh"):
            assert "Mine" not in (folder / "card-charged-twice.json").read_text("utf-8")
        line = await footer_line(pilot)
        assert "f9 English" in line and "esc 返回" in line
        # The palette offers the way back, in the editor's language.
        titles = [command.title for command in editor.palette_commands()]
        assert "知识库：English段落" in titles
        assert not [title for title in titles if "中文 (zh/)" in title]


async def test_the_palette_switches_from_any_tab(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert "f9" not in await footer_line(pilot)  # The passages' key, as New is.
        await pilot.press("ctrl+p")
        await pilot.pause()
        await type_text(pilot, "中文")
        await palette_ready(pilot, "中文")
        await pilot.press("enter")
        await switched(pilot, editor, "Knowledge base: 中文 (zh/)")
        assert editor.query_one(TabbedContent).active == "passages"
        assert editor.form.passage_id == "card-charged-twice"
        assert editor.query_one("#form-title", Input).value == "一次骑行被扣了两次款"


async def test_another_process_edit_of_zh_reaches_the_open_passage(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, kb_copy: Path
) -> None:
    app = agent_app(settings, http, clock)
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("f9")
        await switched(pilot, editor, "Knowledge base: 中文 (zh/)")
        editor.open_passage("helmet", focus=False)
        await pilot.pause()
        store = PassageStore(kb_copy / "zh")  # `helpdesk kb edit --kb .../zh`, say.
        current = store.get("helmet")
        theirs = "普通单车不配头盔。所有电动自行车都在前车筐里配有头盔。"
        store.save(Passage(id="helmet", title="头盔", text=theirs), based_on=current.revision)
        await wait_until(pilot, lambda: form_text(editor) == theirs)
        await wait_until(pilot, lambda: zh_engine_text(app, "helmet") == theirs)


async def test_a_chinese_form_left_unsaved_comes_back_in_chinese(
    make_app: MakeApp, kb_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kept apart from the English passage of the same id, which it would have been saved
    over, and the editor opens on 中文 to put it back."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    kept = drafts_for(str(kb_copy))
    monkeypatch.setattr(drafts, "editor_drafts", kept)
    english = (kb_copy / "helmet.json").read_bytes()
    app = make_app("editor")
    async with app.run_test(size=SMALL) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        await settle(pilot)
        await pilot.press("f9")
        await switched(pilot, editor, "Knowledge base: 中文 (zh/)")
        editor.open_passage("helmet", focus=False)
        await pilot.pause()
        await type_into(pilot, "#form-text", "头盔：请随车一起归还，谢谢您的配合。")
        app.exit()  # As a browser session ends: no quit question.
        await pilot.pause()
    assert list(kept.glob("*.json")) == [] and len(list((kept / "zh").glob("*.json"))) == 1

    app = make_app("editor")
    async with app.run_test(size=SMALL) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        await settle(pilot)
        assert form_text(editor) == "头盔：请随车一起归还，谢谢您的配合。"
        assert editor.title == "Knowledge base: 中文 (zh/)"
        assert editor.form.passage_id == "helmet" and editor.form.dirty
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not editor.form.dirty)
    saved = json.loads((kb_copy / "zh" / "helmet.json").read_text("utf-8"))
    assert saved["text"] == "头盔：请随车一起归还，谢谢您的配合。"
    assert (kb_copy / "helmet.json").read_bytes() == english


async def test_no_choice_without_a_translation_folder(
    db_path: Path, kb_copy: Path, http: httpx.AsyncClient, clock: FrozenClock
) -> None:
    shutil.rmtree(kb_copy / "zh")
    app = agent_app(editor_settings(db_path, kb_copy), http, clock)
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        assert editor.title == "Knowledge base"
        assert "f9" not in await footer_line(pilot)
        await pilot.press("f9")
        await pilot.pause()
        assert editor.edited == "en" and editor.title == "Knowledge base"
        assert not [c for c in editor.palette_commands() if c.title.endswith("passages")]


@pytest.fixture
def kb_url(pg_url: str) -> Iterator[str]:
    """A PostgreSQL knowledge base seeded from the shipped folder, `zh/` and all."""
    subprocess.run(
        [sys.executable, "-m", "chatbot", "kb", "import", str(SHIPPED_KB), "--kb", pg_url],
        cwd=ROOT, check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    yield pg_url


async def test_no_choice_on_postgresql(
    db_path: Path, kb_url: str, http: httpx.AsyncClient, clock: FrozenClock
) -> None:
    settings = load_settings(
        store={"db": db_path},
        knowledge_base={"path": kb_url},
        valen={"cache": SHIPPED_CACHE, "replay": "on"},
    )
    app = agent_app(settings, http, clock)
    async with app.run_test(size=SMALL) as pilot:
        editor = await open_editor(pilot)
        assert editor.title == "Knowledge base"
        assert "f9" not in await footer_line(pilot)
        assert editor.check_action("switch_language", ()) is False
        assert not [c for c in editor.palette_commands() if c.title.endswith("passages")]
