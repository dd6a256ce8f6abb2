"""The customer's question box says what a message typed there does now.

It said "Type your question, press Enter" throughout: beside "ana (support agent) is helping
you." and under "A person will read this.", and at the rating prompt, where a number typed there
rates. Now: a question for the bot; a message for the person who has the conversation (named) or
will; a rating, or a message that starts again."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from chatbot.i18n import Locale, translations
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.tui.conftest import MakeApp
from tests.tui.helpers import burst, chat_panel_ready, flat, screen_text, wait_until

SIZE = (80, 24)
ENGLISH = {
    "bot": "Type your question, press Enter",
    "person": "Write a message, press Enter",
    "ana": "Write to ana, press Enter",
    "rating": "Rate 1 to 5, or write again",
}


def expected(locale: Locale) -> dict[str, str]:
    """`ENGLISH` as the chat says it in `locale`."""
    t = translations(locale)
    said = {key: t.gettext(text) for key, text in ENGLISH.items()}
    said["ana"] = t.gettext("Write to {agent}, press Enter").format(agent="ana")
    return said


async def shows(pilot: Pilot[None], panel: ChatPanel, placeholder: str) -> None:
    """Wait until the empty box shows `placeholder` on screen."""
    box = panel.question
    await wait_until(pilot, lambda: flat(screen_text(pilot.app, box)) == placeholder)  # type: ignore[arg-type]
    assert box.value == ""


@pytest.mark.parametrize("locale", ["en", "zh"])
async def test_the_box_says_who_reads_what_is_typed_and_asks_for_the_rating(
    make_app: MakeApp, other: DeskService, locale: Locale
) -> None:
    said = expected(locale)
    if locale == "en":
        assert said == ENGLISH
    else:  # Every one translated, none the same as another.
        assert not set(said.values()) & set(ENGLISH.values())
        assert len(set(said.values())) == len(said)
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_panel_ready(pilot)
        panel.question.focus()
        if locale != "en":
            await pilot.press("f9")
            await wait_until(pilot, lambda: panel.locale == locale)
        await shows(pilot, panel, said["bot"])

        await burst(pilot, *"Where is my bike?", "enter")
        await wait_until(pilot, lambda: panel.conversation_id is not None)
        cid = panel.conversation_id
        assert cid is not None
        await shows(pilot, panel, said["bot"])  # Still the bot's, the question waiting on it.

        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: other.conversation(cid).state is State.WAITING)
        await shows(pilot, panel, said["person"])

        other.claim(cid, agent="ana")
        await shows(pilot, panel, said["ana"])
        other.reply(cid, agent="ana", text="It is at the station you left it at.")
        other.release(cid, agent="ana")  # Stepped away: another person will reply.
        await shows(pilot, panel, said["person"])
        other.claim(cid, agent="ana")
        await shows(pilot, panel, said["ana"])

        other.resolve(cid, agent="ana")
        await wait_until(pilot, lambda: panel.rating.display)
        await shows(pilot, panel, said["rating"])

        # Switched language meanwhile: the box follows.
        await pilot.press("f9")
        switched: Locale = "zh" if locale == "en" else "en"
        await wait_until(pilot, lambda: panel.locale == switched)
        await shows(pilot, panel, expected(switched)["rating"])
        await pilot.press("f9")
        await wait_until(pilot, lambda: panel.locale == locale)
        await shows(pilot, panel, said["rating"])

        await burst(pilot, "4", "enter")  # Rated: the next words are a question for the bot.
        await wait_until(pilot, lambda: not panel.rating.display)
        await shows(pilot, panel, said["bot"])
