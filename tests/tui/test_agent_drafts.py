"""An agent's unsent reply and internal note were lost when their console ended (`serve`
restarting, the page closed, the terminal app quit): the console now keeps them, private to the
user, per agent and per database, and puts each back once in its box when that agent opens the
conversation again. Nothing kept ever goes out without the agent's Enter."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import httpx
import pytest

from chatbot import drafts
from chatbot.cli.main import build_parser
from chatbot.config import Settings
from chatbot.desk.models import Author, ChatEvent, Note
from chatbot.desk.service import DeskService
from chatbot.drafts import drafts_for
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.screens.dialogs import ClaimsOnQuit
from chatbot.tui.widgets.agent_console import AgentConsole
from tests.tui.conftest import SIZE, FrozenClock, MakeApp
from tests.tui.helpers import flat, read, screen_text, type_text, wait_until

REPLY = "Your [bold]refund[/bold] of 50% is on its way"
"""Typed, not sent: with markup that must stay as typed."""
NOTE = "Customer asked [red]twice[/red] before"
OTHER_REPLY = "Checking the station log"


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's state directory, the test's own."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


@pytest.fixture
def kept(state: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The consoles keep drafts, as a browser session's or a terminal's do: in the state
    directory, in the folder of this database."""
    folder = drafts_for(str(db_path))
    monkeypatch.setattr(drafts, "agent_drafts", folder)
    return folder


def claimed(desk: DeskService, agent: str, question: str) -> int:
    """A customer (another process) asked for a person, and `agent` claimed them."""
    conversation = desk.start_conversation().id
    desk.talk_to_person(conversation)
    desk.ask(conversation, question)
    desk.claim(conversation, agent=agent)
    return conversation


def sent_by_agents(desk: DeskService, conversation: int) -> list[str]:
    return [m.text for m in desk.messages(conversation) if m.author is Author.AGENT]


def notes(desk: DeskService, conversation: int) -> list[str]:
    return [
        e.event.text
        for e in desk.entries_after(conversation, 0)
        if isinstance(e, ChatEvent) and isinstance(e.event, Note)
    ]


async def test_unsent_replies_and_notes_are_back_for_their_agent_after_the_console_ends(
    make_app: MakeApp,
    other: DeskService,
    kept: Path,
    settings: Settings,
    http: httpx.AsyncClient,
    clock: FrozenClock,
) -> None:
    first = claimed(other, "ana", "Where is my refund?")
    second = claimed(other, "ana", "The dock is broken")
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(first)
        await wait_until(pilot, lambda: view.is_mine)
        await type_text(pilot, REPLY)
        await pilot.press("ctrl+n")
        await type_text(pilot, NOTE)  # Left in note mode.
        await app.open_conversation(second)  # The first's drafts kept in memory meanwhile.
        await wait_until(pilot, lambda: view.is_mine)
        await type_text(pilot, OTHER_REPLY)
        assert view.reply_input.value == OTHER_REPLY
        await pilot.press("ctrl+q")  # The terminal's quit: claims asked about, then kept.
        await wait_until(pilot, lambda: isinstance(app.screen, ClaimsOnQuit))
        read(
            app.screen
        )  # A letter pressed at once is typing, for the reply box (test_agent_dialog_bursts).
        await pilot.press("k")
        await wait_until(pilot, lambda: not app.is_running)

    # Kept aside on this host, private to the user, and never sent.
    files = sorted(kept.glob("*.txt"))
    assert len(files) == 3
    assert stat.S_IMODE(kept.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert sorted(f.read_text() for f in files) == sorted([REPLY, NOTE, OTHER_REPLY])
    for conversation in (first, second):
        assert sent_by_agents(other, conversation) == []
        assert notes(other, conversation) == []

    # Another agent opening the conversation gets none of ana's words, nor takes them.
    ben = create_app(
        settings, mode="agent", http=http, clock=clock, agent="ben", timings=False
    )  # fmt: skip
    async with ben.run_test(size=SIZE) as pilot:
        view = await ben.open_conversation(first)
        await pilot.pause()
        assert view.reply_input.value == ""
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: view.note_mode)
        assert view.reply_input.value == ""
    assert len(list(kept.glob("*.txt"))) == 3

    # Ana again (a new process): each draft back once, in its own box, as typed.
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(first)
        await wait_until(pilot, lambda: view.is_mine)
        assert view.reply_input.value == REPLY and not view.note_mode
        await wait_until(pilot, lambda: "[bold]refund[/bold]" in flat(screen_text(app)))
        # Still kept until sent: a console killed now would lose nothing (it was taken).
        assert sorted(f.read_text() for f in kept.glob(f"{first}.*")) == sorted([REPLY, NOTE])
        assert sent_by_agents(other, first) == []  # Back in the box is not sent.
        await pilot.press("ctrl+n")
        assert view.reply_input.value == NOTE
        await pilot.press("enter")  # The agent's Enter: the note is added, as typed.
        await wait_until(pilot, lambda: notes(other, first) == [NOTE])
        assert [f.read_text() for f in kept.glob(f"{first}.*")] == [REPLY]  # Sent: forgotten.
        await wait_until(pilot, lambda: not view.note_mode)
        assert view.reply_input.value == REPLY
        await pilot.press("enter")
        await wait_until(pilot, lambda: sent_by_agents(other, first) == [REPLY])

        await app.open_conversation(second)
        await wait_until(pilot, lambda: view.reply_input.value == OTHER_REPLY)
        await pilot.press("enter")
        await wait_until(pilot, lambda: sent_by_agents(other, second) == [OTHER_REPLY])
    assert not list(kept.glob("*.txt"))  # Everything was sent: nothing left to keep.


