"""The bot's decision beside a conversation, for an agent reading Chinese: a replay miss's
explanation in the errors said `no recorded answer for this question and passage` under `错误`,
and at 100 columns (a browser's 1000 px) the verdict line broke between `2` and `ms`."""

from __future__ import annotations

from textual.pilot import Pilot

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.engine.models import Candidate, Decision, Reason
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.widgets.candidate_bars import CandidateBars
from tests.tui.conftest import FrozenClock
from tests.tui.helpers import agent_app, in_chinese, screen_text, wait_until

QUESTION = "Where is my helmet?"
MISSED = "replay-miss: no recorded answer for this question and passage"
"""The error a replay miss is stored with, in English (`chatbot.valen.judge`)."""


def escalated_unjudged(desk: DeskService) -> int:
    """A question the bot escalated in 2 ms, its one passage a replay miss."""
    conversation = desk.ask(None, QUESTION).conversation.id
    [pending] = desk.lease("w", limit=1, lease_s=60)
    missed = Candidate(id="station-full", text="…", bm25=1.0, error=MISSED,
                       error_kind="replay-miss")  # fmt: skip
    decision = Decision(question=QUESTION, answer=None, reason=Reason.NOT_JUDGED,
                        candidates=(missed,), threshold=0.7, latency_ms=2.0)  # fmt: skip
    desk.record_decision("w", pending, decision)
    return conversation


async def pane_lines(pilot: Pilot[None], conversation: int) -> list[str]:
    """The decision pane's lines once its errors show."""
    app = pilot.app
    assert isinstance(app, HelpDeskApp)
    view = await app.open_conversation(conversation)
    bars = view.query_one(CandidateBars)
    await wait_until(pilot, lambda: "错误" in screen_text(app, bars))
    return [line.strip() for line in screen_text(app, bars).splitlines()]


async def test_the_verdict_line_keeps_a_number_with_its_unit(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    conversation = escalated_unjudged(other)
    app = create_app(in_chinese(settings), mode="agent", http=http, clock=clock,  # type: ignore[arg-type]
                     agent="ana", timings=True, bot=False)  # fmt: skip
    # 100 columns leave the pane 37: the verdict line, 38 cells whole, wraps at its end.
    async with app.run_test(size=(100, 30)) as pilot:
        lines = await pane_lines(pilot, conversation)
        assert lines[0].endswith("阈值 0.70 ·"), lines  # It does wrap here...
        assert lines[1] == "2 ms", lines  # ...the number with its unit.
        assert "ms" not in lines


async def test_a_replay_miss_is_explained_in_chinese_after_its_code(
    settings: Settings, http: object, clock: FrozenClock, other: DeskService
) -> None:
    conversation = escalated_unjudged(other)
    app = agent_app(in_chinese(settings), http, clock)
    async with app.run_test(size=(100, 30)) as pilot:
        lines = await pane_lines(pilot, conversation)
        # The code stays a code; why it was not judged is said in Chinese. (Compared without
        # spaces: wide characters leave gaps in `screen_text`, and the line wraps in a pane this
        # narrow.)
        errors = "".join("".join(lines[lines.index("错误") + 1 :]).split())
        assert errors == "station-full:replay-miss:这个问题和这个段落没有录制好的回答", lines
