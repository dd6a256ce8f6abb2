"""The store on real SQLite files: schema, the conversation states, decisions, the queue, gaps."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from chatbot.engine.models import Reason
from chatbot.knowledge_base.models import Passage
from chatbot.store import (
    ASKED_NOTICE,
    ESCALATED_NOTICE,
    Author,
    ConflictError,
    ConversationNotFound,
    Feedback,
    State,
    Store,
    StoreError,
)
from chatbot.store.schema import MIGRATIONS
from tests.store.conftest import START, FakeClock, answered, escalated


def ask(store: Store, question: str) -> tuple[int, int]:
    conversation = store.start_conversation()
    message = store.add_customer_message(conversation.id, question)
    return conversation.id, message.id


# -- the file -------------------------------------------------------------------------------------


def test_new_database_is_wal_and_fully_migrated(store: Store, db_path: Path) -> None:
    assert store.schema_version == len(MIGRATIONS)
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master")}
    assert {"conversations", "messages", "decisions", "escalations"} <= tables


def test_reopening_keeps_data_and_does_not_migrate_again(db_path: Path, clock: FakeClock) -> None:
    with Store.open(db_path, clock=clock) as first:
        conversation_id, _ = ask(first, "hello")
    with Store.open(db_path, clock=clock) as second:
        assert second.schema_version == len(MIGRATIONS)
        assert [m.text for m in second.messages(conversation_id)] == ["hello"]


def test_creates_missing_folders(tmp_path: Path) -> None:
    with Store.open(tmp_path / "a" / "b" / "x.db") as store:
        assert store.path.exists()


def test_a_newer_schema_is_refused_with_one_line(db_path: Path) -> None:
    with sqlite3.connect(db_path) as raw:
        raw.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    with pytest.raises(StoreError, match="newer than this helpdesk understands"):
        Store.open(db_path)


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("this is not a database, just some text that is long enough" * 20)
    with pytest.raises(StoreError, match="cannot use database"):
        Store.open(path)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        Store.open(tmp_path)


def test_a_path_under_a_file_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StoreError, match="cannot create folder"):
        Store.open(blocker / "sub" / "x.db")


# -- the customer's side --------------------------------------------------------------------------


def test_customer_message_is_committed_before_any_decision(store: Store, db_path: Path) -> None:
    conversation_id, _ = ask(store, "I was charged twice")
    # Another connection sees it at once: nothing after this point can lose it.
    with Store.open(db_path) as other:
        assert [m.text for m in other.messages(conversation_id)] == ["I was charged twice"]
        assert other.decisions(conversation_id) == []


def test_an_answer_becomes_a_bot_message_quoting_the_passage(store: Store) -> None:
    conversation_id, message_id = ask(store, "charged twice?")
    stored = store.record_decision(conversation_id, message_id=message_id, decision=answered())
    bot = store.messages(conversation_id)[-1]
    assert bot.author is Author.BOT
    assert bot.passage_id == "card-charged-twice"
    assert bot.source == "Charged twice for one ride (card-charged-twice)"
    assert bot.decision_id == stored.id
    assert store.conversation(conversation_id).state is State.BOT
    assert store.queue() == []


def test_the_decision_is_stored_whole(store: Store) -> None:
    conversation_id, message_id = ask(store, "charged twice?")
    decision = answered()
    store.record_decision(conversation_id, message_id=message_id, decision=decision)
    [stored] = store.decisions(conversation_id)
    assert stored.decision == decision
    assert stored.message_id == message_id
    assert stored.decision.candidates[2].error_kind == "replay-miss"
    assert stored.decision.latency_ms == 12.5


def test_an_escalation_enters_the_queue_with_reason_and_top_score(
    store: Store, clock: FakeClock
) -> None:
    conversation_id, message_id = ask(store, "No free docks, will I pay a late fee?")
    clock.advance(3)
    store.record_decision(conversation_id, message_id=message_id, decision=escalated())
    conversation = store.conversation(conversation_id)
    assert conversation.state is State.WAITING
    assert conversation.reason is Reason.LOW_SCORE
    [item] = store.queue()
    assert item.conversation_id == conversation_id
    assert item.first_question == "No free docks, will I pay a late fee?"
    assert item.reason is Reason.LOW_SCORE
    assert item.top_probability == pytest.approx(0.644)
    assert item.waiting_since.timestamp() == START.timestamp() + 3
    assert store.messages(conversation_id)[-1].text == ESCALATED_NOTICE


def test_talk_to_a_person_escalates_once(store: Store) -> None:
    conversation = store.start_conversation()
    assert store.escalate(conversation.id) is True
    assert store.escalate(conversation.id) is False
    assert store.conversation(conversation.id).reason is Reason.CUSTOMER_ASKED
    assert [m.text for m in store.messages(conversation.id)] == [ASKED_NOTICE]


def test_not_helpful_escalates_with_customer_asked(store: Store) -> None:
    conversation_id, message_id = ask(store, "charged twice?")
    store.record_decision(conversation_id, message_id=message_id, decision=answered())
    bot = store.messages(conversation_id)[-1]
    conversation = store.set_feedback(bot.id, Feedback.NOT_HELPFUL)
    assert conversation.state is State.WAITING
    assert conversation.reason is Reason.CUSTOMER_ASKED
    assert conversation.top_probability == pytest.approx(0.899)
    assert store.messages(conversation_id)[1].feedback is Feedback.NOT_HELPFUL


def test_helpful_only_records_the_feedback(store: Store) -> None:
    conversation_id, message_id = ask(store, "charged twice?")
    store.record_decision(conversation_id, message_id=message_id, decision=answered())
    bot = store.messages(conversation_id)[-1]
    assert store.set_feedback(bot.id, Feedback.HELPFUL).state is State.BOT
    assert store.messages(conversation_id)[-1].feedback is Feedback.HELPFUL


def test_feedback_on_a_customer_message_is_refused(store: Store) -> None:
    _, message_id = ask(store, "hello")
    with pytest.raises(StoreError, match="not a bot answer"):
        store.set_feedback(message_id, Feedback.HELPFUL)


def test_bot_stays_silent_once_a_person_has_the_conversation(store: Store) -> None:
    conversation_id, message_id = ask(store, "charged twice?")
    store.escalate(conversation_id)  # The customer asked for a person while the bot was judging.
    store.record_decision(conversation_id, message_id=message_id, decision=answered())
    assert [m.author for m in store.messages(conversation_id)] == [Author.CUSTOMER, Author.SYSTEM]
    assert len(store.decisions(conversation_id)) == 1  # Kept for the agent all the same.
    assert store.conversation(conversation_id).state is State.WAITING


def test_unknown_conversation(store: Store) -> None:
    with pytest.raises(ConversationNotFound):
        store.add_customer_message(42, "hi")


# -- the agent's side -----------------------------------------------------------------------------


def waiting(store: Store) -> int:
    conversation_id, message_id = ask(store, "No free docks, will I pay a late fee?")
    store.record_decision(conversation_id, message_id=message_id, decision=escalated())
    return conversation_id


def test_claim_reply_resolve(store: Store) -> None:
    conversation_id = waiting(store)
    result = store.claim(conversation_id, agent="ana")
    assert result.won and result.conversation.state is State.CLAIMED
    assert result.conversation.agent == "ana"
    [item] = store.queue(agent="ana")
    assert item.state is State.CLAIMED and item.agent == "ana"
    assert store.queue() == [] and store.queue(agent="bo") == []
    reply = store.reply(conversation_id, agent="ana", text="No fee: we waive it.")
    assert reply.author is Author.AGENT and reply.agent == "ana"
    resolved = store.resolve(conversation_id, agent="ana")
    assert resolved.state is State.RESOLVED
    assert store.queue() == []


def test_the_queue_lists_waiting_then_the_agents_own_claims(store: Store, clock: FakeClock) -> None:
    first, second, third, fourth = (waiting(store) for _ in range(4))
    clock.advance(1)
    store.claim(first, agent="bo")
    store.claim(third, agent="ana")
    assert [item.conversation_id for item in store.queue()] == [second, fourth]
    assert [(item.conversation_id, item.state) for item in store.queue(agent="ana")] == [
        (second, State.WAITING),
        (fourth, State.WAITING),
        (third, State.CLAIMED),
    ]
    [mine] = store.queue(agent="ana")[2:]
    assert mine.agent == "ana" and mine.first_question == "No free docks, will I pay a late fee?"


def test_second_claim_loses(store: Store) -> None:
    conversation_id = waiting(store)
    assert store.claim(conversation_id, agent="ana").won
    second = store.claim(conversation_id, agent="ben")
    assert not second.won
    assert second.conversation.agent == "ana"


def test_only_the_owner_replies_resolves_or_hands_back(store: Store) -> None:
    conversation_id = waiting(store)
    with pytest.raises(ConflictError, match="claim it first"):
        store.reply(conversation_id, agent="ana", text="hi")
    store.claim(conversation_id, agent="ana")
    with pytest.raises(ConflictError, match="claimed by ana"):
        store.reply(conversation_id, agent="ben", text="hi")
    with pytest.raises(ConflictError):
        store.resolve(conversation_id, agent="ben")
    with pytest.raises(ConflictError):
        store.hand_back(conversation_id, agent="ben")


def test_sending_a_passage_records_its_source(store: Store) -> None:
    conversation_id = waiting(store)
    store.claim(conversation_id, agent="ana")
    passage = Passage(id="late-return", title="Late returns", text="If the station is full…")
    message = store.reply(conversation_id, agent="ana", text=passage.text, passage=passage)
    assert message.source == "Late returns (late-return)"


def test_hand_back_gives_the_bot_the_next_question(store: Store) -> None:
    conversation_id = waiting(store)
    store.claim(conversation_id, agent="ana")
    conversation = store.hand_back(conversation_id, agent="ana")
    assert conversation.state is State.BOT and conversation.agent is None
    message = store.add_customer_message(conversation_id, "charged twice?")
    store.record_decision(conversation_id, message_id=message.id, decision=answered())
    assert store.messages(conversation_id)[-1].author is Author.BOT


def test_writing_after_resolve_goes_back_to_the_bot(store: Store) -> None:
    conversation_id = waiting(store)
    store.claim(conversation_id, agent="ana")
    store.resolve(conversation_id, agent="ana")
    store.add_customer_message(conversation_id, "one more thing")
    assert store.conversation(conversation_id).state is State.BOT


def test_messages_after_id_returns_only_new_ones(store: Store) -> None:
    conversation_id, first = ask(store, "one")
    store.add_customer_message(conversation_id, "two")
    assert [m.text for m in store.messages(conversation_id, after_id=first)] == ["two"]


# -- polling --------------------------------------------------------------------------------------


def test_version_moves_on_our_commits_and_on_other_connections(store: Store, db_path: Path) -> None:
    before = store.version()
    assert store.version() == before  # Reading changes nothing.
    conversation = store.start_conversation()
    after_own = store.version()
    assert after_own > before
    with Store.open(db_path) as other:
        other.add_customer_message(conversation.id, "from another process")
    assert store.version() > after_own


# -- content gaps ---------------------------------------------------------------------------------


def test_content_gaps_newest_first_with_the_agents_reply(store: Store, clock: FakeClock) -> None:
    first = waiting(store)
    store.claim(first, agent="ana")
    store.reply(first, agent="ana", text="We waive the fee when the station is full.")
    clock.advance(60)
    second, message_id = ask(store, "charged twice?")
    store.record_decision(second, message_id=message_id, decision=answered())
    store.set_feedback(store.messages(second)[-1].id, Feedback.NOT_HELPFUL)

    newest, oldest = store.content_gaps()
    assert (newest.conversation_id, newest.reason) == (second, Reason.CUSTOMER_ASKED)
    assert newest.question == "I was charged twice, can I get my money back?"
    assert newest.agent_reply is None
    assert (oldest.conversation_id, oldest.reason) == (first, Reason.LOW_SCORE)
    assert oldest.top_probability == pytest.approx(0.644)
    assert oldest.agent_reply == "We waive the fee when the station is full."
    assert not oldest.handled

    store.mark_gap_handled(oldest.id, passage_id="station-full-late-fee")
    [open_gap] = store.content_gaps(include_handled=False)
    assert open_gap.id == newest.id
    handled = store.content_gaps()[1]
    assert handled.handled and handled.passage_id == "station-full-late-fee"


def test_marking_an_unknown_gap(store: Store) -> None:
    with pytest.raises(StoreError, match="not found"):
        store.mark_gap_handled(99, passage_id="x")


def test_talk_to_a_person_without_a_question_is_not_a_gap(store: Store) -> None:
    conversation = store.start_conversation()
    store.escalate(conversation.id)
    assert store.content_gaps() == []


def test_a_long_conversation_reads_quickly(store: Store) -> None:
    conversation_id, _ = ask(store, "first")
    for number in range(999):
        store.add_customer_message(conversation_id, f"message {number}")
    messages = store.messages(conversation_id)
    assert len(messages) == 1000
    assert messages[-1].text == "message 998"


def test_a_failed_write_rolls_back_and_names_the_file(store: Store, db_path: Path) -> None:
    conversation = store.start_conversation()
    with sqlite3.connect(db_path) as raw:  # Sabotage: a trigger that refuses customer messages.
        raw.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON messages"
            " BEGIN SELECT RAISE(ABORT, 'refused by trigger'); END"
        )
    with pytest.raises(StoreError, match="cannot write: refused by trigger"):
        store.add_customer_message(conversation.id, "hello")
    assert store.messages(conversation.id) == []
    assert store.start_conversation().id == 2  # Still usable: no transaction left open.