async def test_a_draft_kept_meanwhile_and_one_saved_are_joined(
    make_app: MakeApp, other: DeskService, kept: Path
) -> None:
    """Two tabs of ana's: one ended with words for a conversation the other has typed in too.
    Neither's words are dropped, and neither is sent."""
    from chatbot.drafts import save_agent_draft

    conversation = claimed(other, "ana", "Where is my refund?")
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: view.is_mine)
        await type_text(pilot, "Hello,")
        await pilot.press("escape")
        await wait_until(pilot, lambda: view.closed)
        # The other tab ends meanwhile (its words saved as it closes).
        save_agent_draft(kept, conversation, agent="ana", note=False, text="the refund left")
        await app.open_conversation(conversation)
        assert view.reply_input.value == "Hello, the refund left"
        assert sent_by_agents(other, conversation) == []


async def test_helpdesk_agent_in_a_terminal_keeps_the_reply_across_a_quit(
    other: DeskService, db_path: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command itself (not the tests' app factory) keeps drafts, in the folder of the
    database its settings name."""
    from chatbot.cli.app import build_app

    monkeypatch.setenv("HELPDESK_DB", str(db_path))
    conversation = claimed(other, "ana", "Where is my refund?")
    arguments = ["agent", "--agent", "ana", "--no-bot"]
    app = build_app(build_parser("agent").parse_args(arguments), keep_drafts=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(app.screen.query(AgentConsole)), timeout=30)
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: view.is_mine)
        await type_text(pilot, REPLY)
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, ClaimsOnQuit))
        read(
            app.screen
        )  # A letter pressed at once is typing, for the reply box (test_agent_dialog_bursts).
        await pilot.press("k")
        await wait_until(pilot, lambda: not app.is_running)
    assert drafts.agent_drafts == drafts_for(str(db_path))
    assert [f.read_text() for f in drafts_for(str(db_path)).glob("*.txt")] == [REPLY]

    app = build_app(build_parser("agent").parse_args(arguments), keep_drafts=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(app.screen.query(AgentConsole)), timeout=30)
        view = await app.open_conversation(conversation)
        assert view.reply_input.value == REPLY
    assert sent_by_agents(other, conversation) == []


def test_drafts_are_per_database_literal_and_bounded(state: Path, tmp_path: Path) -> None:
    from chatbot.drafts import MAX_AGENT_DRAFT_CHARS, save_agent_draft, take_agent_draft

    here, there = drafts_for(str(tmp_path / "a.sqlite3")), drafts_for(str(tmp_path / "b.sqlite3"))
    save_agent_draft(here, 5, agent="ana", note=False, text="for a")
    assert take_agent_draft(there, 5, agent="ana", note=False) == ""  # Another database's 5.
    assert take_agent_draft(here, 5, agent="ana", note=True) == ""  # Not the note.
    assert take_agent_draft(here, 5, agent="ana", note=False) == "for a"
    assert take_agent_draft(here, 5, agent="ana", note=False) == ""  # Once.

    save_agent_draft(here, 5, agent="ana", note=False, text="   ")  # Blank: nothing kept.
    assert not list(here.glob("*.txt"))
    # A file changed behind the app's back: control characters never reach a box.
    save_agent_draft(here, 6, agent="ana", note=True, text="x")
    [path] = here.glob("6.*.note.txt")
    path.write_bytes(b"bad\x1b[2Jnews \x07[b]ok[/b]\n")
    assert take_agent_draft(here, 6, agent="ana", note=True) == "badnews [b]ok[/b] "
    save_agent_draft(here, 7, agent="ana", note=False, text="y" * (MAX_AGENT_DRAFT_CHARS + 10))
    assert len(take_agent_draft(here, 7, agent="ana", note=False)) == MAX_AGENT_DRAFT_CHARS
    # A customer's draft of the same conversation is theirs, and an agent's is not the customer's.
    from chatbot.drafts import save_draft, take_draft

    save_agent_draft(here, 8, agent="ana", note=False, text="agent words")
    assert take_draft(here, 8) == ""
    save_draft(here, 8, "customer words")
    assert take_agent_draft(here, 8, agent="ana", note=False) == "agent words"
    assert take_draft(here, 8) == "customer words"
    assert os.listdir(here) == [".lock"]


def test_drafts_are_the_accounts_not_the_display_names(state: Path, tmp_path: Path) -> None:
    """A tester removed ana, gave ben her display name "Ana", and ben's boxes offered her note
    and reply: the drafts went by display name. A browser session's are now the account's (its
    name, and when it was made: a name may be given again)."""
    from datetime import UTC, datetime

    from chatbot.accounts.models import Account, Area, Role
    from chatbot.cli.serve import session_arguments
    from chatbot.drafts import keep_for, save_agent_draft, take_agent_draft
    from chatbot.web.child import build_parser as child_parser
    from chatbot.web.spec import SessionSpec

    def folder(name: str, made: datetime) -> Path:
        account = Account(
            name=name, display_name="Ana", role=Role.AGENT, session_epoch=0, created_at=made
        )
        arguments = child_parser().parse_args(
            session_arguments(SessionSpec(Area.AGENT, account=account))
        )
        # As a session's process keeps them, with the arguments serve gave it.
        keep_for(str(tmp_path / "desk.sqlite3"), str(tmp_path / "kb"), account=arguments.account)
        assert drafts.agent_drafts is not None
        return drafts.agent_drafts

    ana = folder("ana", datetime(2026, 1, 5, tzinfo=UTC))
    save_agent_draft(ana, 3, agent="Ana", note=True, text="ANA SECRET NOTE")
    ben = folder("ben", datetime(2026, 2, 1, tzinfo=UTC))
    new_ana = folder("ana", datetime(2026, 3, 1, tzinfo=UTC))  # Removed, then made again.
    assert take_agent_draft(ben, 3, agent="Ana", note=True) == ""
    assert take_agent_draft(new_ana, 3, agent="Ana", note=True) == ""
    assert take_agent_draft(ana, 3, agent="Ana", note=True) == "ANA SECRET NOTE"


def test_a_database_named_two_ways_has_one_drafts_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--db desk.sqlite3` was hashed as typed: run in another folder, another database's
    conversation 3 got this one's note, and one file named two ways had two folders."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    here = drafts_for("desk.sqlite3")
    assert here == drafts_for(str(tmp_path / "a" / "desk.sqlite3"))
    assert here == drafts_for(f"sqlite://{tmp_path / 'a' / 'desk.sqlite3'}")
    monkeypatch.chdir(tmp_path / "b")
    assert drafts_for("desk.sqlite3") != here
    url = "postgresql://postgres@127.0.0.1/helpdesk"
    assert drafts_for(url) == drafts_for(url) != drafts_for(url + "2")


async def test_a_reply_begun_from_a_passage_and_edited_is_kept_with_its_source(
    make_app: MakeApp, other: DeskService, kept: Path
) -> None:
    """Ctrl+O's passage, edited in the box, then another conversation opened and this one again:
    the box came back empty (a reply with a passage was not kept), and nothing said so."""
    first = claimed(other, "ana", "I was charged twice")
    second = claimed(other, "ana", "Where is my helmet?")
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(first)
        await wait_until(pilot, lambda: view.is_mine)
        passage = next(iter((await view.services.live.wait_ready()).passages))
        view.use_passage(passage)
        await pilot.press("end")
        await type_text(pilot, " EDITED")
        edited = view.reply_input.value
        assert edited.endswith(" EDITED")
        await app.open_conversation(second)
        await wait_until(pilot, lambda: view.conversation_id == second)
        await app.open_conversation(first)
        await wait_until(pilot, lambda: view.conversation_id == first and view.is_mine)
        assert view.reply_input.value == edited and view.passage == passage
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(sent_by_agents(other, first)))
        [reply] = [m for m in other.messages(first) if m.author is Author.AGENT]
        assert (reply.text, reply.passage_id) == (edited, passage.id)


async def test_an_accounts_drafts_follow_it_when_its_display_name_changes(
    state: Path,
    db_path: Path,
    other: DeskService,
    settings: Settings,
    http: httpx.AsyncClient,
    clock: FrozenClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In an account's own folder (a browser session's) the files went by display name too: an
    agent renamed "Carl" to "Carlos" never got their note back, and it lay there a week."""
    from chatbot.drafts import account_drafts

    folder = account_drafts(drafts_for(str(db_path)), "carl@2026-01-05T09:00:00+00:00")
    monkeypatch.setattr(drafts, "agent_drafts", folder)
    conversation = other.start_conversation().id
    other.talk_to_person(conversation)

    def console(agent: str) -> HelpDeskApp:
        return create_app(
            settings, mode="agent", http=http, clock=clock, agent=agent, timings=False
        )  # fmt: skip

    app = console("Carl")
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: view.note_mode)
        await type_text(pilot, NOTE)
    assert [f.read_text() for f in folder.glob("*.txt")] == [NOTE]

    app = console("Carlos")  # The same account, renamed.
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: view.note_mode)
        assert view.reply_input.value == NOTE
    assert notes(other, conversation) == []


