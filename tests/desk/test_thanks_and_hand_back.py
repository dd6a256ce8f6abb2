"""A customer's thank-you is no question, and a hand-back gives the bot the customer's real
question. On every backend (a real SQLite file, and PostgreSQL), through the desk service.

A customer who wrote "thanks!" after the bot's answer had it judged as a question: `no-passages`,
"A person will reply here", and a place in the queue. Handed back, the bot took the customer's
last message for its question, whatever it was: "talk to a person" (escalated `no-passages` while
the real question before it went unanswered), or "thanks Wendy 👍" (straight back to the queue).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from chatbot.assembly import open_service
from chatbot.cli.main import main
from chatbot.config import load_settings
from chatbot.desk.models import (
    Author,
    ChatEvent,
    ChatMessage,
    Entry,
    Escalated,
    EventData,
    HandedBack,
    State,
    Thanked,
)
from chatbot.desk.service import DeskService, question_for_bot, says_thanks
from chatbot.notices import THANKED_FOR_AGENTS, THANKED_NOTICE, notice
from chatbot.store.interface import ConversationStore
from tests.backends import Backend
from tests.desk.helpers import Q1, Q2, WORKER, answer_next, in_state, take
from tests.store.conftest import START, FakeClock, answered

THANKS = [
    "thanks!",
    "Thanks",
    "THANK YOU!!!",
    "thank you so much",
    "ok great, thank you",
    "got it, bye",
    "Got it. Thanks!",
    "ok",
    "okay then, bye",
    "perfect, cheers",
    "Thank you for your help, have a nice day!",
    "that's all, thanks",
    "all good now, thx",
    "ty",
    "Thanks Wendy 👍",
    "Wendy, thanks!",
    "👍",
    "🙏🙏",
    "ＴＨＡＮＫＳ",  # Full-width.
    "谢谢",
    "谢谢！",
    "好的，谢谢",
    "明白了，谢谢啦",
    "知道了，拜拜",
    "非常感谢 🙏",
    "收到",
    "嗯嗯 好的",
]
NOT_THANKS = [
    "thanks, how do I reset my password?",
    "Thanks! How long does a refund take?",
    "thank you but it still does not unlock",
    "ok but I was charged twice",
    "thanks for nothing, the bike is broken",
    "no thanks",
    "Are there helmets for kids?",
    "talk to a person",
    "hello",
    "help",
    "thanks how",
    "thanks Wendy?",
    "ok?",
    "好的？",
    "?",
    "",
    "you",
    "thanks " * 20,
    "谢谢，怎么退款？",
    "好的，但是车锁还是打不开",
    "谢谢你，请问头盔在哪里",
    "不好",
    "k" * 59 + "x",  # Splits into "k"s in countless ways: answered at once all the same.
]


@pytest.mark.parametrize("text", THANKS)
def test_a_thank_you(text: str) -> None:
    assert says_thanks(text)


@pytest.mark.parametrize("text", NOT_THANKS)
def test_not_a_thank_you(text: str) -> None:
    assert not says_thanks(text)


def message(entry_id: int, author: Author, text: str) -> ChatMessage:
    return ChatMessage(id=entry_id, conversation_id=1, created_at=START, author=author, text=text)


def test_the_bots_question_is_the_latest_real_one_since_the_last_reply() -> None:
    asked = message(1, Author.CUSTOMER, "Where is my helmet?")
    replied = message(2, Author.AGENT, "In the locker by dock 4.")
    helmets = message(3, Author.CUSTOMER, "Are there helmets for kids?")
    person = message(4, Author.CUSTOMER, "talk to a person")
    thanks = message(5, Author.CUSTOMER, "thanks Wendy 👍")
    event = ChatEvent(id=6, conversation_id=1, created_at=START, event=HandedBack(agent="ana"))
    log: list[Entry] = [asked, replied, helmets, person, thanks, event]
    assert question_for_bot(log) == helmets
    assert question_for_bot([asked, replied, person, thanks]) is None  # Nothing real after it.
    assert question_for_bot([asked, person]) == asked  # No reply at all.
    assert question_for_bot([asked, replied]) is None
    assert question_for_bot([]) is None


# -- on every backend -----------------------------------------------------------------------------


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def desk(backend: Backend, clock: FakeClock) -> Iterator[DeskService]:
    service = backend.service(clock, max_attempts=2)
    yield service
    service.close()


def events(desk: DeskService, conversation_id: int) -> list[EventData]:
    return [e.event for e in desk.entries(conversation_id) if isinstance(e, ChatEvent)]


@pytest.mark.parametrize("text", ["thanks!", "ok great, thank you", "got it, bye", "谢谢"])
def test_a_thank_you_after_the_answer_is_answered_by_the_desk_not_judged(
    desk: DeskService, text: str
) -> None:
    cid = desk.ask(None, Q1).conversation.id
    answer_next(desk)
    thanked = desk.ask(cid, text)
    # Stored first, as any message; not a question for the bot.
    assert thanked.message.text == text and not thanked.message.pending
    assert desk.lease(WORKER, limit=5, lease_s=30) == []
    conversation = desk.conversation(cid)
    assert (conversation.state, conversation.reason) == (State.BOT, None)
    assert desk.queue() == [] and desk.content_gaps() == []
    *_, last = desk.entries(cid)
    assert isinstance(last, ChatEvent) and last.event == Thanked()
    assert last.id > thanked.message.id  # The desk's word back follows the thank-you.
    assert not any(isinstance(event, Escalated) for event in events(desk, cid))
    # Neither a question nor an escalation in the figures; the bot resolved the conversation.
    stats = desk.stats()
    assert (stats.questions, stats.escalations, stats.decisions) == (1, 0, 1)
    assert (stats.bot_answered, stats.bot_resolved) == (1, 1)
    assert sum(stats.questions_by_hour) == 1
    # And the bot answers the next question as usual.
    assert desk.ask(cid, Q2).message.pending


def test_the_desks_word_back_in_the_readers_language() -> None:
    assert notice(Thanked(), reader="customer") == (
        "You're welcome. Ask anything else here, or ask for a person."
    )
    assert notice(Thanked(), reader="customer") == THANKED_NOTICE
    assert notice(Thanked(), reader="agent") == THANKED_FOR_AGENTS
    assert notice(Thanked(), reader="customer", locale="zh") == (
        "不客气。还有其他问题可以在这里继续问，也可以要求转人工。"
    )
    said = notice(Thanked(), reader="agent", locale="zh") or ""
    assert "道谢" in said


def test_a_chinese_thank_you_first_sets_the_language(desk: DeskService) -> None:
    asked = desk.ask(None, "谢谢")
    assert not asked.message.pending
    assert desk.conversation(asked.conversation.id).locale == "zh"
    assert events(desk, asked.conversation.id)[-1] == Thanked()


def test_a_thank_you_with_a_question_is_a_question(desk: DeskService) -> None:
    cid = desk.ask(None, Q1).conversation.id
    answer_next(desk)
    asked = desk.ask(cid, "thanks, how do I reset my password?")
    assert asked.message.pending
    assert Thanked() not in events(desk, cid)


@pytest.mark.parametrize("state", [State.WAITING, State.CLAIMED])
def test_with_a_person_on_it_a_thank_you_is_a_message_for_them(
    desk: DeskService, state: State
) -> None:
    cid = in_state(desk, state)
    asked = desk.ask(cid, "thanks!")
    assert not asked.message.pending
    assert desk.conversation(cid).state is state
    assert Thanked() not in events(desk, cid)


def test_asking_for_a_person_after_a_thank_you_makes_no_content_gap(desk: DeskService) -> None:
    first = desk.ask(None, Q1)
    cid = first.conversation.id
    answer_next(desk)
    desk.ask(cid, "thanks!")
    assert desk.talk_to_person(cid).escalated
    # The person takes up the question asked before the thanks (the bot had answered it).
    [item] = desk.queue()
    assert (item.question, item.question_entry) == (Q1, first.message.id)
    assert desk.content_gaps() == []


def read_all(desk: DeskService, conversation_id: int, agent: str = "ana") -> None:
    """What the console does once the conversation is on the agent's screen."""
    desk.mark_read(conversation_id, agent=agent, entry_id=desk.entries(conversation_id)[-1].id)


