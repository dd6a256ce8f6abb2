"""A question escalated because passages went unjudged is told to the customer by its cause:
"replay mode, no network" only for replay misses. A live bot whose Valen declined to judge told
the customer of replay mode all the same."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from chatbot.desk.models import PendingQuestion
from chatbot.desk.service import DeskService
from chatbot.tui.widgets.message_bubble import NoticeBubble
from chatbot.tui.widgets.transcript import Transcript
from tests.tui.conftest import Q1, SIZE, MakeApp
from tests.tui.desk_helpers import unjudged
from tests.tui.helpers import flat, screen_text, wait_until


@pytest.mark.parametrize(
    ("kind", "replay"), [("refused", False), ("replay-miss", True)], ids=["live", "replay"]
)
async def test_the_chat_says_an_unjudged_question_by_its_cause(
    make_app: MakeApp, other: DeskService, kind: str, replay: bool
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*Q1, "enter")
        [pending] = await wait_until_pending(pilot, other)
        other.record_decision("bot-1", pending, unjudged(Q1, kind))

        def said() -> str:
            return " ".join(flat(screen_text(app, b)) for b in app.screen.query(NoticeBubble))

        await wait_until(pilot, lambda: "A person will reply here." in said())
        assert ("replay mode" in said()) is replay
        assert "could not check every help-center passage" in said()


async def wait_until_pending(pilot: Pilot[None], desk: DeskService) -> list[PendingQuestion]:
    """The customer's question, taken as a bot takes it once it is stored."""
    taken: list[PendingQuestion] = []

    def leased() -> bool:
        taken.extend(desk.lease("bot-1", limit=1, lease_s=60))
        return bool(taken)

    await wait_until(pilot, leased)
    return taken


@pytest.mark.parametrize(
    ("kind", "replay"), [("refused", False), ("replay-miss", True)], ids=["live", "replay"]
)
async def test_the_agents_transcript_says_an_unjudged_question_by_its_cause(
    make_app: MakeApp, other: DeskService, kind: str, replay: bool
) -> None:
    conversation = other.ask(None, Q1).conversation.id
    [pending] = other.lease("bot-1", limit=1, lease_s=60)
    other.record_decision("bot-1", pending, unjudged(Q1, kind))
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        transcript = view.query_one(Transcript)

        def said() -> str:
            return flat(screen_text(app, transcript))

        await wait_until(pilot, lambda: "could not check every help-center passage" in said())
        assert ("replay mode" in said()) is replay
