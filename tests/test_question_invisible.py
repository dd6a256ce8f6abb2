"""What counts of a question: a question of format characters only (a zero-width space, a word
joiner, a bidi mark) is as empty as one of spaces; the length limit counts the question without
the spaces around it, and that is what is stored and asked."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from chatbot.assembly import open_service
from chatbot.cli.main import main
from chatbot.config import load_settings
from chatbot.desk.models import Author
from chatbot.engine.question import MAX_QUESTION_CHARS, check_question
from chatbot.errors import HelpdeskError
from chatbot.text import is_blank
from chatbot.tui import create_app
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.tui.conftest import SIZE, FrozenClock
from tests.tui.helpers import ask, flat, screen_text, wait_until

INVISIBLE = [
    pytest.param("\u200b\u200b\u2060", id="zero-width-spaces-and-word-joiner"),
    pytest.param("\ufeff", id="byte-order-mark"),
    pytest.param(" \u200e\u200f\t", id="bidi-marks-and-spaces"),
    pytest.param("\u200c\u200d", id="joiners"),
    pytest.param("\u2066\u2069\u202e", id="bidi-isolates-and-override"),
]
BLANK_LOOKING = [
    pytest.param("\u3164", id="hangul-filler"),
    pytest.param("\u2800", id="braille-blank"),
    pytest.param("\u115f\u1160", id="hangul-choseong-and-jungseong-fillers"),
    pytest.param("\uffa0 \u2800\u3164", id="halfwidth-filler-and-others"),
    pytest.param("\ufe0f\U000e0100\u200d", id="variation-selectors-and-a-joiner"),
]
"""Letters and symbols that show as a blank, and marks that show nothing of their own."""
PADDED = " " * 2_100 + "refund"
"""The tester's question: said to be longer than 2,000 characters."""


@pytest.mark.parametrize("text", INVISIBLE)
def test_format_characters_alone_are_a_blank_question(text: str) -> None:
    assert is_blank(text)
    with pytest.raises(HelpdeskError, match="^question is empty$"):
        check_question(text)


@pytest.mark.parametrize("text", BLANK_LOOKING)
def test_blank_looking_letters_alone_are_a_blank_question(
    capsys: pytest.CaptureFixture[str], text: str
) -> None:
    # `helpdesk ask $'\u3164'` escalated, storing a conversation with a blank question.
    assert is_blank(text)
    with pytest.raises(HelpdeskError, match="^question is empty$"):
        check_question(text)
    assert run(capsys, "ask", text) == (2, "", "helpdesk: error: question is empty\n")


def test_a_question_with_words_keeps_its_format_characters() -> None:
    assert not is_blank("\u200bx")
    assert not is_blank("\u3164x") and not is_blank("\u2764\ufe0f")  # A heart, as emoji.
    assert check_question("\u200brefund\u2060") == "\u200brefund\u2060"  # Only spaces go.


def test_the_limit_counts_the_question_without_the_spaces_around_it() -> None:
    assert check_question(PADDED) == "refund"
    longest = "a" * MAX_QUESTION_CHARS
    assert check_question(f"  {longest}\n") == longest
    with pytest.raises(HelpdeskError, match="question has 2,001 characters; the limit is 2,000"):
        check_question(f" {longest}b ")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ask_refuses_an_invisible_question(capsys: pytest.CaptureFixture[str]) -> None:
    # It exited 0, having asked the knowledge base about nothing.
    assert run(capsys, "ask", "\u200b\u200b") == (2, "", "helpdesk: error: question is empty\n")


def test_ask_takes_a_question_padded_past_the_limit(capsys: pytest.CaptureFixture[str]) -> None:
    # It said "question is longer than 2000 characters".
    code, out, err = run(capsys, "ask", PADDED, "--json")
    assert code == 0, err
    assert json.loads(out)["question"] == "refund"


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    def refuse(request: httpx.Request) -> httpx.Response:  # Replay mode reaches no host.
        raise AssertionError(f"unexpected request to {request.url}")

    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as client:
        yield client


@pytest.mark.parametrize("text", INVISIBLE)
async def test_the_chat_refuses_an_invisible_question(
    tmp_path: Path, http: httpx.AsyncClient, text: str
) -> None:
    """Pasted and sent, it made a conversation with a blank bubble."""
    settings = load_settings(store={"db": tmp_path / "helpdesk.sqlite3"})
    clock = FrozenClock()
    app = create_app(settings, mode="chat", http=http, clock=clock, timings=False)
    desk = open_service(settings, clock=clock)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await ask(pilot, text)
            panel = app.screen.query_one(ChatPanel)
            await wait_until(
                pilot, lambda: "Please type a question first." in flat(screen_text(app, panel))
            )
            assert desk.conversations() == []
    finally:
        desk.close()


async def test_the_chat_counts_and_stores_a_question_without_its_spaces(
    tmp_path: Path, http: httpx.AsyncClient
) -> None:
    settings = load_settings(store={"db": tmp_path / "helpdesk.sqlite3"})
    clock = FrozenClock()
    app = create_app(settings, mode="chat", http=http, clock=clock, timings=False)
    desk = open_service(settings, clock=clock)
    try:
        async with app.run_test(size=SIZE) as pilot:
            panel = app.screen.query_one(ChatPanel)
            await ask(pilot, " " * 50 + "x" * 2_345 + " " * 50, wait=False)
            said = "Your question has 2,345 characters; the limit is 2,000."
            await wait_until(pilot, lambda: said in flat(screen_text(app, panel)))
            assert desk.conversations() == []
            await ask(pilot, PADDED, wait=False)  # Refused as too long, 2,106 characters.
            await wait_until(pilot, lambda: len(desk.conversations()) == 1)
            [question] = [m for m in desk.messages(1) if m.author is Author.CUSTOMER]
            assert question.text == "refund"
    finally:
        desk.close()
