"""A tester's findings as a customer waiting for a person: Ctrl+B pressed by mistake, then "my bike
has a flat tyre" and Enter typed on: the new-chat dialog took the `y` of "my" for "Start a new
chat", the waiting conversation was left and the words were lost. No letter answers the dialog
now: typing on it stays, and the words go on in the question box, in order. And `helpdesk chat`,
the customer's own app, offered them the knowledge-base editor (F2, and in the palette)."""

from __future__ import annotations

import pytest
from textual import events
from textual.pilot import Pilot

from chatbot.desk.models import Author, State
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp, Mode
from chatbot.tui.screens.editor import EditorScreen
from chatbot.tui.screens.new_chat_dialog import NewChatDialog
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.tui.conftest import MakeApp
from tests.tui.helpers import (
    ask,
    burst,
    chat_panel_ready,
    engine_ready,
    flat,
    focus_of,
    footer_current,
    footer_offers,
    screen_text,
    wait_until,
)

SIZE = (80, 24)
WORDS = "my bike has a flat tyre"


def customer_words(desk: DeskService, cid: int) -> list[str]:
    return [m.text for m in desk.messages(cid) if m.author is Author.CUSTOMER]


async def waiting_with_the_dialog_open(pilot: Pilot[None], other: DeskService) -> ChatPanel:
    """The customer asked for a person (the conversation waits), then pressed Ctrl+B: the
    new-chat dialog asks, its Stay button focused."""
    app = pilot.app
    assert isinstance(app, HelpDeskApp)
    panel = await chat_panel_ready(pilot)
    await ask(pilot, "Where is my bike?", wait=False)
    await pilot.press("ctrl+t")
    cid = panel.conversation_id
    assert cid is not None
    await wait_until(pilot, lambda: other.conversation(cid).state is State.WAITING)
    await wait_until(pilot, lambda: panel.conversation is not None
                     and panel.conversation.state is State.WAITING)  # fmt: skip
    await pilot.press("ctrl+b")
    await wait_until(pilot, lambda: isinstance(app.screen, NewChatDialog))
    # Its button once composed (a query a moment before found nothing, and raised).
    await wait_until(
        pilot, lambda: bool(stay := app.screen.query("#stay")) and focus_of(app) is stay.first()
    )
    return panel


async def test_words_typed_on_the_dialog_stay_and_go_to_the_waiting_conversation(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await waiting_with_the_dialog_open(pilot, other)
        cid = panel.conversation_id
        assert cid is not None
        await pilot.press(*WORDS)
        # The `y` of "my" started nothing: the dialog is gone as "stay", the words in the box.
        await wait_until(pilot, lambda: panel.question.value == WORDS)
        assert not isinstance(app.screen, NewChatDialog)
        assert panel.conversation_id == cid
        assert focus_of(app) is panel.question
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(customer_words(other, cid)) == 2)
        assert customer_words(other, cid) == ["Where is my bike?", WORDS]
        assert other.conversation(cid).state is State.WAITING
        assert panel.conversation_id == cid and panel.question.value == ""


async def test_a_burst_typed_on_the_dialog_lands_whole_and_in_order(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await waiting_with_the_dialog_open(pilot, other)
        cid = panel.conversation_id
        assert cid is not None
        # Every key queued before the first is handled (a quick typist, a slow link), Enter
        # too: once a character has answered "stay", the keys after it are the box's, and Enter
        # sends (it pressed the dialog's Stay button, and the words stayed unsent). The last
        # key, which Pilot sends and waits for, is one the box takes without a change.
        await burst(pilot, *WORDS, "enter", "end")
        await wait_until(pilot, lambda: len(customer_words(other, cid)) == 2)
        assert customer_words(other, cid) == ["Where is my bike?", WORDS]
        assert panel.conversation_id == cid
        assert not isinstance(app.screen, NewChatDialog)


@pytest.mark.parametrize("confirm", [("ctrl+b",), ("tab", "enter")])
async def test_only_a_deliberate_key_starts_the_new_chat(
    make_app: MakeApp, other: DeskService, confirm: tuple[str, ...]
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await waiting_with_the_dialog_open(pilot, other)
        cid = panel.conversation_id
        # The buttons and the footer name the keys that answer.
        shown = flat(screen_text(app))
        assert "Start a new chat (Ctrl+B)" in shown and "Stay here (Esc)" in shown
        await footer_current(pilot)
        assert footer_offers(app, "answer(True)") and footer_offers(app, "answer(False)")
        bottom = screen_text(app).splitlines()[-1]
        assert "^b New chat" in bottom and "esc Stay" in bottom
        # Enter, by habit, is the focused Stay.
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, NewChatDialog))
        assert panel.conversation_id == cid and panel.question.value == ""
        # A lone `y` or `n` is a letter typed, for the box.
        for letter in "yn":
            await pilot.press("ctrl+b")
            await wait_until(pilot, lambda: isinstance(app.screen, NewChatDialog))
            await pilot.press(letter)
            await wait_until(pilot, lambda: not isinstance(app.screen, NewChatDialog))
            assert panel.conversation_id == cid
        assert panel.question.value == "yn"
        # A paste on it too.
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: isinstance(app.screen, NewChatDialog))
        app.post_message(events.Paste(" flat tyre"))
        await wait_until(pilot, lambda: panel.question.value == "yn flat tyre")
        assert not isinstance(app.screen, NewChatDialog) and panel.conversation_id == cid
        # Ctrl+B again, or Enter on its button (reached by Tab), starts the new chat; the old
        # conversation stays in the queue.
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: isinstance(app.screen, NewChatDialog))
        await pilot.press(*confirm)
        await wait_until(pilot, lambda: panel.conversation_id is None)
        assert cid is not None and other.conversation(cid).state is State.WAITING
        assert customer_words(other, cid) == ["Where is my bike?"]


def palette_titles(app: HelpDeskApp) -> list[str]:
    return [command.title for command in app.get_system_commands(app.screen)]


async def test_the_customers_own_app_offers_no_editor(make_app: MakeApp) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await chat_panel_ready(pilot)
        await engine_ready(app)
        await footer_current(pilot)
        assert not app.check_action("edit_knowledge_base", ())
        assert "f2" not in screen_text(app).splitlines()[-1]
        assert "Knowledge base" not in palette_titles(app)
        assert "Analytics" not in palette_titles(app)  # As F5 was already.
        await pilot.press("f2")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not isinstance(app.screen, EditorScreen)


@pytest.mark.parametrize("mode", ["all", "agent"])
async def test_the_desk_and_the_agents_app_still_offer_the_editor(
    make_app: MakeApp, mode: Mode
) -> None:
    app = make_app(mode, bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await engine_ready(app)
        await footer_current(pilot)
        assert footer_offers(app, "edit_knowledge_base")
        assert "Knowledge base" in palette_titles(app)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
