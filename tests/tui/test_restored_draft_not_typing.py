"""A customer's chat opened again with the words they left unsent put them back in the box, and
that counted as typing: the agent holding the conversation saw "The customer is typing…" for 6 s
though nobody typed. A restored draft now says nothing; keys typed after it do."""

from __future__ import annotations

from pathlib import Path

from chatbot.desk.models import Author
from chatbot.desk.service import DeskService
from chatbot.drafts import drafts_for, save_draft
from tests.tui.conftest import MakeApp
from tests.tui.helpers import type_text, wait_until
from tests.tui.resume_helpers import SIZE, reopened_with, state

__all__ = ["state"]  # A fixture.

WORDS = "and the charger too"


async def test_a_restored_draft_sends_no_typing_signal_and_keys_after_it_do(
    make_app: MakeApp, other: DeskService, db_path: Path, state: Path
) -> None:
    conversation = other.start_conversation().id
    other.talk_to_person(conversation)
    other.ask(conversation, "My bike's lock is stuck")
    other.claim(conversation, agent="ben")  # A person reads along: typing is told now.
    save_draft(drafts_for(str(db_path)), conversation, WORDS)  # Left unsent by the last run.
    app = make_app("chat", conversation_id=conversation, keep_chat="helpdesk chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await reopened_with(pilot, app, WORDS)
        assert other.typing(conversation) == {}  # Put back, not typed.
        panel.question.focus()
        await type_text(pilot, "!")
        await wait_until(pilot, lambda: Author.CUSTOMER in other.typing(conversation))
