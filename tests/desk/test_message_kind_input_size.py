"""Telling a request for a person or a thank-you from a question takes time in proportion to the
message, whatever it is made of: any customer can write "请帮我"×26 + "x", and a regular
expression that tried every way of splitting it into "请", "帮我" and "请帮我" ran for minutes on
the desk's thread before saying "no"."""

import subprocess
import sys

import pytest

from chatbot.desk.service import PERSON_REQUEST_CHARS, THANKS_CHARS, asks_for_person, says_thanks

HOSTILE = [
    ("asks_for_person", "请帮我" * ((PERSON_REQUEST_CHARS - 1) // 3) + "x"),
    ("asks_for_person", "please" * ((PERSON_REQUEST_CHARS - 1) // 6) + "x"),
    ("asks_for_person", "thankyou" * ((PERSON_REQUEST_CHARS - 10) // 8) + "agentx"),
    ("says_thanks", "k" * (THANKS_CHARS - 1) + "x"),
    ("says_thanks", "好的" * ((THANKS_CHARS - 1) // 2) + "x"),
]
DEADLINE_S = 20.0
"""Far above the milliseconds a linear check takes on any machine, far below the minutes the
backtracking one took: the call runs in a process of its own, so a slow one is stopped."""


@pytest.mark.parametrize(
    ("check", "text"), HOSTILE, ids=[f"{check}-{text[:6]}" for check, text in HOSTILE]
)
def test_a_message_made_to_backtrack_is_told_apart_at_once(check: str, text: str) -> None:
    program = (
        "import sys\n"
        f"from chatbot.desk.service import {check}\n"
        f"sys.stdout.write(str({check}(sys.argv[1])))\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", program, text],
            capture_output=True,
            text=True,
            timeout=DEADLINE_S,
            check=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{check} took over {DEADLINE_S:.0f} s on a {len(text)}-character message")
    assert done.stdout == "False"


@pytest.mark.parametrize(
    "text",
    [
        "talk to a person",
        "请帮我转人工",
        "Hi, please, I want to talk to the manager now, thanks!",
        "give me a real human asap",
        "an agent please thank you",
    ],
)
def test_requests_for_a_person_are_still_told(text: str) -> None:
    assert asks_for_person(text)
    assert not says_thanks(text)


@pytest.mark.parametrize(
    "text",
    ["Can an agent refund me?", "talk to a person about my refund", "speak", "person person"],
)
def test_questions_that_mention_a_person_are_still_questions(text: str) -> None:
    assert not asks_for_person(text)
