"""The transcript wraps to the width it has now: after the window changes size, and for lines
written while it was hidden behind a dialog (a log wraps what it is given when it is written)."""

from __future__ import annotations

from chatbot.desk.service import DeskService
from chatbot.tui.screens.find import FindScreen
from chatbot.tui.widgets.agent_console import AgentConsole
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.transcript import Transcript
from tests.tui.conftest import Q1, MakeApp
from tests.tui.helpers import flat, screen_text, type_text, wait_until

REPLY = (
    "Charged twice for one ride? The first charge is a hold that your bank releases within "
    "five working days, so only one of them stays on your statement."
)
RATED = "— The customer rated the conversation 4 out of 5."


def lines(transcript: Transcript) -> list[str]:
    """Every line the transcript holds, scrolled into view or not."""
    return [line.text.rstrip() for line in transcript.lines]


def wrapped(transcript: Transcript, sentence: str) -> bool:
    """The transcript holds `sentence` on lines of its current width: none longer, and each as
    long as fits (the next line's first word would not have)."""
    width = transcript.scrollable_content_region.width
    held = lines(transcript)
    for start in range(len(held)):
        run: list[str] = []
        for line in held[start:]:
            run.append(line)
            if len(" ".join(run)) >= len(sentence):
                break
        if " ".join(run) == sentence:
            return all(len(line) <= width for line in run) and all(
                len(line) + 1 + len(after.split()[0]) > width
                for line, after in zip(run, run[1:], strict=False)
            )
    return False


def claimed(desk: DeskService, question: str = Q1) -> int:
    conversation = desk.start_conversation().id
    desk.talk_to_person(conversation)
    desk.ask(conversation, question)
    desk.claim(conversation, agent="ana")
    desk.reply(conversation, agent="ana", text=REPLY)
    return conversation


async def test_the_transcript_wraps_again_when_the_window_narrows(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app()
    async with app.run_test(size=(140, 45)) as pilot:
        conversation = claimed(other)
        view = await app.open_conversation(conversation)
        transcript = view.query_one(Transcript)
        await wait_until(pilot, lambda: wrapped(transcript, REPLY))
        wide = transcript.scrollable_content_region.width
        # A new height alone wraps nothing again (that costs a render of every line).
        first_line = transcript.lines[0]
        await pilot.resize_terminal(140, 40)
        await wait_until(pilot, lambda: app.size.height == 40)
        await pilot.pause()
        assert transcript.lines[0] is first_line
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: transcript.scrollable_content_region.width < wide)
        await wait_until(pilot, lambda: wrapped(transcript, REPLY), timeout=2)
        assert wrapped(transcript, Q1)
        width = transcript.scrollable_content_region.width
        assert all(len(line) <= width for line in lines(transcript))
        # The newest lines, in view before, stay in view; no line is cut at the pane's edge, and
        # no scrollbar is left over from the wider lines.
        await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y > 0)
        await pilot.pause()
        shown = screen_text(app, transcript)
        assert "▊" not in shown
        assert flat(REPLY.split("?")[1]) in flat(shown)


async def test_a_notice_written_while_the_view_was_hidden_wraps_to_the_pane(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        first = claimed(other, "Where is my helmet?")
        rated = claimed(other)
        other.resolve(rated, agent="ana")
        other.rate(rated, rating=4)
        view = await app.open_conversation(first)
        await pilot.press("escape")
        console = app.screen.query_one(AgentConsole)
        await wait_until(pilot, lambda: console.open_view is None)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        find = app.screen
        assert isinstance(find, FindScreen)
        await type_text(pilot, f"#{rated}")
        await wait_until(pilot, lambda: [h.conversation_id for h in find.hits][:1] == [rated])
        await pilot.press("enter")
        await wait_until(pilot, lambda: console.open_view is not None)
        view = app.screen.query_one(ConversationView)
        await wait_until(pilot, lambda: view.conversation_id == rated and view.loaded.is_set())
        transcript = view.query_one(Transcript)
        await wait_until(pilot, lambda: wrapped(transcript, RATED), timeout=2)
        assert wrapped(transcript, REPLY)


async def test_a_shorter_view_keeps_the_newest_lines_in_view(
    make_app: MakeApp, other: DeskService
) -> None:
    # Only the height changed (the reply hint or typing line shown as a conversation opens):
    # nothing was wrapped again, and the view stopped two lines short of the newest.
    app = make_app()
    async with app.run_test(size=(140, 45)) as pilot:
        conversation = claimed(other)
        for n in range(30):
            other.reply(conversation, agent="ana", text=f"Follow-up number {n}.")
        view = await app.open_conversation(conversation)
        transcript = view.query_one(Transcript)
        await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y > 0)
        first_line = transcript.lines[0]
        await pilot.resize_terminal(140, 40)
        await wait_until(pilot, lambda: app.size.height == 40)
        await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        assert transcript.lines[0] is first_line  # Not wrapped again: the same lines.
        assert "Follow-up number 29." in screen_text(app, transcript)
