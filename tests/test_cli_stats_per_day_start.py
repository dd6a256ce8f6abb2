"""Where `helpdesk stats --json`'s `per_day` starts: a window of 30 days or less (the analytics
screen's periods, `--since 7d`) has every day of it; one reaching back further starts at the later
of its start and the first conversation's day, as everything recorded does. `--since 2026-11-01`
on a desk whose conversations were all today had 30 days, from 30 days ago: neither."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from chatbot.assembly import open_service
from chatbot.config import load_settings
from tests.cli_run import run_cli


def desk(path: Path, *days_ago: int) -> str:
    """A desk with one conversation started each of `days_ago` days before now."""
    now = datetime.now(UTC)
    when = now
    service = open_service(load_settings(store={"db": path}), clock=lambda: when)
    try:
        for days in days_ago:
            when = now - timedelta(days=days)
            service.ask(None, "Where is my bike?")
    finally:
        service.close()
    return str(path)


def figures(capsys: pytest.CaptureFixture[str], db: str, *since: str) -> dict[str, Any]:
    code, out, err = run_cli(capsys, "stats", "--db", db, "--json", *since)
    assert code == 0, err
    shown: dict[str, Any] = json.loads(out)
    return shown


def days(shown: dict[str, Any]) -> tuple[date, list[date]]:
    """Today, as the figures were read, and the days `per_day` has."""
    today = datetime.fromisoformat(shown["generated_at"]).date()
    return today, [date.fromisoformat(day["day"]) for day in shown["per_day"]]


def test_a_long_window_on_a_desk_started_today_has_today_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = desk(tmp_path / "helpdesk.sqlite3", 0)
    window = (datetime.now(UTC).date() - timedelta(days=60)).isoformat()
    shown = figures(capsys, db, "--since", window)
    today, _ = days(shown)
    assert shown["per_day"] == [{"day": today.isoformat(), "conversations": 1}]
    assert figures(capsys, db)["per_day"] == shown["per_day"]  # As everything recorded.


def test_a_long_window_starts_at_the_first_conversations_day(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = desk(tmp_path / "helpdesk.sqlite3", 10, 0)
    window = (datetime.now(UTC).date() - timedelta(days=60)).isoformat()
    today, listed = days(figures(capsys, db, "--since", window))
    assert listed == [today - timedelta(days=n) for n in range(10, -1, -1)]


@pytest.mark.parametrize(("since", "back"), [("7d", 7), ("30d", 30), ("2w", 14)])
def test_a_window_of_30_days_or_less_has_every_day(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], since: str, back: int
) -> None:
    """`--since 7d` is 7×24 hours back from now: today and the 7 days before it."""
    db = desk(tmp_path / "helpdesk.sqlite3", 0)
    today, listed = days(figures(capsys, db, "--since", since))
    assert listed == [today - timedelta(days=n) for n in range(back, -1, -1)]


def test_a_long_window_on_an_empty_desk_has_no_days(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = desk(tmp_path / "helpdesk.sqlite3")
    assert figures(capsys, db, "--since", "2000-01-01")["per_day"] == []
