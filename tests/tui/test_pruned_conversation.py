"""A customer's page left open on a conversation nobody wrote in, which the desk's housekeeping
then deleted as empty: the question typed there said "The help desk cannot be reached just now"
and asked to try again, for ever (the conversation was gone, not the desk). It now starts a new
conversation and is answered as any first question is."""

from __future__ import annotations

from chatbot.desk.service import DeskService
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.tui.conftest import SIZE, FrozenClock, MakeApp
from tests.tui.helpers import wait_until


async def test_a_question_on_a_pruned_empty_conversation_starts_a_new_one(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    page = other.start_conversation()  # What serve starts as a page opens.
    other.start_conversation()  # A later visitor's: the newest is never pruned.
    app = make_app("chat", bot=False, conversation_id=page.id)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.screen.query_one(ChatPanel)
        await wait_until(pilot, lambda: panel.question.has_focus)
        clock.advance(2 * 24 * 3600)  # Left open, unkept (serve down meanwhile, say).
        assert other.prune_empty_conversations() == [page.id]

        await pilot.press(*"Where is my helmet?", "enter")
        await wait_until(pilot, lambda: panel.conversation_id not in (None, page.id))
        assert panel.conversation_id is not None
        assert [m.text for m in other.messages(panel.conversation_id)] == ["Where is my helmet?"]
        assert not panel.error.display
        assert panel.question.value == ""
