"""A content gap is a question, however often and in whatever wording it was asked, on every
backend: the editor's list (`content_gaps`), the figures (`stats`) and a passage written from the
list (`mark_gap_handled`) agree on it.

What a tester found: one customer message escalated twice (an agent handed the conversation
back and the bot escalated it again) was two rows in the editor, one in `helpdesk stats`, and a
passage written from the newer row left the older one listed and counted; one question asked in
two conversations in other case and spacing was one gap, asked twice, in the figures and two rows
in the editor, and a passage written from one row left the other in both."""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path

import pytest

from chatbot.desk.service import DeskService
from chatbot.engine.models import Decision, Reason
from chatbot.store.postgres_schema import MIGRATIONS as POSTGRES_MIGRATIONS
from chatbot.store.schema import MIGRATIONS as SQLITE_MIGRATIONS
from chatbot.store.sqlite import SQLiteStore
from chatbot.store.stats_sql import question_key
from tests.backends import Backend, postgres_server
from tests.store.conftest import START, FakeClock
from tests.store.helpers import raw_sql

WORKER = "worker-1"
PLUGH = "xyzzy qwerty plugh"
GIFT = "do you sell gift cards"
GIFT_AGAIN = "  Do You Sell Gift Cards "
GIFT_PUNCTUATED = "Do you sell gift-cards?!"
HELMET = "Do I need a helmet?"


def no_passages(question: str) -> Decision:
    return Decision(question=question, answer=None, reason=Reason.NO_PASSAGES, candidates=(),
                    threshold=0.7, latency_ms=5.0)  # fmt: skip


def escalate(desk: DeskService, question: str, conversation: int | None = None) -> int:
    """`question` asked, and escalated by the bot for want of passages."""
    conversation = desk.ask(conversation, question).conversation.id
    [taken] = desk.lease(WORKER, limit=1, lease_s=30)
    assert desk.record_decision(WORKER, taken, no_passages(question)).outcome == "escalated"
    return conversation


def escalated_twice(desk: DeskService, clock: FakeClock) -> int:
    """The tester's first case: asked at 17:17, escalated; claimed and handed back (Ctrl+G
    twice); the bot judges the same message again and escalates it again at 17:27."""
    clock.now = START.replace(hour=17, minute=17, second=49)
    conversation = escalate(desk, PLUGH)
    clock.advance(300)
    assert desk.claim(conversation, agent="ana").won
    desk.hand_back(conversation, agent="ana")
    assert desk.conversation(conversation).pending == 1
    clock.advance(300)
    [taken] = desk.lease(WORKER, limit=1, lease_s=30)
    assert desk.record_decision(WORKER, taken, no_passages(PLUGH)).outcome == "escalated"
    return conversation


def counted(desk: DeskService) -> list[tuple[str, int]]:
    return [(gap.question, gap.count) for gap in desk.stats().content_gaps]


def test_one_message_escalated_twice_is_one_gap(desk: DeskService, clock: FakeClock) -> None:
    conversation = escalated_twice(desk, clock)
    [gap] = desk.content_gaps(include_handled=False)
    assert (gap.question, gap.count, gap.conversation_id) == (PLUGH, 1, conversation)
    assert gap.created_at == START.replace(hour=17, minute=27, second=49)  # Its latest.
    [figure] = desk.stats().content_gaps
    assert (figure.question, figure.count, figure.last_at) == (PLUGH, 1, gap.created_at)


@pytest.mark.parametrize("which", ["latest", "earlier"])
def test_a_passage_written_from_it_handles_every_escalation(
    backend: Backend, desk: DeskService, clock: FakeClock, which: str
) -> None:
    """Whichever escalation the list named (a list read before the second one named the first),
    the gap is gone from the list and the figures."""
    escalated_twice(desk, clock)
    [gap] = desk.content_gaps(include_handled=False)
    first, latest = [id_ for (id_,) in raw_sql(backend, "SELECT id FROM escalations ORDER BY id")]
    assert gap.id == latest
    desk.mark_gap_handled(latest if which == "latest" else first, passage_id="plugh")
    assert desk.content_gaps(include_handled=False) == []
    assert counted(desk) == []
    [handled] = desk.content_gaps()
    assert (handled.handled, handled.passage_id, handled.count) == (True, "plugh", 1)


def test_one_question_in_other_case_spacing_and_punctuation_is_one_gap(
    desk: DeskService, clock: FakeClock
) -> None:
    escalate(desk, GIFT)
    clock.advance(60)
    escalate(desk, HELMET)
    clock.advance(60)
    escalate(desk, GIFT_AGAIN)
    clock.advance(60)
    latest = escalate(desk, GIFT_PUNCTUATED)
    gift, helmet = desk.content_gaps(include_handled=False)
    # As the figures count it: three customers asked it; shown as it was last asked.
    assert (gift.question, gift.count, gift.conversation_id) == (GIFT_PUNCTUATED, 3, latest)
    assert gift.created_at == START + timedelta(seconds=180)
    assert (helmet.question, helmet.count) == (HELMET, 1)
    assert [count for _, count in counted(desk)] == [3, 1]

    desk.mark_gap_handled(gift.id, passage_id="gift-cards")
    assert [g.question for g in desk.content_gaps(include_handled=False)] == [HELMET]
    assert counted(desk) == [(HELMET, 1)]