def test_handed_back_the_bot_answers_the_question_before_talk_to_a_person(
    desk: DeskService,
) -> None:
    """Case A: the bot judged "Are there helmets for kids?" slowly, the customer wrote "talk to a
    person", an agent took it and handed it back without a word. The bot judged "talk to a
    person" (`no-passages`, back to the queue) and never answered the real question."""
    helmets = "Are there helmets for kids?"
    asked = desk.ask(None, helmets)
    cid = asked.conversation.id
    slow = take(desk)  # The bot is judging it.
    assert not desk.ask(cid, "talk to a person").message.pending
    assert desk.claim(cid, agent="ana").won
    assert desk.record_decision(WORKER, slow, answered(helmets)).outcome == "kept"
    read_all(desk, cid)
    assert desk.question_for_bot(cid) == desk.messages(cid)[0]
    assert desk.hand_back(cid, agent="ana").state is State.BOT
    again = take(desk)
    assert (again.id, again.text) == (asked.message.id, helmets)
    assert desk.record_decision(WORKER, again, answered(helmets)).outcome == "answered"
    assert desk.conversation(cid).state is State.BOT
    assert desk.messages(cid)[-1].author is Author.BOT
    assert desk.lease(WORKER, limit=5, lease_s=30) == []


def test_handed_back_after_a_thank_you_the_bot_waits(desk: DeskService) -> None:
    """Case B: the agent answered, the customer thanked them; handed back, the bot judged the
    thank-you and the conversation went straight back to the queue."""
    cid = in_state(desk, State.CLAIMED)
    desk.ask(cid, Q2)
    desk.reply(cid, agent="ana", text="Five working days.")
    desk.ask(cid, "thanks Wendy 👍")
    read_all(desk, cid)
    assert desk.question_for_bot(cid) is None
    assert desk.hand_back(cid, agent="ana").state is State.BOT
    assert desk.lease(WORKER, limit=5, lease_s=30) == []  # Nothing to judge: it waits.
    assert desk.conversation(cid).state is State.BOT
    # The customer's next message is the bot's, as ever.
    assert desk.ask(cid, "How do I unlock a bike?").message.pending


