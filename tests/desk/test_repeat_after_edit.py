"""A question asked again after an editor changed the passage its answer came from is judged
again: "you asked this before: the answer above is what the help center says" holds only while
the help center still says it. On a real SQLite file through the desk service that `open_service`
builds, with the knowledge base on files (its Chinese translation too) and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from chatbot.assembly import KnowledgeBaseCheck, open_service
from chatbot.config import Settings, load_settings
from chatbot.desk.models import Author, ChatEvent, ChatMessage, PersonOffered, State
from chatbot.desk.service import DeskService
from chatbot.engine.models import Answer, Candidate, Decision
from chatbot.knowledge_base.interface import KnowledgeBaseStore
from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.postgres import PostgresPassageStore
from chatbot.knowledge_base.store import PassageStore
from tests.conftest import SHIPPED_KB
from tests.kb.backends import pg_url

__all__ = ["pg_url"]

WORKER = "worker-1"
PASSAGE = "card-charged-twice"
Q1 = "I was charged twice for the same ride, can I get my money back?"
ZH_Q1 = "同一次骑行被扣了两次款，能退钱吗？"
EDITED = "Charged twice for one ride? We refund the second charge within 3 days: no hold any more."


def settings_for(tmp_path: Path, kb: Path | str) -> Settings:
    return load_settings(store={"db": tmp_path / "helpdesk.sqlite3"}, knowledge_base={"path": kb})


@pytest.fixture
def desk(tmp_path: Path, kb_copy: Path) -> Iterator[DeskService]:
    service = open_service(settings_for(tmp_path, kb_copy))
    yield service
    service.close()


def answer_from(passage: Passage, question: str) -> Decision:
    """The engine's decision answering `question` from `passage`, as it reads now."""
    return Decision(
        question=question,
        answer=Answer(id=passage.id, title=passage.title, text=passage.text, probability=0.9),
        reason=None,
        candidates=(
            Candidate(
                id=passage.id, title=passage.title, text=passage.text, bm25=4.2, probability=0.9
            ),
        ),
        threshold=0.7,
    )


def answer_next(desk: DeskService, store: KnowledgeBaseStore | PassageStore) -> ChatMessage:
    """A worker answers the one pending question from the passage as the store has it now."""
    [question] = desk.lease(WORKER, limit=5, lease_s=30)
    passage = store.get(PASSAGE).passage
    result = desk.record_decision(WORKER, question, answer_from(passage, question.text))
    assert result.outcome == "answered"
    return [m for m in desk.messages(question.conversation_id) if m.author is Author.BOT][-1]


def edit(store: KnowledgeBaseStore | PassageStore, **changes: object) -> None:
    """Save the passage changed, as the editor and `helpdesk kb edit` do."""
    current = store.get(PASSAGE)
    store.save(current.passage.model_copy(update=changes), based_on=current.revision)


def offered(desk: DeskService, conversation_id: int) -> list[PersonOffered]:
    return [
        e.event
        for e in desk.entries(conversation_id)
        if isinstance(e, ChatEvent) and isinstance(e.event, PersonOffered)
    ]


def test_an_edit_between_the_two_questions_has_the_second_judged_again(
    desk: DeskService, kb_copy: Path
) -> None:
    store = PassageStore(kb_copy)
    cid = desk.ask(None, Q1).conversation.id
    first = answer_next(desk, store)
    # Unchanged: the short-cut stands, nothing for the bot.
    again = desk.ask(cid, Q1)
    assert not again.message.pending
    assert offered(desk, cid) == [PersonOffered(answer_entry=first.id)]
    edit(store, text=EDITED)
    # Changed since the answer: a new question for the bot, no "you asked this before".
    after_edit = desk.ask(cid, Q1)
    assert after_edit.message.pending
    assert len(offered(desk, cid)) == 1
    second = answer_next(desk, store)
    assert second.text == EDITED
    # The new answer is what the help center says now: asked again, a person is offered.
    assert not desk.ask(cid, Q1).message.pending
    assert offered(desk, cid)[-1] == PersonOffered(answer_entry=second.id)
    assert desk.conversation(cid).state is State.BOT


def test_a_change_the_customer_never_saw_keeps_the_short_cut(
    desk: DeskService, kb_copy: Path
) -> None:
    """Compared by what the answer showed (title and text), not the file: tags are editors'."""
    store = PassageStore(kb_copy)
    cid = desk.ask(None, Q1).conversation.id
    answer_next(desk, store)
    edit(store, tags=("payments", "refunds"))
    assert not desk.ask(cid, Q1).message.pending
    edit(store, title="Charged twice?")
    assert desk.ask(cid, Q1).message.pending


