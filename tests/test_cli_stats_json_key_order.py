"""`helpdesk stats --json` lists its fields in the README's order: `bot_resolution_rate` beside
the `bot_resolved` it is made of. It came last, after `ratings` (pydantic dumps a computed field
after every stored one), where a reader of the README's sample did not look for it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.stats_cli import db, run

__all__ = ["db"]  # A fixture.


def readme_sample() -> dict[str, object]:
    """The README's abridged `--json` object (its "…" stand in for items, as strings)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    analytics = readme[readme.index("`--json` is one object, stable") :]
    block = re.search(r"```json\n(.*?)```", analytics, re.DOTALL)
    assert block is not None
    sample: dict[str, object] = json.loads(block.group(1))
    return sample


def test_json_fields_come_in_the_readmes_order(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "--db", str(db), "--json")
    assert (code, err) == (0, "")
    figures = json.loads(out)
    keys = list(figures)
    assert keys[keys.index("bot_resolved") + 1] == "bot_resolution_rate"
    sample = readme_sample()
    assert keys == list(sample)
    ratings, documented = figures["ratings"], sample["ratings"]
    assert isinstance(documented, dict)
    assert list(ratings) == list(documented)
