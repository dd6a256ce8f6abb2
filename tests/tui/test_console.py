"""Issue 14, the agent console as agents asked for it: who has a claim and for how long, unread
marks, moves offered only where they apply (and why not, when pressed), typing that always lands
in a text box, the display name asked once and remembered, claims offered back on quit, the
team's claims, finding and reopening resolved conversations, internal notes, dialogs and toasts
placed where they help."""

from __future__ import annotations

import tomllib
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from textual import events
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Button, Input

from chatbot.config import config_file, load_settings
from chatbot.desk.models import Author, ChatEvent, Note, State
from chatbot.desk.service import DeskService
from chatbot.notices import notice, status_line
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.screens.dialogs import ClaimsOnQuit, NameDialog
from chatbot.tui.screens.find import FindScreen
from chatbot.tui.screens.team import TeamScreen
from chatbot.tui.widgets.agent_console import AgentConsole
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.message_bubble import MessageBubble, NoticeBubble
from chatbot.tui.widgets.queue_list import QueueList, QueueTable
from chatbot.tui.widgets.transcript import Transcript
from tests.tui.conftest import Q1, Q3, SIZE, FrozenClock, MakeApp
from tests.tui.desk_helpers import waiting
from tests.tui.helpers import (
    ask,
    flat,
    footer_line,
    footer_offers,
    palette_ready,
    queue_rows,
    read,
    screen_text,
    type_into,
    type_text,
    wait_until,
)


def view_text(app: HelpDeskApp) -> str:
    return flat(screen_text(app, app.screen.query_one(ConversationView)))


def footer(app: HelpDeskApp) -> str:
    return screen_text(app).splitlines()[-1]


# -- the queue: claimed by whom for how long, unread marks ----------------------------------------


async def test_claimed_rows_say_by_whom_for_how_long_and_unread_ones_are_marked(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        first, second = waiting(other), waiting(other, "My card was refused")
        # Nobody here has read them yet. Each row comes into the queue when its customer asks
        # for a person, before their question: its mark comes with the next read, so the test
        # waits for the marks, not for the rows.
        await wait_until(pilot, lambda: [r[0] for r in queue_rows(app)] == ["●", "●"])

        view = await app.open_conversation(first)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: view.is_mine)
        clock.advance(180)
        await pilot.press("escape")
        await wait_until(
            pilot, lambda: len(queue_rows(app)) == 2 and queue_rows(app)[1][1] == str(first)
        )
        claimed = queue_rows(app)[1]
        assert claimed[0] == "" and claimed[2] == "claimed by ana for 3m"  # Not "waiting 3m".
        assert queue_rows(app)[0][2] == "waiting 3m 00s"
        assert "Handoff queue · 1 waiting · 1 yours" in screen_text(app)

        # The customer writes again: the claimed row is marked, and only it.
        other.ask(first, "Hello? Anyone there?")
        await wait_until(pilot, lambda: queue_rows(app)[1][0] == "●")
        assert other.queue(agent="ana")[1].unread

        # Reading it clears the mark, here and in the store (another host of ana's sees it).
        await app.open_conversation(first)
        await pilot.press("escape")
        await wait_until(pilot, lambda: queue_rows(app)[1][0] == "")
        assert not other.queue(agent="ana")[1].unread
        [bens] = other.queue(agent="ben")  # ben's marks are his own.
        assert (bens.conversation_id, bens.unread) == (second, True)


