"""`helpdesk stats`: the documented JSON shape with the scripted day's figures, the readable
table, windows, literal text, and one-line errors for a bad `--since`."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from chatbot.assembly import open_service
from chatbot.config import load_settings
from tests.desk.helpers import DOCKS
from tests.stats_cli import db, run

__all__ = ["db"]  # A fixture.


JSON_KEYS = {
    "since", "generated_at", "conversations", "asked", "bot_answered", "bot_resolved",
    "bot_resolution_rate", "questions", "bot_answers", "questions_by_hour", "escalations",
    "escalations_by_reason", "first_reply_s", "resolution_s", "waiting_now", "oldest_wait_s",
    "feedback", "decisions", "judgment_ms", "valen_errors", "top_scores", "unscored",
    "threshold", "would_answer", "content_gaps", "per_day", "ratings",
}  # fmt: skip


def test_json_has_the_documented_keys_and_the_figures(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "--db", str(db), "--json", "--threshold", "0.72")
    assert (code, err) == (0, "")
    figures = json.loads(out)
    assert set(figures) == JSON_KEYS
    assert (figures["conversations"], figures["asked"], figures["bot_resolved"]) == (10, 10, 2)
    assert figures["bot_resolution_rate"] == pytest.approx(0.2)
    assert figures["escalations_by_reason"][4] == {"reason": "customer-asked", "count": 2}
    assert figures["first_reply_s"] == {"count": 3, "p50": 180.0, "p90": 660.0}
    assert figures["threshold"] == 0.72
    assert {"threshold": 0.72, "answers": 4} in figures["would_answer"]
    assert figures["content_gaps"][0] == {
        "question": DOCKS, "count": 2, "last_at": "2026-01-05T09:11:41Z"
    }  # fmt: skip
    assert figures["per_day"][0] == {"day": "2026-01-05", "conversations": 10}
    assert figures["since"] is None


def test_the_table_names_every_figure_with_text_shown_literally(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "--db", str(db))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("Everything recorded, to ")
    assert "Bot resolution rate          20.0%   2 resolved by the bot of 10" in out
    assert "First human reply              p50 3m 00s    p90 11m 00s   (3 measured)" in out
    assert "  customer-asked                 2   " + "█" * 24 in lines
    assert "  0.70–0.75                 1   ████████ ◀" in lines
    assert "  0.70                           4  (in force)" in lines
    assert "  card-charged-twice             1            1" in lines
    assert "\x1b" not in out and "my bike \\x1b[31mis red\\x1b[0m" in out


def test_a_threshold_to_mark_is_not_called_the_one_in_force(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `--threshold 0.65` marked 0.65 "(in force)" while the bot answered at 0.7.
    code, out, _ = run(capsys, "--db", str(db), "--threshold", "0.65")
    lines = out.splitlines()
    assert code == 0
    assert [line for line in lines if line.endswith(("(in force)", "(marked)"))] == [
        "  0.65                           4  (marked)",
        "  0.70                           4  (in force)",
    ]


def test_the_table_fits_the_terminal(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # At 80 columns the resolution line and a content gap's question ran past the edge.
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "--db", str(db))
    lines = out.splitlines()
    assert code == 0 and max(map(len, lines)) <= 80, max(lines, key=len)
    rate = lines.index(next(line for line in lines if line.startswith("Bot resolution rate")))
    assert lines[rate + 1].startswith(" " * 37)  # Under its own column, not the labels'.
    assert " ".join(lines[rate][37:].split() + lines[rate + 1].split()) == (
        "2 resolved by the bot of 10; it answered in 4"
    )
    spark = lines.index(next(line for line in lines if line.startswith("Conversations per day")))
    assert lines[spark + 1].startswith(" " * 26) and "at most" in lines[spark + 1]
    monkeypatch.setenv("COLUMNS", "60")  # The gaps' questions are cut to what is left.
    lines = run(capsys, "--db", str(db))[1].splitlines()
    gaps = lines.index("Top content gaps (asked, last asked, question)")
    # Cut to 60 cells, the … right after the last word kept (not after the space that followed).
    assert lines[gaps + 1].endswith("…") and 58 <= len(lines[gaps + 1]) <= 60
    assert not lines[gaps + 1][:-1].endswith(" ")
    assert DOCKS.startswith(lines[gaps + 1][26:-1])


def test_a_window_by_date_and_by_span(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--db", str(db), "--json", "--since", "2026-01-05T09:10")
    assert code == 0
    figures = json.loads(out)
    assert figures["since"] == "2026-01-05T09:10:00Z"
    assert (figures["conversations"], figures["escalations"]) == (5, 4)
    # The scripted day is long past: nothing in the last week.
    code, out, _ = run(capsys, "--db", str(db), "--json", "--since", "7d")
    assert (code, json.loads(out)["conversations"]) == (0, 0)


@pytest.mark.parametrize(
    ("since", "says"),
    [
        ("7x", "--since '7x': expected a span like 24h, 7d or 2w, or a date like 2026-11-01"),
        # Written as a date, and not one: said so, rather than asked for "a date like".
        ("2026-13-01", "--since '2026-13-01': no such date (month must be in 1..12)"),
        ("2026-02-30", "--since '2026-02-30': no such date (day is out of range for month)"),
        ("2999-01-01", "--since '2999-01-01': that is in the future"),
        # A span is refused as a span, for what is wrong with it: too long.
        ("99999999d", "--since '99999999d': that is before the year 1; leave --since out"),
    ],
)
def test_a_bad_since_is_one_line_and_exit_2(
    db: Path, capsys: pytest.CaptureFixture[str], since: str, says: str
) -> None:
    code, out, err = run(capsys, "--db", str(db), "--since", since)
    assert code == 2 and out == ""
    assert err.startswith(f"helpdesk: error: {says}") and err.count("\n") == 1


def test_a_window_from_long_ago_counts_days_from_the_first_conversation(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `--since 0001-01-01` counted 739,000 days of zeros (48 MB of JSON, 13 s) and its line
    # read "Since 1-01-01". The days now start at the first conversation's, the scripted day.
    code, out, _ = run(capsys, "--db", str(db), "--json", "--since", "0001-01-01")
    figures = json.loads(out)
    assert (code, figures["since"], figures["conversations"]) == (0, "0001-01-01T00:00:00Z", 10)
    days = [date.fromisoformat(day["day"]) for day in figures["per_day"]]
    assert days[0] == date(2026, 1, 5) and days[-1] == datetime.now(UTC).date()
    code, out, _ = run(capsys, "--db", str(db), "--since", "0001-01-01")
    assert code == 0 and out.startswith("Since 0001-01-01 00:00 UTC, to ")


def test_a_since_with_an_offset_is_shown_in_utc(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 10:10+01:00 was printed as "10:10 UTC" and kept as +01:00 in the JSON; the window itself
    # was right (09:10 UTC, as `test_a_window_by_date_and_by_span` counts it).
    code, out, _ = run(capsys, "--db", str(db), "--json", "--since", "2026-01-05T10:10+01:00")
    figures = json.loads(out)
    assert (code, figures["since"]) == (0, "2026-01-05T09:10:00Z")
    assert (figures["conversations"], figures["escalations"]) == (5, 4)
    code, out, _ = run(capsys, "--db", str(db), "--since", "2026-01-05T10:10+01:00")
    assert code == 0 and out.splitlines()[0].startswith("Since 2026-01-05 09:10 UTC, to ")


def test_no_questions_have_no_busiest_hour(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An empty desk said "busiest 00:00" of zero questions; other empty figures say "none".
    path = tmp_path / "empty.sqlite3"
    open_service(load_settings(store={"db": path})).close()
    code, out, _ = run(capsys, "--db", str(path))
    lines = out.splitlines()
    assert code == 0 and "busiest" not in out
    hours = lines.index("Questions by hour (UTC)")
    assert lines[hours + 1] == "  none"
    assert lines.count("  none") == 4  # Valen errors, feedback, content gaps, and these.


def test_json_times_are_to_the_second_as_the_readme_shows(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `--since 24h` and the reading time carried microseconds ("...12:44:29.859605Z").
    code, out, _ = run(capsys, "--db", str(db), "--json", "--since", "24h")
    assert code == 0
    figures = json.loads(out)
    for key in ("since", "generated_at"):
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", figures[key]), figures[key]


def test_json_times_and_durations_are_rounded_but_questions_kept_as_asked() -> None:
    """Each gap's last question and the oldest wait carried microseconds and 14 decimals; a
    question that holds a time is text, and stays as asked."""
    from chatbot.desk.stats import _tidy

    dumped = {
        "oldest_wait_s": 103.02568101882935,
        "first_reply_s": {"count": 2, "p50": 180.04, "p90": 660.96},
        "judgment_ms": {"count": 1, "p50": 12.34},
        "content_gaps": [
            {"question": "Is 2026-01-05T09:11:41.5Z too late?", "count": 1,
             "last_at": "2026-12-06T13:38:10.422950Z"}
        ],
    }  # fmt: skip
    assert _tidy(dumped) == {
        "oldest_wait_s": 103.0,
        "first_reply_s": {"count": 2, "p50": 180.0, "p90": 661.0},
        "judgment_ms": {"count": 1, "p50": 12.34},
        "content_gaps": [
            {"question": "Is 2026-01-05T09:11:41.5Z too late?", "count": 1,
             "last_at": "2026-12-06T13:38:10Z"}
        ],
    }  # fmt: skip
