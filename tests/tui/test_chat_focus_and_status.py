"""A newcomer's findings in the customer chat: keys typed where the focus sits on no text box reach
the question box in the order they were typed, a hidden rating prompt keeps no focus, and the
status line beside the agent console says its whole sentence."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest
from textual.pilot import Pilot
from textual.widgets._footer import FooterKey

from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.chat_panel import ChatPanel, StatusLine
from chatbot.tui.widgets.rating_prompt import RatingPrompt
from tests.tui.conftest import Q1, SIZE, MakeApp
from tests.tui.desk_helpers import customer_words, resolved_by_another_agent
from tests.tui.helpers import (
    ask,
    burst,
    chat_panel_ready,
    flat,
    focus_of,
    footer_current,
    footer_offers,
    screen_text,
    steady,
    wait_until,
)

QUESTION = "Are helmets included with e-bikes in Lisbon?"


async def test_typing_after_rating_in_the_combined_view_reaches_the_question_box(
    make_app: MakeApp, other: DeskService
) -> None:
    """The newcomer's steps at 80x24: rated, then Shift+Tab and `5` (onto the conversation, so
    into the box), Tab, Tab (round to the conversation again), then Ctrl+U and a question typed
    at once. Ctrl+U ran after the question (its binding ran where the focus was once it reached
    the app: the box, which the question's first letter had moved it to) and took it all out;
    Enter said "Please type a question first."."""
    app = make_app("all", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await chat_panel_ready(pilot)
        cid = await resolved_by_another_agent(pilot, panel, other)
        await pilot.press("shift+tab")
        assert isinstance(focus_of(app), RatingPrompt)
        await pilot.press("4")
        await wait_until(pilot, lambda: not panel.rating.display)
        assert focus_of(app) is panel.question
        await pilot.press("shift+tab")
        assert focus_of(app) is panel.log_view
        await pilot.press("5")
        assert focus_of(app) is panel.question and panel.question.value == "5"
        await pilot.press("tab", "tab")
        assert focus_of(app) is panel.log_view
        await burst(pilot, "ctrl+u", *QUESTION)
        assert panel.question.value == QUESTION
        await pilot.press("enter")
        await wait_until(pilot, lambda: QUESTION in customer_words(other, cid))
        assert not panel.error.display


@pytest.mark.parametrize("where", ["log", "rating"])
async def test_editing_keys_typed_aside_are_applied_in_turn(
    make_app: MakeApp, other: DeskService, where: str
) -> None:
    """Backspace and Ctrl+W, typed on the conversation or the rating prompt in a burst with
    characters, edit the box where they were typed, not after every character."""
    app = make_app("chat", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await chat_panel_ready(pilot)
        await resolved_by_another_agent(pilot, panel, other)
        panel.question.value = "old words"
        panel.question.cursor_position = len("old words")
        (panel.log_view if where == "log" else panel.rating).focus()
        await burst(pilot, "ctrl+u", *"helmez", "backspace", *"t? oops", "ctrl+w", *"ok")
        assert focus_of(app) is panel.question
        assert panel.question.value == "helmet? ok"
        assert panel.rating.display  # Nothing typed was a rating.


async def test_a_rating_prompt_hidden_while_focused_gives_the_focus_to_the_question_box(
    make_app: MakeApp, other: DeskService
) -> None:
    """The agent reopens the conversation while the customer's focus is on the rating prompt: the
    prompt goes, and the focus goes to the question box at once. (Textual moved it off the hidden
    prompt a layout later, to the conversation; keys in between reached the hidden prompt.)"""
    app = make_app("chat", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await chat_panel_ready(pilot)
        cid = await resolved_by_another_agent(pilot, panel, other)
        panel.rating.focus()
        await pilot.pause()
        other.reopen(cid, agent="ben")
        await wait_until(pilot, lambda: not panel.rating.display)
        assert focus_of(app) is panel.question
        await pilot.press("3")
        assert panel.question.value == "3"


# -- the status line beside the agent console ------------------------------------------------------


def status_text(panel: ChatPanel) -> str:
    return flat(screen_text(panel.app, panel.query_one("#chat-status", StatusLine)))  # type: ignore[arg-type]


def says(panel: ChatPanel, sentence: str) -> bool:
    return status_text(panel) == sentence


async def test_the_status_line_beside_the_console_says_every_status_whole(
    make_app: MakeApp, other: DeskService
) -> None:
    """At 80x24 the chat has 39 columns: one line cut every status but the bot's ("You are next:
    a person will…", "ben (support agent) is help…", "Resolved. Write again if yo…")."""
    app = make_app("all", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await chat_panel_ready(pilot)
        panel.question.focus()
        await burst(pilot, *"Where is my bike?", "enter")
        await wait_until(pilot, lambda: panel.conversation_id is not None)
        cid = panel.conversation_id
        assert cid is not None
        await pilot.press("ctrl+t")
        steps: list[tuple[str, Callable[[], object]]] = [
            ("You are next: a person will reply here.", lambda: None),
            ("ben (support agent) is helping you.", lambda: other.claim(cid, agent="ben")),
            (
                "Resolved. Write again if you need anything else.",
                lambda: other.resolve(cid, agent="ben"),
            ),
        ]
        for sentence, move in steps:
            move()
            await wait_until(pilot, partial(says, panel, sentence))


def test_the_desk_at_80x24_with_a_resolved_conversation(
    snap_compare: Callable[..., bool], make_app: MakeApp, other: DeskService
) -> None:
    """The status's two lines beside the agent console, the rating under the conversation."""
    cid = other.start_conversation().id
    other.ask(cid, "Where is my bike?")
    other.talk_to_person(cid)
    other.claim(cid, agent="ben")
    other.reply(cid, agent="ben", text="It is at the station you left it at.")
    other.resolve(cid, agent="ben")

    async def run_before(pilot: Pilot[None]) -> None:
        panel = await chat_panel_ready(pilot)
        await wait_until(pilot, lambda: panel.rating.display)
        await wait_until(pilot, lambda: "Resolved." in status_text(panel))
        await pilot.wait_for_scheduled_animations()  # The chat scrolls to its last message.
        await steady(pilot)

    app = make_app("all", bot=False, conversation_id=cid)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


# -- a refusal's line goes once it no longer applies ----------------------------------------------


async def test_the_too_long_line_goes_once_the_box_is_cleared_or_short_enough(
    make_app: MakeApp,
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await chat_panel_ready(pilot)
        field = panel.question
        field.focus()
        for edit in ("ctrl+u", "backspace"):
            field.paste("x" * 2_001 + " " + "y" * 9_998)
            await pilot.press("enter")
            await wait_until(pilot, lambda: panel.error.display)
            assert "has 12,000 characters; the limit is 2,000" in flat(screen_text(app))
            await pilot.press("backspace")  # Still too long: what the line says still holds.
            assert panel.error.display
            if edit == "backspace":  # Cut back to within the limit, word by word.
                field.cursor_position = 2_001
                await pilot.press("ctrl+k", "backspace")
                assert len(field.value) == 2_000 and not panel.error.display
                field.value = ""
            else:
                await pilot.press(edit)
                assert field.value == "" and not panel.error.display
        await pilot.press("enter")  # An empty box: it says so, and goes with the first letter.
        assert panel.error.display
        await pilot.press("a")
        assert not panel.error.display


async def test_a_refusal_line_goes_when_the_conversation_moves_on(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await chat_panel_ready(pilot)
        cid = await resolved_by_another_agent(pilot, panel, other)
        other.reopen(cid, agent="ben")
        await wait_until(pilot, lambda: not panel.rating.display)
        panel.question.focus()
        panel.question.value = "x" * 2_001
        await pilot.press("enter")
        await wait_until(pilot, lambda: panel.error.display)
        other.reply(cid, agent="ben", text="Anything else I can help with?")
        await wait_until(pilot, lambda: not panel.error.display)
        assert panel.question.value == "x" * 2_001  # What was typed stays, to be cut.


# -- Helpful and Not helpful only where they apply ------------------------------------------------


def footer_shows(app: HelpDeskApp, action: str) -> bool:
    """Whether the footer shows `action`'s key at all (enabled or greyed out)."""
    return any(key.action == action for key in app.screen.query(FooterKey))


def notes(app: HelpDeskApp) -> list[str]:
    return [notification.message for notification in app._notifications]


HELPFUL = "feedback('helpful')"
NO_ANSWER = (
    "There is no answer from the bot to mark: Helpful and Not helpful are for the bot's "
    "answers, not a person's."
)


async def test_helpful_keys_leave_the_footer_after_a_persons_reply_and_say_why_when_pressed(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("all", bot=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        panel = await chat_panel_ready(pilot)
        await footer_current(pilot)
        assert footer_shows(app, HELPFUL) and not footer_offers(app, HELPFUL)  # Greyed: learnt.
        await resolved_by_another_agent(pilot, panel, other)
        await footer_current(pilot)
        assert not footer_shows(app, HELPFUL)
        assert not footer_shows(app, "feedback('not-helpful')")
        panel.question.focus()
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: NO_ANSWER in notes(app))


async def test_helpful_keys_leave_the_footer_once_the_answer_is_judged(
    make_app: MakeApp,
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        panel = await chat_panel_ready(pilot)
        await ask(pilot, Q1)
        await wait_until(pilot, lambda: footer_offers(app, HELPFUL))
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: not footer_shows(app, HELPFUL))
        assert panel.conversation_id is not None
        await pilot.press("ctrl+n")
        await wait_until(
            pilot, lambda: "You already told us about the bot's last answer." in notes(app)
        )
