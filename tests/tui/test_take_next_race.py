"""An agent who lost the race for the next customer with F6 was told "Nobody is waiting.", with
the conversation still in their queue a moment before. They are now told who took it, as Ctrl+L's
"Ana claimed it first." does."""

from __future__ import annotations

from chatbot.desk.models import ClaimResult
from chatbot.desk.service import DeskService
from chatbot.tui.widgets.agent_console import AgentConsole
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.helpers import wait_until


def waiting(desk: DeskService) -> int:
    conversation = desk.start_conversation().id
    desk.talk_to_person(conversation)
    desk.ask(conversation, "Where is my helmet?")
    return conversation


def notices(console: AgentConsole) -> list[str]:
    return [str(notice.message) for notice in console.app._notifications]


async def test_f6_that_loses_the_race_names_who_took_the_conversation(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = waiting(other)
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        console = app.screen.query_one(AgentConsole)
        await wait_until(pilot, lambda: console.queue.table.item(conversation) is not None)
        desk = app.services.desk
        take_next = desk.take_next

        async def colleague_first(*, agent: str) -> ClaimResult | None:
            # Ben's F6 lands between ana's key and her claim.
            other.claim(conversation, agent="Ben [b]K.[/b]")
            return await take_next(agent=agent)

        desk.take_next = colleague_first  # type: ignore[method-assign]
        await pilot.press("f6")
        said = f"Ben [b]K.[/b] claimed conversation #{conversation} first; nobody else is waiting."
        await wait_until(pilot, lambda: said in notices(console))
        assert "Nobody is waiting." not in notices(console)
        assert console.open_view is None
        assert other.conversation(conversation).agent == "Ben [b]K.[/b]"


async def test_f6_with_nobody_waiting_still_says_so(make_app: MakeApp, other: DeskService) -> None:
    conversation = waiting(other)
    other.claim(conversation, agent="ben")  # Taken before ana's queue ever showed it waiting.
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        console = app.screen.query_one(AgentConsole)
        await pilot.press("f6")
        await wait_until(pilot, lambda: notices(console) == ["Nobody is waiting."])