async def test_the_queue_reads_only_the_rows_that_changed(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        ids = [waiting(other, f"Question {n}") for n in range(30)]
        queue = app.screen.query_one(QueueList)
        # Caught up with the change feed too: the first read may have seen all 30 with the feed
        # still to report them, and that report reads every row once more.
        latest = other.last_entry_id()
        await wait_until(pilot, lambda: len(queue.items) == 30 and queue.cursor == latest)
        asked: list[list[int]] = []
        queue_items = app.services.desk.queue_items

        async def recording(conversation_ids: list[int], *, agent: str | None) -> object:
            asked.append(list(conversation_ids))
            return await queue_items(conversation_ids, agent=agent)

        app.services.desk.queue_items = recording  # type: ignore[assignment,method-assign]
        other.claim(ids[7], agent="ben")  # Leaves this agent's queue.
        await wait_until(pilot, lambda: len(queue.items) == 29)
        assert asked == [[ids[7]]]
        other.ask(ids[3], "Still waiting")
        await wait_until(pilot, lambda: asked[-1] == [ids[3]])
        assert [i.conversation_id for i in queue.items] == [i for i in ids if i != ids[7]]


# -- 80 columns: everything shortened, nothing dropped --------------------------------------------


async def test_at_80_columns_the_question_is_shortened_and_the_footer_whole(
    make_app: MakeApp, other: DeskService
) -> None:
    long = "My e-bike stopped in the middle of the bridge and the app says the battery is full"
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        mine = waiting(other, long)
        waiting(other, "Where is my helmet?")
        other.claim(mine, agent="ana")
        # The rows on screen, not only in the table: the table is shown (and the empty-queue line
        # hidden) at the next repaint.
        await wait_until(
            pilot, lambda: len(queue_rows(app)) == 2 and "   # Status" in screen_text(app)
        )
        text = screen_text(app)
        assert "   # Status" in text and "Question" in text
        claimed = next(line for line in text.splitlines() if "claimed by ana" in line)
        assert claimed.rstrip().endswith("…") and "My e-bike stopped" in claimed
        await wait_until(pilot, lambda: footer(app).startswith("⏎ Open"))
        assert footer(app).startswith("⏎ Open ^f Find f4 Team f6 Next ^q Quit f2 Editor")
        assert footer(app).endswith("^p palette")

        view = await app.open_conversation(mine)
        # The footer is redrawn as the claim's keys arrive, one refresh after another: wait for
        # the whole line, not its first key.
        whole = "^o Passage ^n Note ^r Resolve ^g To bot esc Back ^q Quit f2 Editor"
        await wait_until(pilot, lambda: view.is_mine and footer(app).startswith(whole))
        assert "You own this conversation: the bot is silent." in view_text(app)


async def test_at_80_columns_a_wait_of_minutes_is_shown_whole(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    # "waiting 28m 32s" is 15 cells; the column had 14, so every wait of ten minutes or more
    # lost its seconds to "…" in an 80-column agent console.
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        waiting(other, "There were no free docks at the station so I kept riding")
        clock.advance(28 * 60 + 32)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1 and "28m" in screen_text(app))
        assert queue_rows(app)[0][2] == "waiting 28m 32s"
        line = next(line for line in screen_text(app).splitlines() if "28m" in line)
        assert "waiting 28m 32s " in line and line.rstrip().endswith("…")  # The question is cut.


async def test_in_the_half_screen_console_statuses_take_their_short_form(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("all")
    async with app.run_test(size=(80, 24)) as pilot:
        waiting(other, "There were no free docks at the station so I kept riding")
        # The row comes when the customer asks for a person, its question a moment later.
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1 and queue_rows(app)[0][5] != "")
        [row] = queue_rows(app)
        assert row[1:5] == ("1", "0s", "customer-asked", "–")  # The reason whole.
        assert row[5].startswith("There") and row[5].endswith("…")  # The question gives way.
        view = await app.open_conversation(1)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: view.is_mine)
        hint = view.query_one("#reply-hint")
        assert flat(screen_text(app, hint)) == "You own this conversation: the bot is silent."


# -- the footer offers only what applies, and says why when pressed anyway ------------------------


async def test_moves_that_cannot_apply_are_hidden_and_say_why(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        theirs = waiting(other)
        other.claim(theirs, agent="ben")
        view = await app.open_conversation(theirs)
        await wait_until(pilot, lambda: footer_offers(app, "toggle_note"))
        for action in ("claim", "reopen", "send_passage", "resolve", "hand_back"):
            assert not footer_offers(app, action)
        assert "^r Resolve" not in footer(app) and "^l Claim" not in footer(app)
        hint = view.query_one("#reply-hint")

        def says(text: str) -> bool:
            return flat(screen_text(app, hint)) == text

        bens = (f"ben owns this conversation. Ctrl+N adds a note. If they have left, Ctrl+P "
                f"“Take #{theirs}…” puts it back in the queue.")  # fmt: skip
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: says(bens))
        assert other.conversation(theirs).state is State.CLAIMED
        view._why = None  # The same line again would prove nothing: it is cleared first.
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: says(bens))

        other.resolve(theirs, agent="ben")
        await wait_until(pilot, lambda: "^l Reopen" in footer(app))
        assert "^r Resolve" not in footer(app)
        # The box no longer invites a reply it would refuse; the line above it says why.
        assert view.reply_input.placeholder == ""
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: view._why is not None)
        assert says("Resolved. Reopen it (Ctrl+L) to follow up with the customer.")
        assert view.conversation is not None and view.conversation.state is State.RESOLVED


