"""Two tabs of one agent, one kept reply.

A tester had conversation #1 claimed in one tab, typed a reply there and did not send it. A second
tab of the same agent opened #1 with that reply already in its box, saying nothing of where it
came from: what they typed was glued on, and sent. The first tab still showed the reply, and its
Enter sent it to the customer a second time.

Now the second tab says the reply is back, and once it is sent the first takes it out of its box,
with a line saying why; what was typed there after it stays. Two apps on one database, as two
browser sessions of the account are (one drafts folder)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from chatbot import drafts
from chatbot.config import Settings
from chatbot.desk.models import Author
from chatbot.desk.service import DeskService
from chatbot.drafts import drafts_for
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.widgets import conversation_view
from tests.tui.conftest import SIZE, FrozenClock, MakeApp
from tests.tui.helpers import flat, screen_text, type_text, wait_until

FIRST = "typed in tab one before tab two opened"
SECOND = "sent from tab two"
BACK = "Your unsent reply from before is back."


@pytest.fixture
def kept(tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Both apps keep drafts in one folder, as two browser sessions of one account do; saved a
    moment after each key rather than a second."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    folder = drafts_for(str(db_path))
    monkeypatch.setattr(drafts, "agent_drafts", folder)
    monkeypatch.setattr(conversation_view, "SAVE_DRAFTS_S", 0.05)
    return folder


@pytest.fixture
def second_tab(settings: Settings, http: httpx.AsyncClient, clock: FrozenClock) -> HelpDeskApp:
    return create_app(settings, mode="agent", http=http, clock=clock, agent="ana", timings=False)


def claimed(desk: DeskService) -> int:
    conversation = desk.start_conversation().id
    desk.talk_to_person(conversation)
    desk.ask(conversation, "Where is my refund?")
    desk.claim(conversation, agent="ana")
    return conversation


def replies(desk: DeskService, conversation: int) -> list[str]:
    return [m.text for m in desk.messages(conversation) if m.author is Author.AGENT]


def hint(app: HelpDeskApp) -> str:
    """The line above the reply box, as shown."""
    return flat(screen_text(app, app.screen.query_one("#reply-hint")))


def on_disk(folder: Path) -> list[str]:
    return [f.read_text() for f in folder.glob("*.reply.txt")]


async def test_a_reply_sent_from_a_second_tab_is_not_sent_again_from_the_first(
    make_app: MakeApp, second_tab: HelpDeskApp, other: DeskService, kept: Path
) -> None:
    conversation = claimed(other)
    first_tab = make_app("agent")
    async with first_tab.run_test(size=SIZE) as one:
        view_one = await first_tab.open_conversation(conversation)
        await wait_until(one, lambda: view_one.is_mine)
        await type_text(one, FIRST)
        await wait_until(one, lambda: on_disk(kept) == [FIRST])
        assert BACK not in hint(first_tab)  # Typed here: nothing came back.

        async with second_tab.run_test(size=SIZE) as two:
            view_two = await second_tab.open_conversation(conversation)
            await wait_until(two, lambda: view_two.is_mine)
            assert view_two.reply_input.value == FIRST
            # Said above the box, and still while more is typed after it.
            await wait_until(two, lambda: BACK in hint(second_tab))
            await type_text(two, SECOND)
            assert BACK in hint(second_tab)
            await two.press("enter")
            await wait_until(two, lambda: replies(other, conversation) == [FIRST + SECOND])
            await wait_until(two, lambda: view_two.reply_input.value == "")
            assert BACK not in hint(second_tab)

        # The first tab, following the desk, takes the words sent out of its box, and says so.
        await wait_until(one, lambda: view_one.reply_input.value == "")
        said = f"You sent “{FIRST}” from another tab or window: it is no longer in this box."
        await wait_until(one, lambda: said in hint(first_tab))
        await one.press("enter")  # Nothing left to send twice.
        await wait_until(one, lambda: "Type a reply first." in hint(first_tab))
        await one.pause()
    assert replies(other, conversation) == [FIRST + SECOND]
    assert on_disk(kept) == []  # Sent: not back in the next box either.


async def test_words_typed_after_the_kept_reply_stay_in_the_first_tab(
    make_app: MakeApp, second_tab: HelpDeskApp, other: DeskService, kept: Path
) -> None:
    conversation = claimed(other)
    first_tab = make_app("agent")
    async with first_tab.run_test(size=SIZE) as one:
        view_one = await first_tab.open_conversation(conversation)
        await wait_until(one, lambda: view_one.is_mine)
        await type_text(one, FIRST)
        await wait_until(one, lambda: on_disk(kept) == [FIRST])
        async with second_tab.run_test(size=SIZE) as two:
            view_two = await second_tab.open_conversation(conversation)
            await wait_until(two, lambda: view_two.reply_input.value == FIRST)
            # Typed on in the first tab (and kept) before the second sends: not sent, and not
            # lost.
            await type_text(one, " and more")
            await wait_until(one, lambda: on_disk(kept) == [FIRST + " and more"])
            await two.press("enter")
            await wait_until(two, lambda: replies(other, conversation) == [FIRST])
        await wait_until(one, lambda: view_one.reply_input.value == "and more")
        await wait_until(one, lambda: on_disk(kept) == ["and more"])  # Kept in place of both.
    assert replies(other, conversation) == [FIRST]


async def test_a_reply_put_aside_in_the_first_tab_is_not_back_once_sent_from_the_second(
    make_app: MakeApp, second_tab: HelpDeskApp, other: DeskService, kept: Path
) -> None:
    """The first tab back on the queue keeps the reply in memory for when #1 opens again: it came
    back there, sent already."""
    conversation = claimed(other)
    first_tab = make_app("agent")
    async with first_tab.run_test(size=SIZE) as one:
        view_one = await first_tab.open_conversation(conversation)
        await wait_until(one, lambda: view_one.is_mine)
        await type_text(one, FIRST)
        await one.press("escape")
        await wait_until(one, lambda: view_one.closed)
        await first_tab.open_conversation(other_one := claimed(other))  # #1 kept aside.
        await wait_until(one, lambda: view_one.conversation_id == other_one)
        assert on_disk(kept) == [FIRST]
        async with second_tab.run_test(size=SIZE) as two:
            view_two = await second_tab.open_conversation(conversation)
            await wait_until(two, lambda: view_two.reply_input.value == FIRST)
            await two.press("enter")
            await wait_until(two, lambda: replies(other, conversation) == [FIRST])
        await first_tab.open_conversation(conversation)
        await wait_until(one, lambda: view_one.conversation_id == conversation)
        await wait_until(one, lambda: "from another tab or window" in hint(first_tab))
        assert view_one.reply_input.value == ""
        await one.press("enter")
        await one.pause()
    assert replies(other, conversation) == [FIRST]
    assert on_disk(kept) == []


async def test_a_reply_sent_from_this_tab_is_not_taken_for_another_tabs(
    make_app: MakeApp, other: DeskService, kept: Path
) -> None:
    """The view's own reply, read back as it goes, leaves what was typed after its Enter, and says
    nothing of another tab."""
    conversation = claimed(other)
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: view.is_mine)
        await type_text(pilot, FIRST)
        await wait_until(pilot, lambda: on_disk(kept) == [FIRST])
        await pilot.press("enter")
        await type_text(pilot, "then this")
        await wait_until(pilot, lambda: replies(other, conversation) == [FIRST])
        await wait_until(pilot, lambda: on_disk(kept) == ["then this"])
        assert view.reply_input.value == "then this"
        assert "another tab" not in hint(app)
