"""What a customer had typed in the chat's question box, and not sent, was lost when `serve`
restarted (SIGTERM ends every session): the session now keeps it, private to the user, for the
next session of the same conversation, which puts it back in the box; it is kept until sent or
cleared."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from playwright.sync_api import BrowserContext, Page

from chatbot.drafts import KEEP_S, MAX_DRAFT_CHARS, drafts_for, save_draft, take_draft
from tests.web.conftest import make_site
from tests.web.harness import (
    INPUT_FROM_BOTTOM_PX,
    conversation_state,
    settled,
    start_server,
    transcript,
    wait_for,
)
from tests.web.helpers import conversations_opened, open_chat

DRAFT = "Where is [bold]my[/bold] parcel? 50% of it came"
"""Typed, not sent: with markup that must stay as typed."""


def click_input(page: Page) -> None:
    box = page.locator("#terminal").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 200, box["y"] + box["height"] - INPUT_FROM_BOTTOM_PX)


def test_an_unsent_question_is_back_after_serve_restarts(
    context: BrowserContext, tmp_path: Path
) -> None:
    home = tmp_path / "site"
    db, kb = make_site(home)
    state = {"XDG_STATE_HOME": str(home / "state")}
    served = start_server(home, db=db, kb=kb, environment=state)
    try:
        page = open_chat(context, served)
        [conversation] = wait_for(lambda: conversations_opened(served), what="the chat")
        settled(page)
        click_input(page)
        page.keyboard.type(DRAFT)
        # Part of the draft drawn is not all of it in (keys still on their way were lost when
        # serve stopped). The app takes keys in order, so once the key typed after the draft
        # has had its effect (a person asked for, which leaves the box alone), all of it is in.
        page.keyboard.press("Control+t")
        wait_for(
            lambda: conversation_state(db, conversation)[0] == "waiting",
            what="the key after the draft",
        )
    finally:
        assert served.stop() == 0
    os.environ["XDG_STATE_HOME"] = state["XDG_STATE_HOME"]  # As the sessions had it.
    try:
        folder = drafts_for(str(db))
    finally:
        del os.environ["XDG_STATE_HOME"]
    kept = folder / f"{conversation}.txt"
    assert kept.read_text() == DRAFT
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert transcript(db, conversation) == []  # Kept aside, never sent.

    served = start_server(home, db=db, kb=kb, environment=state)
    try:
        page.goto(served.url + "/")  # The same browser: its cookie names the conversation.
        page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
        settled(page)
        assert conversations_opened(served) == [conversation]
        # Put back in the box, and still kept (read, not taken): a session killed now loses
        # nothing.
        assert kept.read_text() == DRAFT
        click_input(page)
        page.keyboard.press("Enter")  # What was typed before the restart is sent now.
        wait_for(
            lambda: transcript(db, conversation) == [("customer", DRAFT, None)],
            what="the draft sent as typed",
        )
        wait_for(lambda: not kept.exists(), what="the sent draft to go")
    finally:
        served.stop()


def test_a_draft_is_literal_capped_private_and_taken_once(tmp_path: Path) -> None:
    folder = tmp_path / "drafts" / "abc"
    save_draft(folder, 7, "   ")  # Blank: no draft at all.
    assert not folder.exists()
    save_draft(folder, 7, "x" * (MAX_DRAFT_CHARS + 50))
    assert (folder / "7.txt").read_text() == "x" * MAX_DRAFT_CHARS
    assert stat.S_IMODE((folder / "7.txt").stat().st_mode) == 0o600
    assert take_draft(folder, 7) == "x" * MAX_DRAFT_CHARS
    save_draft(folder, 7, "[red]hi[/red]\x1b[2J")
    assert take_draft(folder, 7) == "[red]hi[/red]"  # Markup kept; control characters not.
    assert take_draft(folder, 7) == ""  # Once.
    os.symlink(tmp_path / "elsewhere", folder / "8.txt")  # Not a file of ours: never read.
    (tmp_path / "elsewhere").write_text("secret")
    assert take_draft(folder, 8) == ""
    assert list(folder.glob("*.tmp")) == list(folder.glob(".*.tmp")) == []  # None left behind.


def test_two_tabs_keep_both_drafts_and_a_blank_one_takes_nothing(tmp_path: Path) -> None:
    """Both tabs of one customer save as serve stops: the second replaced the first's words, and
    a tab with an empty box deleted the other's draft."""
    folder = tmp_path / "drafts" / "abc"
    save_draft(folder, 12, "ALPHA customer one")
    save_draft(folder, 12, "")  # The other tab's box is empty.
    save_draft(folder, 12, "plus tab2")
    assert take_draft(folder, 12) == "ALPHA customer one plus tab2"
    save_draft(folder, 12, "where is")
    save_draft(folder, 12, "where is my helmet")  # The same words, typed further: once.
    assert take_draft(folder, 12) == "where is my helmet"


def test_drafts_nobody_came_back_for_go_after_a_week(tmp_path: Path) -> None:
    folder = tmp_path / "drafts" / "abc"
    save_draft(folder, 1, "left a week ago")
    week_ago = time.time() - KEEP_S - 60
    os.utime(folder / "1.txt", (week_ago, week_ago))
    save_draft(folder, 2, "today")
    assert sorted(p.name for p in folder.glob("*.txt")) == ["2.txt"]