async def test_f3_on_a_conversation_shown_whole_says_so(
    make_app: MakeApp, other: DeskService
) -> None:
    """F3 shows earlier messages; on a short conversation it is hidden from the footer, and
    pressed anyway it did nothing and said nothing."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(waiting(other))
        await wait_until(pilot, lambda: footer_offers(app, "toggle_note"))
        assert not footer_offers(app, "show_earlier")
        view.transcript.focus()
        await pilot.press("f3")
        hint = view.query_one("#reply-hint")
        await wait_until(pilot, lambda: view._why is not None)
        assert flat(screen_text(app, hint)) == "Every message of this conversation is shown."


async def test_a_conversation_with_the_bot_says_so_in_words_not_its_state_name(
    make_app: MakeApp, other: DeskService
) -> None:
    """Ctrl+L on the bot's conversation said "Conversation 1 is bot: it cannot be claimed.",
    and its reply box invited a reply that was then refused."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        with_the_bot = other.start_conversation().id  # Nothing asked yet: nothing to judge.
        view = await app.open_conversation(with_the_bot)
        await wait_until(pilot, lambda: view.conversation is not None)
        hint = view.query_one("#reply-hint")
        assert view.reply_input.placeholder == ""
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: view._why is not None)
        assert flat(screen_text(app, hint)) == "The bot is answering this conversation."
        assert " is bot" not in view_text(app)
        waiting_one = waiting(other)
        view = await app.open_conversation(waiting_one)
        await wait_until(
            pilot, lambda: view.conversation is not None and view.conversation.id == waiting_one
        )
        assert view.reply_input.placeholder == ""
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: view._why is not None)
        assert flat(screen_text(app, hint)) == "Claim this conversation (Ctrl+L) first."


# -- focus and typing -----------------------------------------------------------------------------


async def test_tab_crosses_the_chat_without_button_stops_and_typing_reaches_an_input(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("all")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)  # Answered: its Helpful and Not helpful buttons show.
        bubbles = list(app.screen.query(MessageBubble))
        assert any(bubble.query(Button) for bubble in bubbles)
        assert all(not button.focusable for button in app.screen.query(Button))
        # Another customer's conversation: claimed, the chat's answer keeps its buttons (its
        # own, claimed, would no longer offer them).
        view = await app.open_conversation(waiting(other))
        await pilot.press("ctrl+l")
        reply = app.screen.query_one("#reply", Input)
        await wait_until(pilot, lambda: reply.has_focus)
        question = app.screen.query_one("#question", Input)
        presses = 0
        while not question.has_focus:
            await pilot.press("tab")
            presses += 1
            assert not isinstance(app.focused, Button)
            assert presses <= 2
        # Typed on the customer's transcript: lands in their box, not lost, every letter of a
        # word typed quickly (the first moves the focus while the rest are on their way).
        app.screen.query_one("#chat-log").focus()
        await type_text(pilot, "Hello")
        assert question.has_focus and question.value.endswith("Hello")
        # Typed on the agent's transcript: lands in the reply box.
        view.query_one(Transcript).focus()
        await type_text(pilot, "Okay")
        assert reply.has_focus and reply.value == "Okay"


async def test_typing_where_no_reply_is_possible_says_why_and_on_the_queue_searches(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation = waiting(other)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        table = app.screen.query_one(QueueTable)
        table.focus()
        # A word typed quickly: its letters are all on their way before the first opens the
        # search, and all of them go into that one search.
        await type_text(pilot, "helmet")
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        field = app.screen.query_one("#find-input", Input)
        assert field.value == "helmet"
        assert sum(isinstance(screen, FindScreen) for screen in app.screen_stack) == 1
        # A letter that reaches the queue once the search box is built joins the words there.
        table.post_message(events.Key("s", "s"))
        await wait_until(pilot, lambda: field.value == "helmets")
        await pilot.press("escape")
        view = await app.open_conversation(conversation)
        view.query_one(Transcript).focus()
        await pilot.press("x")
        await wait_until(pilot, lambda: "Claim this conversation (Ctrl+L) to reply." in
                         view_text(app))  # fmt: skip


async def test_a_key_typed_while_the_search_is_built_joins_the_words(
    make_app: MakeApp,
) -> None:
    """Over a browser's websocket "#8" comes as one chunk: "#" opens the search, and "8" could
    arrive once its box was made but not yet mounted, where it was kept only in the text the box
    had already been made with: lost (1 run in 8 of a test typing "#N")."""

    class Racing(FindScreen):
        def compose(self) -> ComposeResult:
            yield from super().compose()
            self.add_typed("8")  # The box exists, not yet in the screen.

    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(app.screen.query(AgentConsole)))
        search = Racing(app.services, text="#")
        await app.push_screen(search)
        field = search.query_one("#find-input", Input)
        await wait_until(pilot, lambda: field.value == "#8")
        assert field.cursor_position == 2 and field.has_focus


# -- the agent's name -----------------------------------------------------------------------------


CONFIG = """\
# My help desk settings.
[engine]
threshold = 0.75  # tuned in March

[agent]
# Filled in by the console.
"""