def test_an_unreadable_or_deleted_passage_has_the_question_judged_again(
    desk: DeskService, kb_copy: Path
) -> None:
    store = PassageStore(kb_copy)
    broken = desk.ask(None, Q1).conversation.id
    answer_next(desk, store)
    path = kb_copy / f"{PASSAGE}.json"
    good = path.read_text(encoding="utf-8")
    path.write_text("{ not json", encoding="utf-8")
    assert desk.ask(broken, Q1).message.pending  # A read failure counts as changed.
    assert offered(desk, broken) == []
    path.write_text(good, encoding="utf-8")
    answer_next(desk, store)
    path.unlink()
    assert desk.ask(broken, Q1).message.pending
    assert offered(desk, broken) == []


def test_a_chinese_conversation_compares_with_the_translation_it_was_answered_from(
    desk: DeskService, kb_copy: Path
) -> None:
    """The zh engine answers from `zh/`: compared with the main (English) passage, every
    Chinese answer would have read as changed, and the short-cut never applied."""
    translation = PassageStore(kb_copy / "zh")
    asked = desk.ask(None, ZH_Q1)
    assert asked.conversation.locale == "zh"
    cid = asked.conversation.id
    first = answer_next(desk, translation)
    assert not desk.ask(cid, ZH_Q1).message.pending
    assert offered(desk, cid) == [PersonOffered(answer_entry=first.id)]
    edit(PassageStore(kb_copy), text=EDITED)  # The English passage: not what they were told.
    assert not desk.ask(cid, ZH_Q1).message.pending
    edit(translation, text="一次骑行被扣了两次款？我们会在 3 天内退还第二笔款项。")
    assert desk.ask(cid, ZH_Q1).message.pending


def test_a_chinese_passage_written_in_the_main_knowledge_base_counts_too(
    desk: DeskService, kb_copy: Path
) -> None:
    """The zh engine also reads the main knowledge base's passages written in Chinese."""
    main = PassageStore(kb_copy)
    (kb_copy / "zh" / f"{PASSAGE}.json").unlink()  # No translation of it: the main one's is read.
    edit(main, title="一次骑行被扣了两次款", text="一次骑行被扣了两次款？第一笔是临时预授权。")
    cid = desk.ask(None, ZH_Q1).conversation.id
    answer_next(desk, main)
    assert not desk.ask(cid, ZH_Q1).message.pending
    edit(main, text="一次骑行被扣了两次款？我们会退还第二笔。")
    assert desk.ask(cid, ZH_Q1).message.pending


def test_the_knowledge_base_is_opened_only_for_a_repeat(tmp_path: Path, kb_copy: Path) -> None:
    """A process whose customers never repeat a question never reads the knowledge base."""
    opened: list[str] = []
    check = KnowledgeBaseCheck(settings_for(tmp_path, kb_copy))
    original = check._main_store

    def main_store() -> KnowledgeBaseStore:
        opened.append("main")
        return original()

    check._main_store = main_store  # type: ignore[method-assign]
    desk = open_service(settings_for(tmp_path, kb_copy))
    desk.passage_check = check
    try:
        cid = desk.ask(None, Q1).conversation.id
        answer_next(desk, PassageStore(kb_copy))
        desk.ask(cid, "How long does a refund take?")
        assert opened == []
        desk.ask(cid, Q1)
        assert opened == ["main"]
    finally:
        desk.close()


def test_a_knowledge_base_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    with PostgresPassageStore.open(pg_url, create=True) as seeding:
        seeding.import_passages(PassageStore(SHIPPED_KB).passages())
    desk = open_service(settings_for(tmp_path, pg_url))
    editor = PostgresPassageStore.open(pg_url)
    try:
        cid = desk.ask(None, Q1).conversation.id
        answer_next(desk, editor)
        assert not desk.ask(cid, Q1).message.pending  # The same passage read back: unchanged.
        edit(editor, text=EDITED)
        assert desk.ask(cid, Q1).message.pending
    finally:
        editor.close()
        desk.close()  # Closes the check's connection too.
    assert desk.passage_check is not None
    assert desk.passage_check._main is None  # type: ignore[attr-defined]
