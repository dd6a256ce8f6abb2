"""The agents' conversation search (Ctrl+F in the console: `ConversationStore.search`) finds words
of internal notes too, as only agents ever search, and its hit says it was in a note; on every
backend."""

from __future__ import annotations

from chatbot.desk.models import State
from chatbot.store.interface import ConversationStore
from tests.store.conftest import FakeClock
from tests.store.helpers import ask, claimed


def test_search_finds_the_words_of_a_note_and_says_it_was_one(
    store: ConversationStore, clock: FakeClock
) -> None:
    noted = claimed(store)
    note = store.add_note(noted, agent="bo", text="Repeat complainer: third refund this month")
    clock.advance(1)
    other = ask(store, "Where is my helmet?").conversation_id
    [hit] = store.search("repeat complainer")
    assert (hit.conversation_id, hit.entry_id) == (noted, note.id)
    assert (hit.text, hit.note_by) == ("Repeat complainer: third refund this month", "bo")
    assert (hit.state, hit.agent) == (State.CLAIMED, "ana")
    assert [h.conversation_id for h in store.search("REPEAT COMPLAINER")] == [noted]
    assert [h.conversation_id for h in store.search("complainer", state=State.CLAIMED)] == [noted]
    assert store.search("complainer", state=State.BOT) == []
    # Literally, as for messages: no wildcard, and nothing of the note's stored form.
    assert store.search("repeat_complainer") == [] and store.search("third%") == []
    assert store.search('"agent"') == [] and store.search("type") == []
    # Messages are found as before, a note's conversation among them, newest first.
    clock.advance(1)
    store.reply(noted, agent="ana", expect=State.CLAIMED, text="Your helmet is on its way")
    assert [h.conversation_id for h in store.search("helmet")] == [noted, other]
    [message_hit] = [h for h in store.search("helmet") if h.conversation_id == noted]
    assert (message_hit.text, message_hit.note_by) == ("Your helmet is on its way", None)


def test_the_newest_match_stands_for_its_conversation_note_or_message(
    store: ConversationStore,
) -> None:
    conversation = claimed(store)
    store.reply(conversation, agent="ana", expect=State.CLAIMED, text="Refund sent")
    store.add_note(conversation, agent="ana", text="refund approved by bo")
    [hit] = store.search("refund")
    assert (hit.text, hit.note_by) == ("refund approved by bo", "ana")
    _, newer = store.add_customer_message(
        conversation, "Refund arrived, thanks", expect=State.CLAIMED, to=State.CLAIMED,
        pending=False,
    )  # fmt: skip
    [hit] = store.search("refund")
    assert (hit.entry_id, hit.text, hit.note_by) == (newer.id, "Refund arrived, thanks", None)


def test_a_note_is_found_ignoring_case_beyond_ascii(store: ConversationStore) -> None:
    conversation = claimed(store)
    store.add_note(conversation, agent="ana", text="Kunde ÄRGERT sich über die Straße")
    assert [h.conversation_id for h in store.search("ärgert")] == [conversation]
    assert [h.conversation_id for h in store.search("straße")] == [conversation]
    assert [h.conversation_id for h in store.search("Über")] == [conversation]


def test_a_note_hit_is_said_as_a_note_in_the_agents_language() -> None:
    """The store wrote "Note from bo: …" into the hit's text, in English in a Chinese console;
    the console says it, as the transcript heads a note."""
    from datetime import UTC, datetime

    from chatbot.desk.models import SearchHit
    from chatbot.tui.screens.find import hit_parts

    hit = SearchHit(conversation_id=7, state=State.CLAIMED, agent="ana",
                    updated_at=datetime(2026, 1, 5, tzinfo=UTC), entry_id=3,
                    text="repeat complainer", note_by="bo")  # fmt: skip
    assert hit_parts(hit)[1].plain == "Note from bo, for agents only: repeat complainer"
    chinese = hit_parts(hit, locale="zh")[1].plain
    assert "Note from" not in chinese and chinese.endswith(": repeat complainer")
    message = hit.model_copy(update={"note_by": None})
    assert hit_parts(message)[1].plain == "repeat complainer"
