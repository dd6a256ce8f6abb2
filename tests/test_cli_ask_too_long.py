"""`ask` with a question over the limit says how far over, as the chat does: it said only
"question is longer than 2000 characters". `check_question` says so for every caller (the desk, the
web, `ask`), not only here."""

from __future__ import annotations

import pytest

from tests.cli_run import run_cli


def test_a_long_question_is_refused_with_its_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(capsys, "ask", "a" * 5599) == (
        2, "", "helpdesk: error: question has 5,599 characters; the limit is 2,000\n"
    )  # fmt: skip


def test_the_spaces_around_it_are_not_counted(capsys: pytest.CaptureFixture[str]) -> None:
    """As `check_question` counts: 2,000 characters between spaces are no more than the limit,
    and a blank question is empty, however long."""
    assert run_cli(capsys, "ask", "  " + "a" * 2001 + "  ")[2] == (
        "helpdesk: error: question has 2,001 characters; the limit is 2,000\n"
    )
    code, _, err = run_cli(capsys, "ask", "\u200b" * 3000)
    assert (code, err) == (2, "helpdesk: error: question is empty\n")