async def test_the_name_is_asked_on_the_first_claim_and_remembered_with_the_file_kept(
    tmp_path: Path, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    config = config_file()  # Under the test's own XDG_CONFIG_HOME.
    config.parent.mkdir(parents=True)
    config.write_text(CONFIG)
    settings = load_settings(store={"db": tmp_path / "helpdesk.sqlite3"})
    assert settings.agent.name is None
    app = create_app(settings, mode="agent", http=http, clock=clock, timings=False)
    async with app.run_test(size=SIZE) as pilot:
        conversation = waiting(other)
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: footer_offers(app, "claim"))
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, NameDialog))
        name_box = app.screen.query_one("#name-input", Input)
        name_box.value = "  "
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: "Type the name customers will see." in flat(screen_text(app))
        )
        name_box.value = "Ana Lima"
        await pilot.press("enter")
        await wait_until(pilot, lambda: view.is_mine)
        assert other.conversation(conversation).agent == "Ana Lima"
    text = config.read_text()
    assert text.startswith(CONFIG)  # Comments, values and order as they were.
    assert tomllib.loads(text)["agent"]["name"] == "Ana Lima"
    assert tomllib.loads(text)["engine"]["threshold"] == 0.75

    # Next time it is known; `--agent` (the web front end's account name) wins, never asking.
    again = load_settings(store={"db": tmp_path / "helpdesk.sqlite3"})
    assert again.agent.name == "Ana Lima"
    web = create_app(again, mode="agent", http=http, clock=clock, agent="Web Account")
    async with web.run_test(size=SIZE) as pilot:
        second = waiting(other)
        view = await web.open_conversation(second)
        await wait_until(pilot, lambda: footer_offers(web, "claim"))
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: view.is_mine)
        assert not isinstance(web.screen, NameDialog)
        assert other.conversation(second).agent == "Web Account"


async def test_a_name_another_console_holds_claims_under_is_asked_about_first(
    tmp_path: Path, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    """Two people choosing "ana" shared her claims, each able to resolve the other's: the
    dialog says so first, and a second Enter (the same person, back) takes the name."""
    settings = load_settings(store={"db": tmp_path / "helpdesk.sqlite3"})
    held = waiting(other)
    assert other.claim(held, agent="ana").won
    app = create_app(settings, mode="agent", http=http, clock=clock, timings=False)
    async with app.run_test(size=SIZE) as pilot:
        conversation = waiting(other)
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: footer_offers(app, "claim"))
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, NameDialog))
        app.screen.query_one("#name-input", Input).value = "ana"
        await pilot.press("enter")
        await wait_until(pilot, lambda: "ana holds 1 conversation now" in flat(screen_text(app)))
        assert isinstance(app.screen, NameDialog)
        await pilot.press("enter")
        await wait_until(pilot, lambda: view.is_mine)
        assert other.conversation(conversation).agent == "ana"


async def test_cancelling_the_name_claims_nothing_and_a_broken_file_is_left_alone(
    tmp_path: Path, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    settings = load_settings(store={"db": tmp_path / "helpdesk.sqlite3"})
    app = create_app(settings, mode="agent", http=http, clock=clock, timings=False)
    async with app.run_test(size=SIZE) as pilot:
        conversation = waiting(other)
        await app.open_conversation(conversation)
        await wait_until(pilot, lambda: footer_offers(app, "claim"))
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, NameDialog))
        await pilot.press("escape")
        await pilot.pause()
        assert other.conversation(conversation).state is State.WAITING
        # The file turned invalid meanwhile: the name is used, the file is not overwritten.
        config = config_file()  # Under the test's own XDG_CONFIG_HOME.
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text("[agent\nname = 'x'\n")
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, NameDialog))
        await type_into(pilot, "#name-input", "Bo")
        await wait_until(pilot, lambda: other.conversation(conversation).agent == "Bo")
        assert config.read_text() == "[agent\nname = 'x'\n"


# -- quitting with claims -------------------------------------------------------------------------


