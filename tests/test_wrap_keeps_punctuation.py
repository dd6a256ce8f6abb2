"""`chatbot.text.wrap` keeps punctuation with its words: `helpdesk conversations show` in 60
columns started a Chinese line with `。`. A wrapped line never starts with closing punctuation
nor ends with opening punctuation, and a no-break space (`2\\u00a0ms`) does not break."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.text import cells, wrap, wrap_lines
from tests.cli_run import run_cli
from tests.store.conftest import FakeClock

NOTICE = (
    "机器人无法查阅这个问题的每一段帮助中心内容（回放模式，未联网：有些内容没有录制好的判断）。"
    "客服人员会在这里回复您。“好的”，谢谢！"
)
CLOSING = "，。！？；：、）」』”"
"""Closing punctuation: what a line may not start with."""
OPENING = "（「『“"
"""Opening punctuation: what a line may not end with."""
QUESTION = "我昨天在里斯本租了一辆电动车骑到波尔图站。还车时没有空位，能免除超时费吗？"
"""Its `。` is the 21st character: what fills a 60-column line after `09:00:00  customer: `."""


def test_no_line_starts_with_closing_or_ends_with_opening_punctuation() -> None:
    for width in range(20, 70):  # Under 20, the indent leaves a line its least, 10 cells.
        lines = wrap_lines(NOTICE, width, " " * 10, first="09:00:00  ")
        assert all(cells(line) <= width for line in lines), (width, lines)
        assert "".join(line[10:] for line in lines) == NOTICE, (width, lines)
        for line in lines:
            assert line[10] not in CLOSING, (width, lines)
            assert line[-1] not in OPENING, (width, lines)


def test_a_no_break_space_keeps_a_number_with_its_unit() -> None:
    text = "已转人工：not-judged · 阈值 0.70 · 2\u00a0ms"
    for width in range(20, 40):
        lines = wrap(text, width)
        assert "ms" not in lines and lines[-1].endswith("2\u00a0ms"), (width, lines)
    assert wrap("it took 2 ms", 10) == ["it took 2", "ms"]  # An ordinary space breaks.


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "helpdesk.sqlite3"
    desk = open_service(load_settings(store={"db": path}), clock=FakeClock())
    try:
        conversation = desk.start_conversation().id
        desk.talk_to_person(conversation)
        desk.ask(conversation, QUESTION)
    finally:
        desk.close()
    return path


def test_conversations_show_in_60_columns_starts_no_line_with_a_full_stop(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    code, out, err = run_cli(capsys, "conversations", "show", "1", "--db", str(db))
    assert code == 0, err
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "customer: " in line)
    assert lines[at] == "09:00:00  customer: 我昨天在里斯本租了一辆电动车骑到波尔图", lines
    assert lines[at + 1] == " " * 10 + "站。还车时没有空位，能免除超时费吗？", lines
    assert all(cells(line) <= 60 for line in lines)
