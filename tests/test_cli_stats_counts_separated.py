"""`helpdesk stats` writes every count of its table one way, thousands separated ("1,000"), as
its "1,000 ratings" and "1,000 decisions" were; `--json` keeps plain numbers.

Past 999 the table mixed the two, even in one line: "4.0 out of 5, 1,000 ratings; 1000 of 1000
resolutions rated", "Conversations 1000 1000 with a customer message", "(1000 measured)" above
"(1,000 decisions)"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chatbot.assembly import open_service
from chatbot.config import load_settings
from tests.desk.helpers import Script
from tests.stats_cli import run
from tests.store.conftest import FakeClock, escalated

CONVERSATIONS = 1_000
QUESTION = "No free docks, will I pay a late fee?"


@pytest.fixture(scope="module")
def busy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,000 conversations through the desk: each question escalated on a low score (a replay
    miss beside it), claimed, replied to, resolved and rated 4 by its customer; the same question
    each time (one gap). Written once for the module's tests, which only read it."""
    path = tmp_path_factory.mktemp("busy") / "busy.sqlite3"
    clock = FakeClock()
    desk = open_service(load_settings(store={"db": path}), clock=clock)
    try:
        s = Script(desk, clock)
        for n in range(CONVERSATIONS):
            at = n * 10
            conversation = s.ask(at, QUESTION)
            assert s.decide(at + 1, escalated(QUESTION)) is None
            assert s.at(at + 2).desk.claim(conversation, agent="ana").won
            s.at(at + 3).desk.reply(conversation, agent="ana", text="The fee is waived.")
            s.at(at + 4).desk.resolve(conversation, agent="ana")
            s.at(at + 5).desk.rate(conversation, rating=4)
    finally:
        desk.close()
    return path


def line(lines: list[str], start: str) -> list[str]:
    """The words of the table's line starting with `start`."""
    return next(found for found in lines if found.startswith(start)).split()


def test_every_count_in_the_table_has_its_thousands_separated(
    busy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "--db", str(busy))
    assert code == 0
    lines = out.splitlines()
    assert line(lines, "Conversations ") == [
        "Conversations", "1,000", "1,000", "with", "a", "customer", "message"
    ]  # fmt: skip
    assert line(lines, "Bot resolution rate")[4:11] == [
        "0", "resolved", "by", "the", "bot", "of", "1,000;"
    ]  # fmt: skip
    assert line(lines, "Questions ")[:2] == ["Questions", "1,000"]
    assert line(lines, "Customer rating ") == [
        "Customer", "rating", "4.0", "out", "of", "5,", "1,000", "ratings;", "1,000", "of",
        "1,000", "resolutions", "rated", "(100.0%)",
    ]  # fmt: skip
    assert line(lines, "First human reply")[-2:] == ["(1,000", "measured)"]
    assert line(lines, "Escalation to resolved")[-2:] == ["(1,000", "measured)"]
    assert line(lines, "Judgment latency")[-2:] == ["(1,000", "decisions)"]
    assert line(lines, "Escalations by reason") == ["Escalations", "by", "reason", "1,000"]
    assert line(lines, "  low-score")[:2] == ["low-score", "1,000"]
    assert line(lines, "Valen errors by kind")[-1] == "1,000"  # Each a replay miss.
    assert line(lines, "  replay-miss") == ["replay-miss", "1,000"]
    assert line(lines, "Top scores of") == [
        "Top", "scores", "of", "1,000", "decisions", "(0", "with", "none,", "threshold", "0.70",
        "marked", "◀)",
    ]  # fmt: skip
    assert line(lines, "  0.60–0.65")[:2] == ["0.60–0.65", "1,000"]  # Each at 0.644.
    assert line(lines, "  0.60 ") == ["0.60", "1,000"]  # Would have answered.
    assert line(lines, "Customer ratings (1 to 5)")[-3:] == ["1,000", "average", "4.0"]
    assert line(lines, "  4 ")[:2] == ["4", "1,000"]
    assert line(lines, "  ana ")[:2] == ["ana", "1,000"]
    gaps = lines.index(next(found for found in lines if found.startswith("Top content gaps")))
    assert lines[gaps + 1].split()[0] == "1,000"
    # And nowhere a count of four digits or more without its separator (dates and times aside).
    undated = re.sub(r"\d{4}-\d{2}-\d{2}|\d{2}:\d{2}", "", out)
    assert re.findall(r"(?<![\d,.])\d{4,}", undated) == []


def test_the_json_keeps_plain_numbers(busy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--db", str(busy), "--json")
    assert code == 0
    figures = json.loads(out)
    assert figures["conversations"] == figures["asked"] == CONVERSATIONS
    assert figures["ratings"]["count"] == figures["ratings"]["resolutions"] == CONVERSATIONS
    assert figures["first_reply_s"]["count"] == CONVERSATIONS
    assert '"conversations": 1000,' in out