@pytest.mark.parametrize(("answer", "released"), [("h", True), ("k", False), ("ctrl+q", True)])
async def test_quitting_offers_to_hand_claims_back(
    make_app: MakeApp, other: DeskService, answer: str, released: bool
) -> None:
    """Ctrl+Q pressed again on the question hands back, its first choice: it quit keeping the
    claims, without a word, and their customers were told a person was helping them."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        first, second = waiting(other), waiting(other)
        for conversation in (first, second):
            assert other.claim(conversation, agent="ana").won
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, ClaimsOnQuit))
        assert "You hold 2 claimed conversations. Hand them back" in flat(screen_text(app))
        assert "Hand back (h, Ctrl+Q)" in flat(screen_text(app))  # Ctrl+Q again is said.
        read(
            app.screen
        )  # A letter pressed at once is typing, for the reply box (test_agent_dialog_bursts).
        await pilot.press(answer)
        await wait_until(pilot, lambda: app.return_code is not None)
    state = State.WAITING if released else State.CLAIMED
    assert [other.conversation(c).state for c in (first, second)] == [state, state]


async def test_cancel_stays_and_the_palette_quit_asks_too(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation = waiting(other)
        other.claim(conversation, agent="ana")
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, ClaimsOnQuit))
        await pilot.press("escape")
        await pilot.pause()
        assert app.return_code is None and not isinstance(app.screen, ClaimsOnQuit)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await type_text(pilot, "quit")
        await palette_ready(pilot, "quit")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ClaimsOnQuit))
        read(app.screen)
        await pilot.press("h")
        await wait_until(pilot, lambda: app.return_code is not None)
    assert other.conversation(conversation).state is State.WAITING


async def test_a_claim_a_colleague_left_behind_can_be_put_back_in_the_queue(
    make_app: MakeApp, other: DeskService
) -> None:
    """Ben quit keeping his claims: his customer was told a person was helping, and no one else
    could let the conversation go (Ctrl+R and Ctrl+G said ben owned it)."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        left = waiting(other)
        other.claim(left, agent="ben")
        view = await app.open_conversation(left)
        await wait_until(pilot, lambda: footer_offers(app, "toggle_note"))
        assert [c.title for c in view.palette_commands()][-2] == (
            f"Take #{left} from ben: back in the queue"
        )
        await pilot.press("ctrl+p")
        await pilot.pause()
        await type_text(pilot, "from ben")
        await palette_ready(pilot, "from ben")
        await pilot.press("enter")
        await wait_until(pilot, lambda: other.conversation(left).state is State.WAITING)
        await wait_until(pilot, lambda: "^l Claim" in footer(app))  # Now anyone may claim it.


async def test_no_claims_quits_at_once(make_app: MakeApp) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: app.return_code is not None)


async def test_a_dialogs_footer_offers_its_keys_not_the_screens_beneath(
    make_app: MakeApp, other: DeskService
) -> None:
    """A dialog covers the console, whose keys do nothing while it is up: its footer showed
    them anyway (F4 Team, F6 Next under the search), and never the dialog's own."""
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        other.claim(waiting(other), agent="ana")
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        assert "f4 Team" in await footer_line(pilot)
        dialogs: list[tuple[str, type[Screen[Any]], list[str]]] = [
            ("ctrl+f", FindScreen, ["esc Close"]),
            ("f4", TeamScreen, ["esc Close"]),
            ("ctrl+q", ClaimsOnQuit, ["h Hand back", "k Keep", "esc Cancel"]),
        ]
        for key, dialog, offers in dialogs:
            await pilot.press(key)
            await wait_until(pilot, partial(lambda d: isinstance(app.screen, d), dialog))
            line = await footer_line(pilot)
            assert all(offer in line for offer in offers), line
            assert not any(console_key in line for console_key in ("Team", "Next", "Find")), line
            await pilot.press("escape")
            await wait_until(pilot, partial(lambda d: not isinstance(app.screen, d), dialog))


async def test_a_double_enter_closes_a_dialog_once(
    tmp_path: Path, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    """Both presses reached the dialog before it had gone: the second dismiss ran the caller's
    callback again and popped the screen beneath, and the app crashed with no screen left."""
    settings = load_settings(store={"db": tmp_path / "helpdesk.sqlite3"})
    app = create_app(settings, mode="agent", http=http, clock=clock, timings=False)
    async with app.run_test(size=SIZE) as pilot:
        first, second = waiting(other), waiting(other)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 2)
        await pilot.press("f6")
        await wait_until(pilot, lambda: isinstance(app.screen, NameDialog))
        app.screen.query_one("#name-input", Input).value = "Ana Lima"
        await pilot.pause()
        for _ in range(2):
            app.post_message(events.Key("enter", "\r"))
        await wait_until(pilot, lambda: other.conversation(first).agent == "Ana Lima")
        console = app.screen.query_one(AgentConsole)
        await wait_until(pilot, lambda: console.open_view is not None)
        assert other.conversation(second).agent is None  # One take, not two.
        await pilot.press("escape", "ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        await type_text(pilot, f"#{second}")
        await wait_until(
            pilot, lambda: isinstance(app.screen, FindScreen) and bool(app.screen.hits)
        )
        for _ in range(2):
            app.post_message(events.Key("enter", "\r"))
        await wait_until(pilot, lambda: console.open_view is not None
                         and console.open_view.conversation_id == second)  # fmt: skip
        await pilot.pause()
        assert app.return_code is None and len(app.screen_stack) == 1


# -- the team, finding and reopening --------------------------------------------------------------


async def test_the_team_view_lists_every_agents_claims_and_opens_one(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        mine, bens = waiting(other, "Mine"), waiting(other, "Ben's question")
        other.claim(bens, agent="ben")
        other.claim(mine, agent="ana")
        clock.advance(300)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        await pilot.press("f4")
        await wait_until(pilot, lambda: isinstance(app.screen, TeamScreen))
        team = app.screen
        assert isinstance(team, TeamScreen)
        await wait_until(pilot, lambda: len(team.claims) == 2)
        await pilot.pause()
        text = flat(screen_text(app))
        assert f"#{mine} claimed by ana for 5m · Mine" in text
        assert f"#{bens} claimed by ben for 5m · Ben's question" in text
        clock.advance(120)  # With nothing changed, the times go on: they stood at 5m.
        await wait_until(pilot, lambda: f"#{mine} claimed by ana for 7m · Mine" in
                         flat(screen_text(app)))  # fmt: skip
        other.release(bens, agent="ben")
        await wait_until(pilot, lambda: len(team.claims) == 1)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen.query_one(AgentConsole).open_view is not None)
        assert app.screen.query_one(ConversationView).conversation_id == mine


async def test_find_a_resolved_conversation_and_reopen_it(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        old = waiting(other, "My HELMET strap broke")
        other.claim(old, agent="ben")
        other.resolve(old, agent="ben")
        waiting(other, "Something else entirely")
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        await type_text(pilot, "helmet")
        find = app.screen
        assert isinstance(find, FindScreen)
        await wait_until(pilot, lambda: [h.conversation_id for h in find.hits] == [old])
        assert f"#{old} resolved by ben" in flat(screen_text(app))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen.query_one(AgentConsole).open_view is not None)
        view = app.screen.query_one(ConversationView)
        await wait_until(pilot, lambda: footer_offers(app, "reopen"))
        assert "Reopen it (Ctrl+L) to follow up" in view_text(app)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: view.is_mine)
        assert (other.conversation(old).state, other.conversation(old).agent) == (
            State.CLAIMED, "ana",
        )  # fmt: skip
        await type_into(pilot, "#reply", "Did the new strap arrive?")
        assert other.messages(old)[-1].text == "Did the new strap arrive?"


