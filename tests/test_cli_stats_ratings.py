"""`helpdesk stats` tells the customers' satisfaction: the ratings of resolutions (count, average
to one decimal, how many of each from 5 down to 1, per agent who resolved) and the share of
resolutions rated, in the table (fitting the terminal) and in the JSON the README documents."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.text import cells
from tests.conftest import ROOT
from tests.desk.rating_helpers import rated_day
from tests.stats_cli import run
from tests.store.conftest import FakeClock


@pytest.fixture
def rated(tmp_path: Path) -> Path:
    path = tmp_path / "rated.sqlite3"
    clock = FakeClock()
    desk = open_service(load_settings(store={"db": path}), clock=clock)
    try:
        rated_day(desk, clock)
    finally:
        desk.close()
    return path


def test_the_table_has_the_ratings(rated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--db", str(rated))
    lines = out.splitlines()
    assert code == 0
    figure = next(line for line in lines if line.startswith("Customer rating "))
    assert figure.split() == [
        "Customer", "rating", "3.5", "out", "of", "5,", "4", "ratings;", "4", "of", "5",
        "resolutions", "rated", "(80.0%)",
    ]  # fmt: skip
    start = lines.index(next(line for line in lines if line.startswith("Customer ratings")))
    assert [line.split() for line in lines[start : start + 9]] == [
        ["Customer", "ratings", "(1", "to", "5)", "4", "average", "3.5"],
        ["5", "1", "█" * 24],
        ["4", "1", "█" * 24],
        ["3", "1", "█" * 24],
        ["2", "1", "█" * 24],
        ["1", "0"],
        ["By", "agent", "who", "resolved", "ratings", "average"],
        ["ana", "2", "4.5"],
        ["ben", "2", "2.5"],
    ]


def test_a_window_with_no_rating_says_so(rated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--db", str(rated), "--since", "2026-01-05T09:44")
    lines = out.splitlines()
    assert code == 0
    figure = next(line for line in lines if line.startswith("Customer rating "))
    assert figure.split()[2:] == ["–", "out", "of", "5,", "0", "ratings;", "0", "of", "0",
                                  "resolutions", "rated", "(–)"]  # fmt: skip
    start = lines.index(next(line for line in lines if line.startswith("Customer ratings")))
    assert lines[start].split()[-2:] == ["average", "–"]
    assert [line.split() for line in lines[start + 1 : start + 7]] == [
        ["5", "0"], ["4", "0"], ["3", "0"], ["2", "0"], ["1", "0"], []
    ]  # fmt: skip


@pytest.mark.parametrize("columns", [40, 60, 80])
def test_the_ratings_fit_the_terminal(
    rated: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = run(capsys, "--db", str(rated))
    lines = out.splitlines()
    assert code == 0 and max(map(cells, lines)) <= columns, max(lines, key=cells)
    start = lines.index(next(line for line in lines if line.startswith("Customer ratings")))
    words = " ".join(" ".join(lines[start:]).split())
    assert "5 1 █" in words and " 1 0 " in words
    assert "ana 2 4.5 ben 2 2.5" in words


def test_the_json_has_the_ratings_as_the_readme_documents(
    rated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "--db", str(rated), "--json")
    assert code == 0
    ratings = json.loads(out)["ratings"]
    assert ratings == {
        "count": 4,
        "average": 3.5,
        "distribution": [0, 1, 1, 1, 1],
        "resolutions": 5,
        "resolutions_rated": 4,
        "rated_share": 0.8,
        "by_agent": [
            {"agent": "ana", "count": 2, "average": 4.5, "distribution": [0, 0, 0, 1, 1]},
            {"agent": "ben", "count": 2, "average": 2.5, "distribution": [0, 1, 1, 0, 0]},
        ],
    }
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    analytics = readme[readme.index("## Analytics") : readme.index("## Command line")]
    [row] = [line for line in analytics.splitlines() if line.startswith("| `ratings`")]
    for key in [*ratings, *ratings["by_agent"][0]]:
        assert re.search(rf"`{key}`", row), key
    assert '"ratings": {"count"' in analytics  # In the example too.
