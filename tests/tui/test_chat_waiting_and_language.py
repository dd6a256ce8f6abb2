"""The customer's chat says what is true of the questions it offers and of what is sent:

- in a chat set to Chinese (F9 before writing), the recorded questions (English) were offered as
  answered, then went to a person ("no passage"), as a Chinese conversation searches only the
  Chinese passages; and the agent was told the question's words were in no passage at all;
- a message sent while a person has the conversation (or it waits for one) showed nothing under
  it, under a list still saying "click one";
- `helpdesk chat --no-bot` said "Replay mode, no network" of a bot it does not run;
- the "too long" line kept the count of the last Enter while the customer cut the question."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.config import Settings, load_settings
from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from chatbot.engine.question import MAX_QUESTION_CHARS
from chatbot.notices import why_no_passages
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.suggestion_list import SuggestedQuestion, SuggestionList
from tests.conftest import SHIPPED_CACHE
from tests.tui.conftest import Q1, Q2, SIZE, MakeApp
from tests.tui.helpers import engine_ready, flat, screen_text, wait_until


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    """Replay mode over the shipped knowledge base, its Chinese translation (`zh/`) included."""
    return load_settings(
        store={"db": db_path},
        knowledge_base={"path": kb_copy},
        valen={"cache": SHIPPED_CACHE, "replay": "on"},
    )


def shown(app: HelpDeskApp) -> str:
    return flat(screen_text(app))


def offered(app: HelpDeskApp) -> list[str]:
    """The suggested questions a customer can see (and click)."""
    listed = app.screen.query_one(SuggestionList)
    if not listed.display:
        return []
    return [row.suggestion.question for row in listed.query(SuggestedQuestion) if row.display]


async def started(app: HelpDeskApp, pilot: object) -> ChatPanel:
    await engine_ready(app)
    return app.screen.query_one(ChatPanel)


async def test_a_chat_switched_to_chinese_offers_no_english_question_as_answered(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        panel = await started(app, pilot)
        await wait_until(pilot, lambda: Q2 in offered(app))
        await pilot.press("f9")  # 中文, before writing anything.
        await wait_until(pilot, lambda: panel.locale == "zh")
        await pilot.pause()
        # The English questions would go to a person here: they are offered in English only.
        assert offered(app) == []
        assert "有录制回答、可以试试的问题只在英文对话中提供" in shown(app)
        assert Q2[:30] not in shown(app)
        # Not in the command palette either.
        assert not any("Q" in str(c.title) and Q2 in str(c.title)
                       for c in panel.palette_commands())  # fmt: skip
        # Typed anyway, the question is searched in the Chinese passages only, and the agent's
        # explanation says so (it said "bike", "brakes" were in no passage: damage-fee has them).
        panel.question.value = Q2
        await pilot.press("enter")
        await wait_until(pilot, lambda: panel.conversation is not None
                         and panel.conversation.state is State.WAITING)  # fmt: skip
        assert panel.conversation is not None
        [stored] = other.decisions(panel.conversation.id)
        decision = stored.decision
        assert decision.retrieval is not None and decision.retrieval.locale == "zh"
        said = why_no_passages(decision)
        assert said.startswith("No passage retrieved (only the 中文 passages were searched): "), (
            said
        )
        assert "未检索到段落（只搜索了中文段落）" in why_no_passages(decision, locale="zh")
        # Back in English, the questions are offered again.
        await pilot.press("f9")
        await wait_until(pilot, lambda: panel.locale == "en")


async def test_an_english_conversation_searches_every_passage_and_says_nothing_of_languages(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        panel = await started(app, pilot)
        panel.question.value = "Can I bring my dog on the bike?"
        await pilot.press("enter")
        await wait_until(pilot, lambda: panel.conversation is not None
                         and panel.conversation.state is State.WAITING)  # fmt: skip
        assert panel.conversation is not None
        [stored] = other.decisions(panel.conversation.id)
        assert stored.decision.retrieval is not None
        assert stored.decision.retrieval.locale is None
        assert why_no_passages(stored.decision).startswith("No passage retrieved: ")
        assert Q1 in offered(app) or offered(app) == []  # Hidden only while a person has it.


async def test_a_message_to_a_person_is_acknowledged_and_the_suggestions_go(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        panel = await started(app, pilot)
        await wait_until(pilot, lambda: Q2 in offered(app))
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: panel.conversation is not None
                         and panel.conversation.state is State.WAITING)  # fmt: skip
        # A question tapped now goes to the person, not the bot the list speaks of.
        assert offered(app) == []
        assert "Tap or click one" not in shown(app) and "Click one" not in shown(app)
        assert "A person will read this." not in shown(app)
        await panel.ask("Is anyone there?")
        await wait_until(pilot, lambda: "A person will read this." in shown(app))
        assert shown(app).index("Is anyone there?") < shown(app).index("A person will read this.")
        # Said once, under the newest message.
        await panel.ask("Hello?")
        await wait_until(pilot, lambda: shown(app).count("A person will read this.") == 1
                         and shown(app).index("Hello?")
                         < shown(app).index("A person will read this."))  # fmt: skip
        assert panel.conversation is not None
        conversation = panel.conversation.id
        other.claim(conversation, agent="ben")
        await wait_until(pilot, lambda: "ben joined" in shown(app))
        assert "A person will read this." not in shown(app)
        await panel.ask("Thanks, ben")  # Talking with a person: acknowledged the same way.
        await wait_until(pilot, lambda: "A person will read this." in shown(app))
        other.reply(conversation, agent="ben", text="Glad to help")
        await wait_until(pilot, lambda: "Glad to help" in shown(app))
        assert "A person will read this." not in shown(app)
        other.resolve(conversation, agent="ben")
        await wait_until(pilot, lambda: Q2 in offered(app))  # The bot's again, on writing.


async def test_a_chat_without_its_own_bot_does_not_say_how_the_bot_judges(
    make_app: MakeApp,
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await wait_until(pilot, lambda: Q2 in offered(app))
        await pilot.pause()
        text = shown(app)
        assert "Replay mode" not in text and "recorded answers" not in text, text
        assert "Questions to try." in text
        # `helpdesk bot` may run live: nothing is said of which go to a person.
        assert "(a person will reply)" not in text


async def test_the_too_long_count_follows_the_edits(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        panel = await started(app, pilot)
        over = MAX_QUESTION_CHARS + 100
        panel.question.focus()
        panel.question.value = "x" * over
        await pilot.press("enter")
        await wait_until(pilot, lambda: panel.error.display)
        assert f"{over:,} characters" in str(panel.error.render())
        await pilot.press("backspace")
        await wait_until(pilot, lambda: f"{over - 1:,} characters" in str(panel.error.render()))
        assert f"{over:,} characters" not in str(panel.error.render())