async def test_two_agents_reopening_at_once_the_second_is_told_who_was_first(
    make_app: MakeApp, other: DeskService
) -> None:
    """The second read "It changed meanwhile: it is no longer resolved."; a claim race says who
    won, and so does this one now."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        old = waiting(other)
        other.claim(old, agent="ben")
        other.resolve(old, agent="ben")
        view = await app.open_conversation(old)
        await wait_until(pilot, lambda: footer_offers(app, "reopen"))
        other.reopen(old, agent="ben")  # Ben's Ctrl+L lands first; ana's is on its way.
        await view.action_reopen()
        hint = view.query_one("#reply-hint")
        await wait_until(pilot, lambda: view._why is not None)
        assert flat(screen_text(app, hint)) == "ben reopened it first."
        assert other.conversation(old).agent == "ben"


# -- internal notes -------------------------------------------------------------------------------


async def test_notes_show_to_agents_and_never_to_the_customer(
    make_app: MakeApp, other: DeskService
) -> None:
    secret = "Refund approved by [b]finance[/b]: do not promise a date"
    app = make_app("all")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q3)
        view = await app.open_conversation(1)
        await wait_until(pilot, lambda: footer_offers(app, "toggle_note"))
        await pilot.press("ctrl+n")  # Any agent, before claiming.
        reply = app.screen.query_one("#reply", Input)
        assert reply.has_focus and not reply.disabled and reply.has_class("-note")
        assert "Internal note: only agents see it." in view_text(app)
        await type_text(pilot, secret)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Note from ana, for agents only" in view_text(app))
        # Each row of the note after its bar, the rows it wraps to too.
        assert secret in flat(screen_text(app, view.query_one(Transcript)).replace("\n▌ ", "\n"))
        assert not view.is_mine and not reply.has_class("-note")  # Back to replying (unclaimed).
        [note] = [e for e in other.entries(1) if isinstance(e, ChatEvent)
                  and isinstance(e.event, Note)]  # fmt: skip
        assert note.event == Note(agent="ana", text=secret)

        chat = app.screen.query_one(ChatPanel)
        await wait_until(pilot, lambda: chat.conversation is not None
                         and chat.conversation.last_entry >= note.id)  # fmt: skip
        await pilot.pause()
        customer_side = flat(screen_text(app, chat))
        assert "finance" not in customer_side and "Note from" not in customer_side
        assert all("finance" not in b.text for b in chat.query(NoticeBubble))
        assert all("finance" not in b.message.text for b in chat.query(MessageBubble))
    # The customer-facing renderers: no sentence for a note, whatever the state.
    assert notice(note.event, reader="customer") is None
    assert all("finance" not in status_line(state, "ana") for state in State)


async def test_a_double_enter_sends_a_reply_once_and_a_note_never_to_the_customer(
    make_app: MakeApp, other: DeskService
) -> None:
    """A second Enter pressed before the first was handled carried the box's words again: a
    reply went twice, and a note, once sent, went again as a reply to the customer (the box was
    back in reply mode by then)."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation = waiting(other)
        view = await app.open_conversation(conversation)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: other.conversation(conversation).agent == "ana")
        box = view.reply_input

        async def double_enter(text: str) -> None:
            box.value = text
            await pilot.pause()
            app.post_message(events.Key("enter", "\r"))
            app.post_message(events.Key("enter", "\r"))

        await double_enter("It is in the basket.")
        await wait_until(pilot, lambda: "It is in the basket." in view_text(app))
        await pilot.press("enter")  # On the box the send emptied: no hint to type first.
        await pilot.press("ctrl+n")
        await double_enter("Internal: asked twice before.")

        def notes() -> list[ChatEvent]:
            return [e for e in other.entries(conversation) if isinstance(e, ChatEvent)
                    and isinstance(e.event, Note)]  # fmt: skip

        # Stored, not only still in the box: the box's own text satisfied a wait on the screen.
        await wait_until(pilot, lambda: bool(notes()))
        await wait_until(pilot, lambda: "Internal: asked twice before." in view_text(app))
        await pilot.pause()
        agent = [m.text for m in other.messages(conversation) if m.author is Author.AGENT]
        assert agent == ["It is in the basket."]
        assert len(notes()) == 1
        assert "Type a reply first." not in view_text(app)