def test_asked_again_after_its_passage_it_is_a_gap_again(
    desk: DeskService, clock: FakeClock
) -> None:
    """The passage did not answer the next customer: their asking is a new gap of one, and the
    handled ones stay handled, listed apart with their passage."""
    escalate(desk, GIFT)
    escalate(desk, GIFT_AGAIN)
    [gap] = desk.content_gaps(include_handled=False)
    desk.mark_gap_handled(gap.id, passage_id="gift-cards")
    clock.advance(60)
    escalate(desk, GIFT.upper())
    [again] = desk.content_gaps(include_handled=False)
    assert (again.question, again.count, again.handled) == (GIFT.upper(), 1, False)
    assert counted(desk) == [(GIFT.upper(), 1)]
    listed = [(g.question, g.count, g.passage_id) for g in desk.content_gaps()]
    assert listed == [(GIFT.upper(), 1, None), (GIFT_AGAIN, 2, "gift-cards")]


def test_the_newest_gaps_are_found_page_by_page_and_counted_whole(
    desk: DeskService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The list reads the newest escalations a page at a time until it has its gaps, then every
    escalation of those: counts include askings older than the pages it read."""
    monkeypatch.setattr("chatbot.store.gaps_sql.PAGE", 2)
    for n in range(3):
        escalate(desk, f"Old question {n}?")
        clock.advance(10)
    escalate(desk, GIFT)
    clock.advance(10)
    for wording in (GIFT_AGAIN, GIFT_PUNCTUATED, HELMET, HELMET.lower(), GIFT):
        escalate(desk, wording)
        clock.advance(10)
    gift, helmet = desk.content_gaps(include_handled=False, limit=2)
    assert (gift.question, gift.count) == (GIFT, 4)
    assert (helmet.question, helmet.count) == (HELMET.lower(), 2)
    assert len(desk.content_gaps(include_handled=False)) == 5
    assert [count for _, count in counted(desk)] == [4, 2, 1, 1, 1]


def test_rows_without_their_key_are_keyed_where_they_are_read(
    backend: Backend, desk: DeskService, clock: FakeClock
) -> None:
    """A row an older helpdesk wrote (during a rolling upgrade), or a tool inserted, has no key:
    it is one gap with the others all the same, and handled with them."""
    escalate(desk, GIFT)
    clock.advance(60)
    escalate(desk, GIFT_AGAIN)
    clock.advance(60)
    escalate(desk, HELMET)
    raw_sql(backend, "UPDATE escalations SET question_key = NULL WHERE id IN (1, 3)")
    helmet, gift = desk.content_gaps(include_handled=False)
    assert (gift.question, gift.count, helmet.count) == (GIFT_AGAIN, 2, 1)
    assert counted(desk) == [(GIFT_AGAIN, 2), (HELMET, 1)]
    desk.mark_gap_handled(gift.id, passage_id="gift-cards")
    assert [g.question for g in desk.content_gaps(include_handled=False)] == [HELMET]
    assert raw_sql(backend, "SELECT id FROM escalations WHERE handled_at IS NULL") == [(3,)]


def before_keys(migrations: Sequence[object]) -> int:
    """The schema version before the one that keys the escalations."""
    return next(
        n
        for n, migration in enumerate(migrations)
        if "escalations_open_by_key"
        in (inspect.getsource(migration) if callable(migration) else str(migration))
    )


@pytest.fixture
def older(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    """A new database of `backend`'s kind at the schema version before escalations kept their
    key (PostgreSQL's one of its own, dropped or emptied afterwards)."""
    if backend.name == "sqlite":
        with monkeypatch.context() as patch:
            patch.setattr("chatbot.store.sqlite.MIGRATIONS",
                          SQLITE_MIGRATIONS[: before_keys(SQLITE_MIGRATIONS)])  # fmt: skip
            SQLiteStore.open(Path(backend.location)).close()
        yield backend
        return
    from chatbot.store.postgres import PostgresStore

    server = postgres_server()
    url = server.create(migrated=False)
    try:
        with monkeypatch.context() as patch:
            patch.setattr("chatbot.store.postgres.MIGRATIONS",
                          POSTGRES_MIGRATIONS[: before_keys(POSTGRES_MIGRATIONS)])  # fmt: skip
            PostgresStore.open(url).close()
        yield Backend("postgresql", url)
    finally:
        server.give_back(url)


def test_an_older_database_keys_its_escalations_as_it_is_migrated(
    older: Backend, clock: FakeClock
) -> None:
    """Escalations written before their key was kept: the migration keys them (SQLite with the
    store's function, PostgreSQL with its regular expression), and they group as new ones do."""
    questions = (GIFT, GIFT_PUNCTUATED, HELMET)
    for n, question in enumerate(questions, start=1):
        raw_sql(older, "INSERT INTO conversations (id, state, created_at, updated_at)"
                " VALUES (?, 'waiting', ?, ?)", (n, 1000.0 + n, 1000.0 + n))  # fmt: skip
        raw_sql(older, "INSERT INTO escalations (conversation_id, question, reason,"
                " after_message_id, created_at) VALUES (?, ?, 'no-passages', 0, ?)",
                (n, question, 1000.0 + n))  # fmt: skip
    desk = older.service(clock)
    try:
        keys = [(question_key(q),) for q in questions]
        assert raw_sql(older, "SELECT question_key FROM escalations ORDER BY id") == keys
        helmet, gift = desk.content_gaps(include_handled=False)  # Newest first.
        assert (gift.question, gift.count, helmet.count) == (GIFT_PUNCTUATED, 2, 1)
        desk.mark_gap_handled(gift.id, passage_id="gift-cards")
        assert counted(desk) == [(HELMET, 1)]
    finally:
        desk.close()
