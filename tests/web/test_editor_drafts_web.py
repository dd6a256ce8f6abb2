"""An editor's unsaved changes to a passage were lost when `serve` restarted (SIGTERM ends every
session): the browser session now keeps them for the same editor (`chatbot.web.child` names the
folder of the knowledge base), and their next session puts them back in the form, unsaved,
written to the knowledge base only by their Save."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from playwright.sync_api import BrowserContext

from tests.web.conftest import PASSWORD, make_site
from tests.web.harness import settled, start_server, wait_for

SAVED = " Bring your receipt."
UNSAVED = " Ask staff for a [bold]refund[/bold] of 50%."
"""Typed, not saved: with markup that must stay as typed."""


def test_unsaved_changes_to_a_passage_are_back_after_serve_restarts(
    context: BrowserContext, tmp_path: Path
) -> None:
    home = tmp_path / "site"
    db, kb = make_site(home)
    state = {"XDG_STATE_HOME": str(home / "state")}
    passage = kb / "card-charged-twice.json"  # The first listed: shown as the editor opens.

    def text() -> str:
        return str(json.loads(passage.read_text(encoding="utf-8"))["text"])

    before = text()
    served = start_server(home, db=db, kb=kb, environment=state)
    try:
        page = context.new_page()
        page.goto(served.url + "/editor")
        page.fill("#name", "eddie")
        page.fill("#password", PASSWORD)
        page.click("button[type=submit]")
        settled(page)  # The editor is up, its list focused.
        # Enter opens the passage for writing, the cursor at its end; a save shows the keys
        # went there.
        page.keyboard.press("Enter")
        settled(page)  # Keys typed sooner went to the list.
        page.keyboard.type(SAVED)
        settled(page)
        page.keyboard.press("Control+s")
        wait_for(lambda: text() == before + SAVED, what="the first save")
        page.keyboard.type(UNSAVED)
        settled(page)  # Drawn: the app has the keys.
    finally:
        assert served.stop() == 0
    [kept] = (home / "state").rglob("editor.*.json")
    assert json.loads(kept.read_text())["text"] == before + SAVED + UNSAVED
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert kept.parent.name.startswith("account-")  # The account's, not the name's.
    assert text() == before + SAVED  # Kept aside, never saved.

    served = start_server(home, db=db, kb=kb, environment=state)
    try:
        page.goto(served.url + "/editor")  # The same browser: its cookie signs eddie in.
        settled(page)
        assert not kept.exists()  # Taken: back in the form.
        assert text() == before + SAVED  # Not saved by being put back.

        def saved_or_save() -> bool:
            if text() == (before + SAVED + UNSAVED).strip():
                return True
            page.keyboard.press("Control+s")
            return False

        wait_for(saved_or_save, what="the kept changes saved by Save", every=1.0)
    finally:
        served.stop()