async def test_a_note_and_a_reply_keep_their_own_drafts(
    make_app: MakeApp, other: DeskService
) -> None:
    """The box writes a reply or a note: a note left with Escape used to stay in the box as the
    reply's text, so the next Enter sent the agents' words to the customer."""
    conversation = waiting(other)
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: footer_offers(app, "claim"))
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: view.is_mine)
        reply = view.reply_input
        await type_text(pilot, "Hello, ")
        await pilot.press("ctrl+n")
        assert reply.value == ""  # The note starts empty; the reply waits.
        await type_text(pilot, "Customer is rude")
        await pilot.press("escape")  # Out of the note, unsent.
        assert reply.value == "Hello, " and not view.note_mode
        await type_text(pilot, "found it")
        await pilot.press("ctrl+n")
        assert reply.value == "Customer is rude"  # The note's draft, back.
        await pilot.press("enter")  # The note is added, and the reply comes back.
        await wait_until(pilot, lambda: not view.note_mode)
        assert reply.value == "Hello, found it"
        await pilot.press("enter")
        await wait_until(pilot, lambda: other.messages(conversation)[-1].text == "Hello, found it")
        customer_sees = [m.text for m in other.messages(conversation)]
        assert not any("rude" in text for text in customer_sees)


async def test_a_customer_reopening_the_chat_never_sees_notes(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = waiting(other)
    other.add_note(conversation, agent="ben", text="Customer is a VIP")
    app = make_app("chat", conversation_id=conversation)
    async with app.run_test(size=SIZE) as pilot:
        chat = app.screen.query_one(ChatPanel)
        # The panel takes the conversation before it mounts its messages: wait for them.
        await wait_until(pilot, lambda: chat.conversation is not None)
        await wait_until(pilot, lambda: "Where is my helmet?" in flat(screen_text(app)))
        assert "VIP" not in flat(screen_text(app))


# -- dialogs and toasts ---------------------------------------------------------------------------


async def test_dialogs_are_centred_and_toasts_clear_of_the_reply_box(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        conversation = waiting(other)
        other.claim(conversation, agent="ana")
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, ClaimsOnQuit))
        await pilot.pause()
        dialog = app.screen.query_one("#claims-dialog").region
        assert abs(dialog.center[0] - 40) <= 1 and abs(dialog.center[1] - 12) <= 2
        await pilot.press("escape")
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: view.is_mine)
        app.notify("Saved.")
        await wait_until(pilot, lambda: bool(app.screen.query("Toast")))
        await pilot.pause()
        [toast] = app.screen.query("Toast")
        reply = app.screen.query_one("#reply").region
        assert not toast.region.overlaps(reply)
        assert toast.region.y >= 1  # Under the header, not over the title.
        assert not toast.region.overlaps(app.screen.query_one("Footer").region)


