"""A later message clearly written in another language than the conversation's switches it (a
`locale-set` event before the message, as the first message's), so its question is searched in
that language's passages: `电动车电池能骑多远？` asked after an English first message was searched
in the English passages only, escalated `no-passages` ("in no passage") and counted a content
gap, while the Chinese e-bike passage answers it. Mixed and one-word messages, thanks and
requests for a person leave the language as it is, and so does a language the customer chose."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import pytest

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotWorker
from chatbot.desk.models import Author, ChatEvent, ChatMessage, LocaleSet, State
from chatbot.desk.service import DeskService
from chatbot.engine.engine import Engine
from chatbot.knowledge_base.storage import load_knowledge_base
from chatbot.retrieval.retrievers import BM25Retriever
from chatbot.valen.cache import ReplayCache
from chatbot.valen.judge import PassageJudge
from chatbot.valen.protocol import PREDICATE, Outcome
from tests.backends import Backend
from tests.conftest import SHIPPED_CACHE, SHIPPED_KB

Q1 = "I was charged twice for the same ride, can I get my money back?"
BATTERY_ZH = "电动车电池能骑多远？"
BATTERY = "How far can I ride an e-bike on one battery?"
MIXED = "我的 e-bike battery 没电了 what should I do now"


def locale_events(desk: DeskService, conversation_id: int) -> list[LocaleSet]:
    return [
        entry.event
        for entry in desk.entries(conversation_id)
        if isinstance(entry, ChatEvent) and isinstance(entry.event, LocaleSet)
    ]


def test_a_question_clearly_in_chinese_switches_an_english_conversation(
    desk: DeskService,
) -> None:
    cid = desk.ask(None, Q1).conversation.id
    assert desk.conversation(cid).locale is None
    asked = desk.ask(cid, BATTERY_ZH)
    assert asked.conversation.locale == "zh"
    assert locale_events(desk, cid) == [LocaleSet(locale="zh")]
    # Stored just before the question, as the first message's is: the bot takes it up in
    # Chinese, and the customer's chat turns Chinese with it.
    *_, event, message = desk.entries(cid)
    assert isinstance(event, ChatEvent) and isinstance(event.event, LocaleSet)
    assert isinstance(message, ChatMessage) and message.text == BATTERY_ZH
    leased = desk.lease("w", limit=10, lease_s=60)
    assert [(q.text, q.locale) for q in leased if q.text == BATTERY_ZH] == [(BATTERY_ZH, "zh")]


def test_a_question_clearly_in_english_switches_a_chinese_conversation(
    desk: DeskService,
) -> None:
    cid = desk.ask(None, BATTERY_ZH).conversation.id
    desk.ask(cid, BATTERY)
    assert desk.conversation(cid).locale == "en"
    assert locale_events(desk, cid) == [LocaleSet(locale="zh"), LocaleSet(locale="en")]
    # Back again: each switch is one event.
    desk.ask(cid, BATTERY_ZH)
    assert desk.conversation(cid).locale == "zh"
    assert len(locale_events(desk, cid)) == 3


@pytest.mark.parametrize(
    "text",
    [
        MIXED,  # Mixed: English by detection, not clearly anything.
        "ok",  # One word.
        "退",  # One character.
        "谢谢",  # A thank-you: courtesy, not a question.
        "转人工",  # Asks for a person, which the bot hands over.
        "Is it 1234?",  # Still English.
    ],
)
def test_mixed_short_and_courtesy_messages_leave_an_english_conversation_english(
    desk: DeskService, text: str
) -> None:
    cid = desk.ask(None, Q1).conversation.id
    desk.ask(cid, text)
    assert desk.conversation(cid).locale is None
    assert locale_events(desk, cid) == []


@pytest.mark.parametrize(
    "text",
    [
        "thank you so much",
        "talk to a person",
        "ok",
        "e",
        # What a Chinese customer types that is not English they read: a code, an address, a link.
        "order AB12345",
        "ana@example.com",
        "https://example.com/rides/42",
    ],
)
def test_courtesy_and_short_english_leave_a_chinese_conversation_chinese(
    desk: DeskService, text: str
) -> None:
    cid = desk.ask(None, BATTERY_ZH).conversation.id
    desk.ask(cid, text)
    assert desk.conversation(cid).locale == "zh"
    assert locale_events(desk, cid) == [LocaleSet(locale="zh")]


def test_a_language_the_customer_chose_stays(desk: DeskService) -> None:
    # Switched with F9 after an English first message: Chinese is their choice.
    chose_zh = desk.ask(None, Q1).conversation.id
    desk.set_locale(chose_zh, "zh")
    desk.ask(chose_zh, BATTERY)
    assert desk.conversation(chose_zh).locale == "zh"
    # English picked with F9 in a Chinese conversation.
    chose_en = desk.ask(None, BATTERY_ZH).conversation.id
    desk.set_locale(chose_en, "en")
    desk.ask(chose_en, BATTERY_ZH)
    assert desk.conversation(chose_en).locale == "en"
    # Picked before the first message, and passed with each message as the chat passes it.
    before = desk.ask(None, Q1, locale="en").conversation.id
    desk.ask(before, BATTERY_ZH, locale="en")
    assert desk.conversation(before).locale == "en"
    # Passed by no one: the choice is read from the log, past a page of other entries.
    for number in range(110):
        desk.ask(before, f"question {number} about my ride")
    desk.ask(before, BATTERY_ZH)
    assert desk.conversation(before).locale == "en"
    assert locale_events(desk, before) == [LocaleSet(locale="en", chosen_by_customer=True)]


def test_a_language_only_the_terminal_asked_for_is_switched(desk: DeskService) -> None:
    # Shown in Chinese because the browser or terminal was (not the customer's choice): an
    # English question switches it as it would a detected one.
    cid = desk.start_conversation().id
    desk.set_locale(cid, "zh", chosen=False)
    desk.talk_to_person(cid)
    desk.ask(cid, BATTERY)
    assert desk.conversation(cid).locale == "en"


def test_a_message_to_a_person_switches_too(desk: DeskService) -> None:
    # The customer's chat follows what they write whoever answers; the agent is told.
    cid = desk.ask(None, Q1).conversation.id
    desk.talk_to_person(cid)
    desk.claim(cid, agent="ana")
    desk.ask(cid, BATTERY_ZH)
    conversation = desk.conversation(cid)
    assert (conversation.locale, conversation.state) == ("zh", State.CLAIMED)


# -- the bot ------------------------------------------------------------------------------------


class BatteryJudge(PassageJudge):
    """The recorded answers, and a sure "yes" for the Chinese e-bike passage (none is recorded
    for a Chinese question): Valen as a live one judges it."""

    async def judge(
        self, question: str, passages: Sequence[str], *, instructions: str = PREDICATE
    ) -> list[Outcome]:
        outcomes = await super().judge(question, passages, instructions=instructions)
        return [0.95 if "电池" in text else o for text, o in zip(passages, outcomes, strict=True)]


def engine(directory: object, judge: PassageJudge) -> Engine:
    return Engine(retriever=BM25Retriever(load_knowledge_base(directory)), judge=judge)  # type: ignore[arg-type]


@pytest.fixture
async def adesk(backend: Backend) -> AsyncIterator[AsyncDesk]:
    opened = AsyncDesk.open(lambda: backend.service(max_attempts=3))
    await opened.watch()
    yield opened
    await opened.aclose()


async def test_the_chinese_question_is_answered_from_the_chinese_passage(
    adesk: AsyncDesk,
) -> None:
    judge = BatteryJudge(replay="on", cache=ReplayCache(SHIPPED_CACHE))
    english, chinese = engine(SHIPPED_KB, judge), engine(SHIPPED_KB / "zh", judge)
    worker = BotWorker(adesk, lambda: english, locale_engines={"zh": lambda: chinese}, poll_s=0.05)
    cid = (await adesk.ask(None, Q1)).conversation.id
    task = asyncio.create_task(worker.run())
    try:
        async with asyncio.timeout(10):
            while worker.stats.settled < 1:
                await asyncio.sleep(0.01)
            await adesk.ask(cid, BATTERY_ZH)
            while worker.stats.settled < 2:
                await asyncio.sleep(0.01)
    finally:
        worker.stop()
        await task
    first, second = await adesk.decisions(cid)
    assert first.decision.answer is not None  # Q1, in English, from the English passage.
    assert first.decision.answer.id == "card-charged-twice"
    # Searched in the Chinese passages, and answered from the e-bike one, in Chinese.
    answer = second.decision.answer
    assert second.decision.question == BATTERY_ZH and answer is not None
    assert answer.id == "e-bike-battery" and "电池" in answer.text
    conversation = await adesk.conversation(cid)
    assert (conversation.state, conversation.locale) == (State.BOT, "zh")
    bot = [e for e in await adesk.entries_after(cid, 0)
           if isinstance(e, ChatMessage) and e.author is Author.BOT]  # fmt: skip
    assert len(bot) == 2 and "电池" in bot[-1].text
    # Not escalated: no content gap says the help center lacks what it has.
    assert await adesk.content_gaps() == []
