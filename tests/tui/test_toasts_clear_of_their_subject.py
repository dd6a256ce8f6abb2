"""A toast never covers what it talks about.

In the editor (120x40) "Saved my-e-bike-battery-died-halfway." and "Deleted … (kept as version 1;
…)" landed over the Id, Title and Tags of the passage just saved or deleted, and "Restored
version 1 of …" over the Content gaps tab's explanation: the editor's toasts are at the bottom
right, over the end of the history's diff. In the desk, "Saved your name in …" covered the second
line of the conversation's header, where the name it had just saved was."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import Input
from textual.widgets._toast import Toast

from chatbot.config import load_settings
from chatbot.desk.service import DeskService
from chatbot.i18n import Locale, translations
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.screens.dialogs import NameDialog
from chatbot.tui.screens.editor import Confirm, EditorScreen
from tests.tui.conftest import FrozenClock, editor_settings
from tests.tui.desk_helpers import waiting
from tests.tui.editor_helpers import open_editor, settle, type_into
from tests.tui.helpers import focus_of, read, type_text, wait_until

PASSAGE = "my-e-bike-battery-died-halfway"
TEXT = "If the battery dies halfway, ride on without assistance or call us to swap the bike."

# However long a step takes under load, its toast is still there to be measured.
pytestmark = pytest.mark.usefixtures("lasting_toasts")


@pytest.fixture
def lasting_toasts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(HelpDeskApp, "NOTIFICATION_TIMEOUT", 600)


async def toast_saying(pilot: Pilot[None], words: str) -> Region:
    """The region of the one toast on screen, once it says `words` and is laid out."""
    app = pilot.app

    def shown() -> bool:
        toasts = list(app.screen.query(Toast))
        return len(toasts) == 1 and words in str(toasts[0].render()) and toasts[0].region.height > 0

    await wait_until(pilot, shown)
    await pilot.pause()
    return app.screen.query_one(Toast).region


async def no_toast(pilot: Pilot[None]) -> None:
    pilot.app.clear_notifications()
    await wait_until(pilot, lambda: not pilot.app.screen.query(Toast))


def covered(editor: EditorScreen, toast: Region, *selectors: str) -> list[str]:
    """Which of `selectors`' widgets (each shown, with room on screen) the toast overlaps."""
    hit = []
    for selector in selectors:
        region = editor.query_one(selector).region
        assert region.area > 0, selector  # Laid out, so the check below can fail.
        if region.overlaps(toast):
            hit.append(selector)
    return hit


# The passage the toast names: its whole form (Id, Title, Tags, text, buttons), and the history's
# heading (Restore) and version list ("kept as version 1", "Restored version 1").
PASSAGE_PARTS = ("#form-id", "#form-title", "#form-tags", "#passage-form", "#history-head",
                 "#history-options")  # fmt: skip


@pytest.mark.parametrize(
    ("locale", "size"),
    [("en", (120, 40)), ("en", (80, 24)), ("en", (60, 20)), ("zh", (60, 20))],
    ids=["120x40", "80x24", "60x20", "zh-60x20"],
)
async def test_the_editor_toasts_leave_the_passage_and_the_tab_explanation_in_sight(
    db_path: Path,
    kb_copy: Path,
    http: httpx.AsyncClient,
    clock: FrozenClock,
    locale: Locale,
    size: tuple[int, int],
) -> None:
    t = translations(locale)
    settings = editor_settings(db_path, kb_copy, ui={"locale": locale})
    app = create_app(settings, mode="agent", http=http, clock=clock, agent="ana", timings=False)
    async with app.run_test(size=size, notifications=True) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+n")
        await type_into(pilot, "#form-id", PASSAGE)
        await type_into(pilot, "#form-title", "My e-bike battery died halfway")
        await type_into(pilot, "#form-tags", "e-bike, battery")
        await type_into(pilot, "#form-text", TEXT)
        await pilot.press("ctrl+s")
        await settle(pilot)
        toast = await toast_saying(pilot, t.gettext("Saved {passage}.").format(passage=PASSAGE))
        assert covered(editor, toast, *PASSAGE_PARTS) == [], toast

        await no_toast(pilot)
        await pilot.press("f8")
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.click("#confirm-yes")
        await settle(pilot)
        deleted = t.gettext(
            "Deleted {passage} (kept as version {version}; restore it from its history)."
        )
        toast = await toast_saying(pilot, deleted.format(passage=PASSAGE, version=1))
        assert not (kb_copy / f"{PASSAGE}.json").exists()
        assert covered(editor, toast, *PASSAGE_PARTS) == [], toast

        await no_toast(pilot)
        editor.action_restore()
        await wait_until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("tab", "enter")  # Its button: no letter answers a confirmation.
        await settle(pilot)
        restored = t.gettext("Restored version {version} of {passage}.")
        toast = await toast_saying(pilot, restored.format(version=1, passage=PASSAGE))
        assert (kb_copy / f"{PASSAGE}.json").exists()
        assert covered(editor, toast, *PASSAGE_PARTS) == [], toast

        # Still there on the Content gaps tab, clear of the line saying what the tab is.
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: editor.query_one("#gap-list .section-help").region.area > 0)
        await pilot.pause()
        assert app.screen.query_one(Toast).region == toast
        assert covered(editor, toast, "#gap-list .section-help") == [], toast


async def test_saved_your_name_leaves_the_claim_line_it_names_in_sight(
    tmp_path: Path, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    """The desk at 80x24: the console has 40 columns, and the conversation's header wraps to two
    lines, the agent's name across them."""
    name = "Alexandra Wilhelmina"
    settings = load_settings(store={"db": tmp_path / "helpdesk.sqlite3"})
    app = create_app(settings, mode="all", http=http, clock=clock, timings=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        conversation = waiting(other)
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: focus_of(app) is view.transcript)
        await pilot.press("ctrl+l")  # Claim: the console asks for a name first.
        await wait_until(pilot, lambda: isinstance(app.screen, NameDialog))
        dialog = app.screen
        read(dialog)
        dialog.query_one("#name-input", Input).clear()
        await type_text(pilot, name)
        await pilot.press("enter")
        await wait_until(pilot, lambda: view.is_mine)
        toast = await toast_saying(pilot, "Saved your name in")
        header = view.query_one("#conversation-header")
        await wait_until(pilot, lambda: "Wilhelmina" in str(header.render()))
        assert header.region.height == 2, header.region  # Wrapped: the check can fail.
        assert not toast.overlaps(header.region), (toast, header.region)
        assert not toast.overlaps(view.query_one("#reply").region)
