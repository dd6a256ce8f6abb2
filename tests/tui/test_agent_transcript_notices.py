"""The agent console's transcript words events for the agent: a tester read a customer-asked
escalation as "— A person will reply here." and a resolution as "— Ana marked this resolved.
Write again any time.", both sentences said to the customer."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.config import Settings, load_settings
from chatbot.desk.service import DeskService
from chatbot.tui.widgets.transcript import Transcript
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.helpers import wait_until

SAID = {
    "en": ("— The customer asked for a person.", "— ana marked the conversation resolved."),
    "zh": ("— 客户要求转人工。", "— ana 已将此对话标记为已解决。"),
}
TO_THE_CUSTOMER = ("A person will reply here", "Write again", "客服人员会在这里回复您", "随时")


@pytest.fixture(params=["en", "zh"])
def locale(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def settings(db_path: Path, locale: str) -> Settings:
    return load_settings(store={"db": db_path}, ui={"locale": locale})


async def test_the_agents_transcript_says_what_happened_in_the_agents_words(
    make_app: MakeApp, other: DeskService, locale: str
) -> None:
    conversation = other.start_conversation().id
    other.talk_to_person(conversation)
    other.ask(conversation, "My bike will not unlock.")
    other.claim(conversation, agent="ana")
    other.reply(conversation, agent="ana", text="Try dock 4.")
    other.resolve(conversation, agent="ana")
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        transcript = view.query_one(Transcript)

        def text() -> str:
            """The transcript's lines, wrapping undone."""
            return " ".join(line.text.strip() for line in transcript.lines)

        await wait_until(pilot, lambda: "Try dock 4." in text())
        asked, resolved = SAID[locale]
        assert asked in text() and resolved in text()
        assert not any(words in text() for words in TO_THE_CUSTOMER)