async def test_the_empty_queue_line_shows_only_while_nobody_waits(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        empty = app.screen.query_one("#queue-empty")
        await wait_until(pilot, lambda: app.screen.query_one(QueueList).loaded.is_set())
        assert empty.display
        conversation = waiting(other)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        assert not empty.display
        # The screen shows it from the next repaint.
        await wait_until(pilot, lambda: "Nobody is waiting" not in screen_text(app))
        other.claim(conversation, agent="ben")
        await wait_until(pilot, lambda: len(queue_rows(app)) == 0)
        assert empty.display
        await wait_until(pilot, lambda: "Nobody is waiting" in screen_text(app))


async def test_with_nobody_waiting_the_consoles_keys_still_work(
    make_app: MakeApp, other: DeskService
) -> None:
    """The queue's table is hidden while it is empty, and it held the focus the console's keys
    need: an agent at a quiet moment could not press Ctrl+F to find yesterday's conversation."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        empty = app.screen.query_one("#queue-empty")
        await wait_until(pilot, lambda: app.screen.query_one(QueueList).loaded.is_set())
        await wait_until(pilot, lambda: app.focused is empty)
        await wait_until(pilot, lambda: all(footer_offers(app, a) for a in ("find", "team")))
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.focused is empty)
        await type_text(pilot, "#1")  # Typing searches, as on a queue with rows.
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        assert app.screen.query_one("#find-input", Input).value == "#1"
        await pilot.press("escape")
        # A row comes: the focus moves to it; it leaves: back to the line, keys and all.
        conversation = waiting(other)
        await wait_until(pilot, lambda: app.focused is app.screen.query_one(QueueTable))
        other.claim(conversation, agent="ben")
        await wait_until(pilot, lambda: app.focused is empty)
        await pilot.press("f4")
        await wait_until(pilot, lambda: isinstance(app.screen, TeamScreen))
        await pilot.press("escape")
        # Back from a conversation opened meanwhile, the focus is on the line, not the hidden table.
        await app.open_conversation(conversation)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.focused is empty)


async def test_f6_takes_the_longest_waiting_conversation(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    """An agent working the queue in order presses F6 instead of picking: it claims the one that
    has waited longest and opens it with the reply box ready, passing over one a colleague took
    meanwhile; from a conversation it takes the next too; with nobody waiting it says so."""
    oldest = waiting(other, "Oldest question")
    clock.advance(60)
    taken = waiting(other, "Taken by ben")
    clock.advance(60)
    newest = waiting(other, "Newest question")
    app = make_app("agent")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_until(pilot, lambda: len(queue_rows(app)) == 3)
        await wait_until(pilot, lambda: "f6 Next" in footer(app))  # Drawn a frame later.
        await pilot.press("f6")
        console = app.screen.query_one(AgentConsole)
        await wait_until(pilot, lambda: console.open_view is not None)
        view = app.screen.query_one(ConversationView)
        assert view.conversation_id == oldest
        assert other.conversation(oldest).agent == "ana"
        await wait_until(pilot, lambda: "Oldest question" in view_text(app))
        await wait_until(pilot, lambda: app.screen.focused is view.reply_input)
        await type_text(pilot, "Hello")  # Straight into the reply box.
        await pilot.press("enter")
        await wait_until(pilot, lambda: other.messages(oldest)[-1].text == "Hello")
        other.claim(taken, agent="ben")
        await pilot.press("f6")  # From the conversation: the next one, ben's passed over.
        await wait_until(pilot, lambda: view.conversation_id == newest)
        assert other.conversation(newest).agent == "ana"
        assert other.conversation(taken).agent == "ben"
        await pilot.press("f6")
        await wait_until(pilot, lambda: "Nobody is waiting." in flat(screen_text(app)))
        assert view.conversation_id == newest  # Still where the agent was.


async def test_f6_asks_for_the_name_first_then_takes(
    tmp_path: Path, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    """As a first claim does: an agent with no name yet is asked, and the take goes on under it."""
    settings = load_settings(store={"db": tmp_path / "helpdesk.sqlite3"})
    app = create_app(settings, mode="agent", http=http, clock=clock, timings=False)
    async with app.run_test(size=SIZE) as pilot:
        conversation = waiting(other)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        await pilot.press("f6")
        await wait_until(pilot, lambda: isinstance(app.screen, NameDialog))
        line = await footer_line(pilot)  # The dialog's keys, not the console's beneath it.
        assert "esc Cancel" in line and "Next" not in line, line
        app.screen.query_one("#name-input", Input).value = "Ana Lima"
        await pilot.press("enter")
        await wait_until(pilot, lambda: other.conversation(conversation).agent == "Ana Lima")
        console = app.screen.query_one(AgentConsole)
        await wait_until(pilot, lambda: console.open_view is not None)
        assert app.screen.query_one(ConversationView).conversation_id == conversation


async def test_a_half_written_reply_waits_for_the_conversation_to_be_opened_again(
    make_app: MakeApp, other: DeskService
) -> None:
    """Escape to the queue and back lost a half-written reply (and note) without asking."""
    first, second = waiting(other), waiting(other, "Is the app down?")
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(first)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: view.is_mine and view.reply_input.has_focus)
        await type_text(pilot, "Half a reply")
        await pilot.press("escape")
        console = app.screen.query_one(AgentConsole)
        await wait_until(pilot, lambda: console.open_view is None)
        assert (await app.open_conversation(second)).reply_input.value == ""  # Not another's.
        await pilot.press("escape")
        await wait_until(pilot, lambda: console.open_view is None)
        again = await app.open_conversation(first)
        assert again.reply_input.value == "Half a reply"
        await wait_until(pilot, lambda: not again.reply_input.disabled)
        again.reply_input.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: other.messages(first)[-1].text == "Half a reply")
