"""The editor's Synonyms tab (issue 15): reached by Ctrl+O and the command palette, each bad line
named under the box, Save (Ctrl+S) writing `synonyms.toml` atomically, and the next customer
question searching with the saved synonyms."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Button, Static, TabbedContent, TextArea

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.store import PassageStore
from chatbot.knowledge_base.synonyms import load_synonyms
from chatbot.tui import create_app
from chatbot.tui.screens.new_chat_dialog import NewChatDialog
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.synonyms_panel import SynonymsPanel
from tests.tui.conftest import FrozenClock, MakeApp
from tests.tui.editor_helpers import (
    open_editor,
    settings,
    settle,
    synonyms_from_palette,
    type_into,
)
from tests.tui.helpers import ask, type_text, wait_until

__all__ = ["settings"]  # The editor tests' settings: a writable copy of the knowledge base.

HEADGEAR = "Do you lend headgear with the bikes?"


def problems(panel: SynonymsPanel) -> str:
    return str(panel.query_one("#synonyms-problem", Static).render())


def note(panel: SynonymsPanel) -> str:
    return str(panel.query_one("#synonyms-note", Static).render())


async def test_edit_synonyms_and_the_next_question_uses_them(
    make_app: MakeApp, kb_copy: Path, other: DeskService
) -> None:
    app = make_app("all")
    async with app.run_test(size=(80, 24)) as pilot:
        await ask(pilot, HEADGEAR)  # No passage says "headgear": a person gets it.
        assert other.decisions(1)[-1].decision.candidates == ()
        editor = await open_editor(pilot)
        await pilot.press("ctrl+o")
        assert editor.query_one(TabbedContent).active == "synonyms"
        panel = editor.query_one(SynonymsPanel)
        await type_into(pilot, "#synonyms-text", "helmet = headgear\nbike\nzorb = blorp = x")
        await wait_until(pilot, lambda: "line 2: no '='" in problems(panel))
        assert "line 3: more than one '='" in problems(panel)
        assert panel.query_one("#synonyms-save", Button).disabled
        await pilot.press("ctrl+s")  # Refused while a line is bad: nothing written.
        assert load_synonyms(kb_copy) == ()
        await type_into(pilot, "#synonyms-text", "helmet = headgear, head protection\n")
        await wait_until(pilot, lambda: problems(panel) == "")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert load_synonyms(kb_copy) == (("helmet", "headgear", "head protection"),)
        assert not panel.dirty
        await pilot.press("escape")
        # Asked afresh (the first conversation waits for a person, so a new chat is asked
        # about first), with the synonyms in use.
        await app.screen.query_one(ChatPanel).action_new_conversation()
        await wait_until(pilot, lambda: isinstance(app.screen, NewChatDialog))
        await pilot.press("ctrl+b")
        await ask(pilot, HEADGEAR)
        retrieved = [c.id for c in other.decisions(2)[-1].decision.candidates]
        assert retrieved[:1] == ["helmet"]


async def test_synonyms_from_the_palette_and_a_conflict_is_said(
    make_app: MakeApp, kb_copy: Path
) -> None:
    PassageStore(kb_copy).save_synonyms([("senior", "pensioner")], based_on=None)
    app = make_app("editor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        panel = await synonyms_from_palette(pilot)
        assert panel.text == "senior = pensioner\n"
        # Another editor saves meanwhile; this one's save is refused, its typing kept.
        store = PassageStore(kb_copy)
        store.save_synonyms([("bike", "bicycle")], based_on=store.synonyms_revision())
        await type_into(pilot, "#synonyms-text", "senior = pensioner, retiree\n")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "changed by someone else" in problems(panel))
        assert panel.text == "senior = pensioner, retiree\n"
        assert load_synonyms(kb_copy) == (("bike", "bicycle"),)


async def test_a_group_is_judged_by_the_passages_its_language_searches(
    make_app: MakeApp, kb_copy: Path
) -> None:
    """As `helpdesk kb check` judges it: 单车 and 自行车 are in the zh/ passages, which Chinese
    questions search, though not in the main folder's; 鹦鹉 is only in an English passage, which
    they never search."""
    PassageStore(kb_copy).add(
        Passage(id="parrots", text="Parrots (鹦鹉) may not ride in the basket.")
    )
    app = make_app("editor")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: "zh" in app.services.translated)
        await settle(pilot)
        await pilot.press("ctrl+o")
        panel = app.screen.query_one(SynonymsPanel)
        await type_into(pilot, "#synonyms-text", "单车 = 自行车\n鹦鹉 = 八哥\nzorb = blorp\n")
        await wait_until(pilot, lambda: "zorb" in note(panel))
        assert note(panel) == (
            "Finds nothing (no passage has any of its words): zorb\n"
            "Finds nothing (no passage searched for questions in its language has any of its "
            "words): 鹦鹉"
        )


def test_synonyms_tab_at_80x24_with_a_bad_line(
    snap_compare: Callable[..., bool], settings: Settings, kb_copy: Path, clock: FrozenClock
) -> None:
    PassageStore(kb_copy).save_synonyms(
        [("helmet", "headgear", "head protection"), ("zorb", "blorp")], based_on=None
    )

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("ctrl+o")
        panel = pilot.app.screen.query_one(SynonymsPanel)
        text = panel.query_one(TextArea)
        text.cursor_blink = False  # A blinking cursor would be drawn or not at random.
        text.move_cursor(text.document.end)
        await type_text(pilot, "bike")
        await wait_until(pilot, lambda: "line 3" in problems(panel))
        await settle(pilot)

    app = create_app(settings, mode="editor", clock=clock, agent="ana", timings=False, bot=False)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