def test_handed_back_the_question_after_the_reply_is_the_bots(desk: DeskService) -> None:
    cid = in_state(desk, State.CLAIMED)
    desk.reply(cid, agent="ana", text="Anything else?")
    asked = desk.ask(cid, Q2)
    desk.ask(cid, "talk to a person")
    desk.ask(cid, "thanks")
    desk.hand_back(cid, agent="ana")
    assert take(desk).id == asked.message.id


def test_the_desk_reads_back_past_a_page_to_the_question(desk: DeskService) -> None:
    """More messages since the last reply than a page of the log: read back to the question."""
    cid = in_state(desk, State.CLAIMED)
    desk.reply(cid, agent="ana", text="Anything else?")
    asked = desk.ask(cid, Q2)
    for _ in range(150):
        desk.ask(cid, "thanks")
    question = desk.question_for_bot(cid)
    assert question is not None and question.id == asked.message.id
    desk.hand_back(cid, agent="ana")
    assert take(desk).id == asked.message.id


class WritesFirst:
    """The store, but the customer writes (on a connection of their own) just before the first
    hand-back reaches it: after the service read the log to choose the bot's question."""

    def __init__(self, store: ConversationStore, write: Callable[[], object] | None) -> None:
        self._store = store
        self._write = write

    def release(self, *args: Any, **kwargs: Any) -> Any:
        if self._write is not None:
            write, self._write = self._write, None
            write()
        return self._store.release(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_a_question_written_while_the_desk_chose_is_not_lost(
    backend: Backend, clock: FakeClock
) -> None:
    """The log read showed a thank-you (no question); the customer then asked one. Handed back on
    that reading, the bot would have waited for a next message that had come already: the store
    refuses a choice made before the customer's newest message, and the desk chooses again."""
    customer = backend.service(clock)
    try:
        cid = in_state(customer, State.CLAIMED)
        customer.reply(cid, agent="ana", text="Five working days.")
        customer.ask(cid, "thanks!")
        late: list[int] = []
        racing = WritesFirst(
            backend.open(clock), lambda: late.append(customer.ask(cid, Q2).message.id)
        )
        desk = DeskService(racing)
        try:
            assert desk.hand_back(cid, agent="ana").state is State.BOT
        finally:
            desk.close()
        assert len(late) == 1
        assert take(customer).id == late[0]
    finally:
        customer.close()


def test_conversations_show_says_the_thank_you(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "helpdesk.sqlite3"
    desk = open_service(load_settings(store={"db": path}), clock=FakeClock())
    try:
        cid = desk.ask(None, "thanks!").conversation.id
    finally:
        desk.close()
    assert main(["conversations", "show", str(cid), "--db", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "customer: thanks!" in out
    assert THANKED_FOR_AGENTS in out
    assert main(["conversations", "show", str(cid), "--db", str(path), "--json"]) == 0
    assert '"type": "thanked"' in capsys.readouterr().out
