"""`helpdesk eval DATA --passages URL`: a knowledge base kept in PostgreSQL is evaluated as a
folder is. `--passages` was a path, so "postgresql://…" became the folder "postgresql:/…" and
the command said the knowledge base was not found: no one whose passages live in PostgreSQL
could run the evaluation against them."""

from __future__ import annotations

import json

import pytest

from tests.cli_run import run_cli
from tests.conftest import ROOT, SHIPPED_KB
from tests.kb.backends import pg_url
from tests.tui.postgres_helpers import kb_url

__all__ = ["kb_url", "pg_url"]  # Fixtures.

DATA = ROOT / "tests" / "data" / "customer_questions.json"


def report(capsys: pytest.CaptureFixture[str], passages: str) -> dict[str, object]:
    code, out, err = run_cli(capsys, "eval", str(DATA), "--passages", passages, "--json")
    assert (code, err) == (0, "")
    result: dict[str, object] = json.loads(out)
    return result


def test_a_postgresql_knowledge_base_is_evaluated_as_its_folder_is(
    capsys: pytest.CaptureFixture[str], kb_url: str
) -> None:
    """Seeded with the shipped passages: the same report, question by question."""
    assert report(capsys, kb_url) == report(capsys, str(SHIPPED_KB))


def test_a_postgresql_url_with_no_knowledge_base_is_one_line(
    capsys: pytest.CaptureFixture[str], pg_url: str
) -> None:
    code, out, err = run_cli(capsys, "eval", str(DATA), "--passages", pg_url)
    assert code == 2 and out == ""
    assert err.startswith("helpdesk: error: ") and err.count("\n") == 1
    assert "postgresql:/" not in err.replace("postgresql://", "")  # Named as typed, not a path.