async def test_a_restored_draft_stays_kept_and_grows_as_the_agent_types(
    make_app: MakeApp, other: DeskService, kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Put back in the box, a kept reply was deleted from disk at once, and what was typed after
    it was written only as the console ended: a console killed then (`kill -9`, a crash: no
    unmount) lost both. Now the kept draft stays until sent, and follows the box as the agent
    types, within `SAVE_DRAFTS_S` (shortened here): what is on disk while the app still runs is
    what a killed console leaves."""
    from chatbot.drafts import save_agent_draft
    from chatbot.tui.widgets import conversation_view

    monkeypatch.setattr(conversation_view, "SAVE_DRAFTS_S", 0.05, raising=False)
    conversation = claimed(other, "ana", "Where is my refund?")
    save_agent_draft(kept, conversation, agent="ana", note=False, text="Your refund")

    def on_disk() -> list[str]:
        return [f.read_text() for f in kept.glob(f"{conversation}.*")]

    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: view.is_mine)
        assert view.reply_input.value == "Your refund"
        assert on_disk() == ["Your refund"]  # Back in the box, and still kept.
        await type_text(pilot, " left on Monday")
        await wait_until(pilot, lambda: on_disk() == ["Your refund left on Monday"])
        await pilot.press("ctrl+n")
        await type_text(pilot, "Refund checked")
        await wait_until(pilot, lambda: sorted(on_disk()) == sorted(
            ["Your refund left on Monday", "Refund checked"]))  # fmt: skip
        # Cleared by hand: the note is no draft any more.
        view.reply_input.put("")
        await wait_until(pilot, lambda: on_disk() == ["Your refund left on Monday"])
        assert sent_by_agents(other, conversation) == []
