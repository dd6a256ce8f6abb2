"""Commands on a narrow terminal, and the small things around them: every line of
`conversations`, `stats` and `eval` fits the terminal's width; bidi controls are shown as codes;
a command group without its command is refused alike; `kb edit --text-file DIR` and a blank
`eval --predicate`."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.desk.models import Feedback
from tests.cli_run import run_cli
from tests.conftest import SEED_DATA
from tests.desk.helpers import script_day
from tests.store.conftest import FakeClock, answered

OVERRIDE = "refund \u202eevil\u202c please, my bike's dock was broken at the station"
"""A customer message with a right-to-left override: on screen "evil" would read "live"."""
OVERRIDDEN = 12
"""The conversation that message starts in `db`."""


def cell_width(line: str) -> int:
    """Cells as a terminal counts them, measured apart from `chatbot.text.cells`."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in line
    )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The scripted day of `tests/desk/test_stats`, an answer judged helpful, and a customer who
    asks for a person with a bidi override in the question."""
    path = tmp_path / "helpdesk.sqlite3"
    clock = FakeClock()
    desk = open_service(load_settings(store={"db": path}), clock=clock)
    try:
        first = desk.ask(None, "I was charged twice, can I get my money back?").conversation.id
        [question] = desk.lease("worker-1", limit=1, lease_s=30)
        desk.record_decision("worker-1", question, answered())
        desk.feedback(first, entry_id=desk.messages(first)[-1].id, value=Feedback.HELPFUL)
        script_day(desk, clock)
        override = desk.ask(None, OVERRIDE).conversation.id
        assert override == OVERRIDDEN
        desk.talk_to_person(override)
        desk.claim(override, agent="an agent with a long name")
    finally:
        desk.close()
    return path


@pytest.mark.parametrize("columns", [40, 60, 80])
def test_every_line_fits_the_terminal(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    # At 40 columns a bot answer's first line took 64 cells (its "[title (id)] (helpful)" label
    # was not counted), `stats` lines up to 72, `eval`'s question cells 75, `list` 68.
    monkeypatch.setenv("COLUMNS", str(columns))
    for argv in (
        ["conversations", "show", "1", "--db", str(db)],
        ["conversations", "show", str(OVERRIDDEN), "--db", str(db)],
        ["conversations", "list", "--db", str(db)],
        ["stats", "--db", str(db)],
        ["eval", str(SEED_DATA)],
        ["eval", str(SEED_DATA), "--retriever", "overlap", "--predicate", "Is it relevant?"],
    ):
        code, out, err = run_cli(capsys, *argv)
        assert code == 0, err
        lines = out.splitlines()
        assert max(map(cell_width, lines)) <= columns, (argv, max(lines, key=cell_width))


def test_narrow_layouts_keep_what_they_show(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    _, out, _ = run_cli(capsys, "conversations", "show", "1", "--db", str(db))
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "  bot [" in line)
    words = " ".join(line.strip() for line in lines[start : start + 5])
    assert "bot [Charged twice for one ride (card-charged-twice)] (helpful): Charged" in words
    assert all(line.startswith(" " * 10) for line in lines[start + 1 : start + 4])
    _, out, _ = run_cli(capsys, "conversations", "list", "--db", str(db))
    lines = out.splitlines()
    # A header on a terminal; the time on the line below, the header's too.
    assert lines[0].split() == ["id", "state", "agent", "reason"]
    assert lines[1].strip() == "last change (UTC)"
    assert lines[2].split() == ["1", "bot", "-", "-"]
    assert lines[3].strip() == "2026-01-05 09:00 UTC"
    _, out, _ = run_cli(capsys, "stats", "--db", str(db))
    lines = out.splitlines()
    rate = next(i for i, line in enumerate(lines) if line.startswith("Bot resolution rate"))
    assert lines[rate].split() == ["Bot", "resolution", "rate", "27.3%"]
    assert " ".join(" ".join(lines[rate + 1 : rate + 3]).split()) == (
        "3 resolved by the bot of 11; it answered in 5"
    )
    assert "    p50 3m 00s, p90 11m 00s (3 measured)" in lines
    _, out, _ = run_cli(capsys, "eval", str(SEED_DATA))
    lines = out.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("  I was charged twice"))
    assert [line.strip() for line in lines[row + 1 : row + 4]] == [
        "card-charged-twice ✓", "card-charged-twice 0.899 ✓", "card-charged-twice",
    ]  # fmt: skip


def test_a_bidi_override_is_shown_as_its_code(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["conversations", "show", str(OVERRIDDEN)], ["stats"]):
        code, out, _ = run_cli(capsys, *argv, "--db", str(db))
        assert code == 0 and "\u202e" not in out and "\u202c" not in out
        assert "refund \\u202eevil\\u202c please" in out


@pytest.mark.parametrize("group", [["kb"], ["kb", "synonyms"], ["conversations"], ["users"],
                                   ["valen"]])  # fmt: skip
def test_a_command_group_without_its_command_is_refused(
    capsys: pytest.CaptureFixture[str], group: list[str]
) -> None:
    # `kb` and `conversations` printed their help and exited 0; `users` a bare usage line, exit 2.
    code, out, err = run_cli(capsys, *group)
    *help_lines, error = err.splitlines()
    assert (code, out) == (2, "")
    assert help_lines[0].startswith(f"usage: helpdesk {' '.join(group)} ")
    assert error.startswith(f"helpdesk {' '.join(group)}: error: missing command: one of ")
    assert "list" in error or "check" in error


def test_a_text_file_that_is_a_directory_is_named_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "kb", "edit", "damage-fee", "--text-file", str(tmp_path))
    assert (code, out) == (2, "")
    assert err == f"helpdesk: error: {tmp_path}: is a directory, expected a text file\n"


@pytest.mark.parametrize("blank", ["", "  \t"])
def test_a_blank_predicate_is_refused(capsys: pytest.CaptureFixture[str], blank: str) -> None:
    # It was sent to Valen as it was, and every passage went unjudged.
    code, out, err = run_cli(capsys, "eval", str(SEED_DATA), "--predicate", blank)
    assert (code, out) == (2, "")
    assert err == ("helpdesk eval: error: argument --predicate: a wording is needed, not a blank\n")
