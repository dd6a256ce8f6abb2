"""`helpdesk stats --since 0d`: a span of zero is refused in one line naming the option, exit
status 2, as `--since 7x` is; it was accepted and printed an empty window ("Since 14:35 UTC, to
14:35 UTC"). The units are h, d and w (`0m` is no span at all, refused as before)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.stats_cli import db, run

__all__ = ["db"]


@pytest.mark.parametrize("since", ["0d", "0h", "0w", "000d", " 0h "])
def test_a_span_of_zero_is_one_line_and_exit_2(
    db: Path, capsys: pytest.CaptureFixture[str], since: str
) -> None:
    for output in ([], ["--json"]):
        code, out, err = run(capsys, "--db", str(db), *output, "--since", since)
        assert (code, out) == (2, "")
        assert err == (
            f"helpdesk: error: --since {since!r}: that is no time at all; write a span like 24h, "
            "7d or 2w\n"
        )


def test_a_span_of_minutes_is_still_no_span(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--db", str(db), "--since", "0m")
    assert (code, out) == (2, "")
    assert err.startswith("helpdesk: error: --since '0m': expected a span like 24h, 7d or 2w")


@pytest.mark.parametrize("since", ["1h", "1d", "1w"])
def test_the_shortest_spans_still_count(
    db: Path, capsys: pytest.CaptureFixture[str], since: str
) -> None:
    code, out, _ = run(capsys, "--db", str(db), "--json", "--since", since)
    assert code == 0 and json.loads(out)["since"] is not None
