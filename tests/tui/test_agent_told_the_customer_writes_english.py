"""An agent reading Chinese who opened a conversation in English was told nothing of its
language, where an English agent opening a Chinese one reads "The customer writes 中文; their
chat is in it.": English, the default, stores no `locale-set` event, and only that event said
it. The transcript now says it at its top, where that event would be, once, to an agent who
reads another language than English."""

from __future__ import annotations

from textual.pilot import Pilot

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.transcript import PAGE, Transcript
from tests.tui.conftest import Q1, SIZE, FrozenClock
from tests.tui.desk_helpers import long_conversation
from tests.tui.helpers import agent_app, flat, in_chinese, wait_until, written

Q_ZH = "电动车电池能骑多远？"
ENGLISH_TO_ZH = "— 客户使用 English 书写；其聊天界面也使用该语言。"
CHINESE_TO_EN = "— The customer writes 中文; their chat is in it."
ZH_TO_ZH = "— 客户使用 中文 书写；其聊天界面也使用该语言。"


def lines(transcript: Transcript) -> list[str]:
    return [flat(line) for line in written(transcript) if line.strip()]


def shown(transcript: Transcript) -> str:
    return " ".join(lines(transcript))


async def opened(app: HelpDeskApp, pilot: Pilot[None], conversation: int, words: str) -> Transcript:
    view = await app.open_conversation(conversation)
    await wait_until(pilot, lambda: words in shown(view.transcript))
    return view.transcript


async def test_an_agent_reading_chinese_is_told_the_customer_writes_english(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    english = other.ask(None, Q1).conversation.id
    other.talk_to_person(english)
    chinese = other.ask(None, Q_ZH).conversation.id
    other.talk_to_person(chinese)
    app = agent_app(in_chinese(settings), http, clock)
    async with app.run_test(size=SIZE) as pilot:
        transcript = await opened(app, pilot, english, Q1)
        # At the top, above the customer's first message, in the agent's language.
        assert lines(transcript)[0] == ENGLISH_TO_ZH
        assert lines(transcript)[1].startswith("客户")
        # Once: what the customer writes next adds no second one.
        other.ask(english, "Hello? Is anyone there?")
        await wait_until(pilot, lambda: "anyone there" in shown(transcript))
        assert shown(transcript).count("客户使用") == 1

        # Chinese, the agent's own language: nothing to point out.
        transcript = await opened(app, pilot, chinese, Q_ZH)
        assert "客户使用" not in shown(transcript)


async def test_an_english_agent_on_an_english_conversation_is_told_nothing(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    english = other.ask(None, Q1).conversation.id
    other.talk_to_person(english)
    app = agent_app(settings, http, clock)
    async with app.run_test(size=SIZE) as pilot:
        transcript = await opened(app, pilot, english, Q1)
        assert "The customer writes" not in shown(transcript)
        assert lines(transcript)[0].startswith("Customer")


async def test_a_conversation_that_turns_chinese_is_said_at_its_top_and_where_it_turns(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    # English first, then a question clearly in Chinese, which switches the conversation.
    switched = other.ask(None, Q1).conversation.id
    other.ask(switched, Q_ZH)
    other.talk_to_person(switched)
    app = agent_app(in_chinese(settings), http, clock)
    async with app.run_test(size=SIZE) as pilot:
        transcript = await opened(app, pilot, switched, Q_ZH)
        said = lines(transcript)
        assert said[0] == ENGLISH_TO_ZH
        # Then where it switched, though Chinese is the agent's own: the line at the top said
        # English, and left alone would still say so.
        at = said.index(ZH_TO_ZH)
        assert Q1 in " ".join(said[:at]) and Q_ZH in " ".join(said[at:])
        assert said.count(ZH_TO_ZH) == 1
    english_agent = agent_app(settings, http, clock)
    async with english_agent.run_test(size=SIZE) as pilot:
        transcript = await opened(english_agent, pilot, switched, Q_ZH)
        said = lines(transcript)
        # Where it switched: after the English question, before the Chinese one.
        at = said.index(CHINESE_TO_EN)
        assert Q1 in " ".join(said[:at]) and Q_ZH in " ".join(said[at:])
        assert said.count(CHINESE_TO_EN) == 1


async def test_a_long_conversations_line_comes_with_its_first_page(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    conversation = long_conversation(other, 2 * PAGE + 30)
    app = agent_app(in_chinese(settings), http, clock)
    async with app.run_test(size=SIZE) as pilot:
        transcript = await opened(app, pilot, conversation, "Message")
        assert "客户使用" not in shown(transcript)  # Its top is not shown yet.
        while transcript.hidden:
            first = transcript.first_id
            await pilot.press("f3")
            await wait_until(pilot, lambda first=first: transcript.first_id != first)  # type: ignore[misc]
        assert lines(transcript)[0] == ENGLISH_TO_ZH
        assert shown(transcript).count("客户使用") == 1
