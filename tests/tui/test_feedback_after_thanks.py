"""A thank-you is no question, and no reason to stop asking about the answer it thanks for.

Ask "how long does a refund take" (the bot answers from refund-time, with Helpful / Not
helpful), send "thanks!": the desk says "You're welcome…". The buttons used to go from the answer
and Ctrl+Y said "There is no answer from the bot to mark: … not a person's." though no person was
involved and the answer was still the bot's latest. Thanking then pressing Helpful is natural: the
answer keeps its buttons, in a terminal and in a browser (a reload too), and the keys act on it,
once; a newer answer still takes them over."""

from __future__ import annotations

import pytest
from textual.drivers.headless_driver import HeadlessDriver
from textual.pilot import Pilot

from chatbot.desk.models import Author, Feedback, State
from chatbot.desk.service import DeskService
from chatbot.engine.engine import Engine
from chatbot.engine.models import Answer, Decision, Reason
from chatbot.notices import THANKED_NOTICE
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.message_bubble import MessageBubble
from tests.tui.conftest import MakeApp
from tests.tui.helpers import ask, chat_text, engine_ready, footer_offers, wait_until

SIZE = (80, 24)
REFUND = "how long does a refund take"
NO_ANSWER = "There is no answer from the bot to mark"


@pytest.fixture(params=[False, True], ids=["terminal", "browser"])
def in_a_browser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """The app's driver as a browser session's says it is (`Driver.is_web`), or a terminal's."""
    if request.param:
        monkeypatch.setattr(HeadlessDriver, "is_web", property(lambda _driver: True))
    return bool(request.param)


class RefundJudged(Engine):
    """The shipped engine, with Valen's judgment for the refund question as a live one gives it
    (the recorded answers have none): refund-time answers it."""

    def __init__(self, inner: Engine) -> None:
        super().__init__(retriever=inner.retriever, judge=inner.judge,
                         threshold=inner.threshold, k=inner.k)  # fmt: skip

    async def answer(self, question: str) -> Decision:
        decision = await super().answer(question)
        if question != REFUND:
            return decision
        judged = {"error": None, "error_kind": None}
        candidates = tuple(
            c.model_copy(update={**judged, "probability": 0.93 if c.id == "refund-time" else 0.05})
            for c in decision.candidates
        )
        [passage] = [c for c in candidates if c.id == "refund-time"]
        answer = Answer(id=passage.id, title=passage.title, text=passage.text, probability=0.93)
        return decision.model_copy(
            update={"answer": answer, "reason": None, "candidates": candidates}
        )


def answers(app: HelpDeskApp) -> list[MessageBubble]:
    return [b for b in app.screen.query(MessageBubble) if b.message.author is Author.BOT]


def offers_buttons(bubble: MessageBubble) -> bool:
    return bubble.asks_for_feedback and bool(bubble.query("#helpful"))


async def thanked(pilot: Pilot[None]) -> MessageBubble:
    """Ask about refunds, then thank the bot: its answer, once the desk's reply is shown."""
    app = pilot.app
    assert isinstance(app, HelpDeskApp)
    app.services.engine = RefundJudged(await engine_ready(app))
    await ask(pilot, REFUND)
    [answer] = answers(app)
    assert answer.message.passage_id == "refund-time"
    assert offers_buttons(answer)
    await ask(pilot, "thanks!")
    await wait_until(pilot, lambda: THANKED_NOTICE in chat_text(app))
    await pilot.pause()
    return answer


async def press_helpful(pilot: Pilot[None], answer: MessageBubble, *, click: bool) -> None:
    if click:  # A browser's reader clicks the button (scrolling to it if need be).
        button = answer.query_one("#helpful")
        button.scroll_visible(animate=False, immediate=True)
        await pilot.pause()
        await pilot.click(button)
    else:
        await pilot.press("ctrl+y")


async def test_the_answer_keeps_its_buttons_after_a_thank_you_and_helpful_marks_it(
    make_app: MakeApp, other: DeskService, in_a_browser: bool
) -> None:
    app = make_app("chat", fixed_conversation=in_a_browser)
    async with app.run_test(size=SIZE) as pilot:
        answer = await thanked(pilot)
        assert offers_buttons(answer)
        await wait_until(pilot, lambda: footer_offers(app, "feedback('helpful')"))
        await press_helpful(pilot, answer, click=in_a_browser)
        await wait_until(pilot, lambda: "You marked this helpful" in chat_text(app))
        assert NO_ANSWER not in str([n.message for n in app._notifications])
        [stored] = [m for m in other.messages(1) if m.author is Author.BOT]
        assert stored.id == answer.message.id and stored.feedback is Feedback.HELPFUL
        assert other.conversation(1).state is State.BOT
        # Once: the keys now say so, and store nothing more.
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert other.messages(1)[1].feedback is Feedback.HELPFUL
        assert other.conversation(1).state is State.BOT


async def test_not_helpful_after_a_thank_you_hands_the_refund_question_to_a_person(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("all")
    async with app.run_test(size=SIZE) as pilot:
        await thanked(pilot)
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: other.conversation(1).state is State.WAITING)
        [waiting] = other.queue()
        assert waiting.question == REFUND  # Not "thanks!".
        assert waiting.reason is Reason.NOT_HELPFUL
        await wait_until(pilot, lambda: "You marked this not helpful" in chat_text(app))


async def test_a_reloaded_chat_shows_the_buttons_on_the_thanked_answer(
    make_app: MakeApp, in_a_browser: bool
) -> None:
    """The transcript shown afresh (a browser's reload, the terminal's chat reopened): the
    thank-you and the desk's reply below the answer do not take its buttons."""
    first = make_app("chat")
    async with first.run_test(size=SIZE) as pilot:
        await thanked(pilot)
    again = make_app("chat", conversation_id=1, fixed_conversation=in_a_browser)
    async with again.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: THANKED_NOTICE in chat_text(again))
        [answer] = answers(again)
        assert offers_buttons(answer)
        await press_helpful(pilot, answer, click=in_a_browser)
        await wait_until(pilot, lambda: "You marked this helpful" in chat_text(again))


async def test_a_newer_answer_still_takes_the_buttons_after_a_thank_you(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        refund = await thanked(pilot)
        await ask(pilot, "I was charged twice for the same ride, can I get my money back?")
        refund_answer, newer = answers(app)
        assert refund_answer is refund and not offers_buttons(refund)
        assert offers_buttons(newer)
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: "You marked this helpful" in chat_text(app))
        by_id = {m.id: m.feedback for m in other.messages(1)}
        assert by_id[refund.message.id] is None
        assert by_id[newer.message.id] is Feedback.HELPFUL


async def test_a_person_after_a_thank_you_still_takes_the_buttons(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        answer = await thanked(pilot)
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: other.conversation(1).state is State.WAITING)
        other.claim(1, agent="ana")
        other.reply(1, agent="ana", text="Refunds can take a little longer at weekends.")
        await wait_until(pilot, lambda: "a little longer at weekends" in chat_text(app))
        assert not offers_buttons(answer)
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert other.messages(1)[1].feedback is None
