"""In a browser the app never names a key the browser keeps for itself: Ctrl+T opens a tab and
Ctrl+N a window, and neither reaches the page, so "Ctrl+T hands your question to a person" sent
a customer to a new tab. There the sentence names the footer's button instead."""

from __future__ import annotations

import pytest
from textual.drivers.headless_driver import HeadlessDriver

from chatbot.desk.models import BOT_STALLED_S
from chatbot.desk.service import DeskService
from chatbot.notices import REPEAT_NOTICE, REPEAT_NOTICE_IN_A_BROWSER
from chatbot.tui.widgets.bot_working import BotWorking
from tests.tui.conftest import Q1, SIZE, FrozenClock, MakeApp
from tests.tui.helpers import ask, chat_text, flat, screen_text, wait_until


@pytest.fixture(params=[False, True], ids=["terminal", "browser"])
def in_a_browser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """The app's driver as a browser session's says it is (`Driver.is_web`), or a terminal's."""
    if request.param:
        monkeypatch.setattr(HeadlessDriver, "is_web", property(lambda _driver: True))
    return bool(request.param)


async def test_a_slow_answer_offers_a_person_by_a_key_the_customer_can_press(
    make_app: MakeApp, clock: FrozenClock, in_a_browser: bool
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1, wait=False)
        line = app.screen.query_one(BotWorking)
        await wait_until(pilot, lambda: line.display)
        clock.advance(BOT_STALLED_S)
        await wait_until(
            pilot, lambda: line.slow and "longer than usual" in flat(screen_text(app, line))
        )
        said = flat(screen_text(app, line))
        assert ("Ctrl+T" in said) is not in_a_browser
        if in_a_browser:
            assert "“Talk to a person”, below, hands your question to a person." in said


async def test_a_colleagues_claim_offers_a_note_by_a_key_the_agent_can_press(
    make_app: MakeApp, other: DeskService, in_a_browser: bool
) -> None:
    bens = other.start_conversation().id
    other.talk_to_person(bens)
    other.claim(bens, agent="ben")
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(bens)
        await pilot.press("ctrl+r")  # Not ours to resolve: the refusal says what can be done.
        hint = view.query_one("#reply-hint")
        await wait_until(pilot, lambda: "owns this conversation." in flat(screen_text(app, hint)))
        said = flat(screen_text(app, hint))
        assert ("Ctrl+N" in said) is not in_a_browser
        if in_a_browser:
            assert "ben owns this conversation. “Note”, in the footer, adds a note." in said
        # Ben may have closed his tab: the way to free his claim is named where it is seen.
        assert f"If they have left, Ctrl+P “Take #{bens}…” puts it back in the queue." in said


async def test_the_same_question_again_offers_a_person_by_a_key_the_customer_can_press(
    make_app: MakeApp, in_a_browser: bool
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1)
        await ask(pilot, Q1)
        wanted = REPEAT_NOTICE_IN_A_BROWSER if in_a_browser else REPEAT_NOTICE
        await wait_until(pilot, lambda: wanted in chat_text(app))
