"""`--db` and `HELPDESK_DB` as people write them: a refusal names the option as typed, and a
`sqlite://` URL is an absolute path, shown as that path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.assembly import open_service
from chatbot.cli.main import main
from chatbot.config import load_settings
from chatbot.dburl import sqlite_url_path, sqlite_url_problem


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("db", "problem"),
    [
        ("mysql://x@y/z", "unknown database scheme 'mysql'; use a SQLite file path, "
         "sqlite:///path/to/file.sqlite3 or a postgresql:// URL"),
        ("sqlite://relative.db", "sqlite:// is followed by an absolute path, as in "
         "sqlite:///path/to/file.sqlite3; give a relative path without sqlite://"),
    ],
)  # fmt: skip
def test_a_db_no_store_opens_is_named_as_given(
    db: str, problem: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # "store.db: unknown database scheme" sent someone who typed --db to the settings' docs.
    for argv in (["stats"], ["conversations", "list"], ["doctor"]):
        assert run(capsys, *argv, "--db", db) == (
            2, "", f"helpdesk: error: invalid option --db: {problem}\n"
        )  # fmt: skip
    monkeypatch.setenv("HELPDESK_DB", db)
    assert run(capsys, "stats") == (
        2, "", f"helpdesk: error: invalid setting store.db from HELPDESK_DB: {problem}\n"
    )  # fmt: skip


def test_a_sqlite_url_with_four_slashes_is_the_absolute_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "h.sqlite3"
    open_service(load_settings(store={"db": path})).close()
    for url in (f"sqlite://{path}", f"sqlite:///{path}", f"SQLite://{path}"):
        code, out, err = run(capsys, "doctor", "--db", url, "--json")
        assert code == 0, err
        assert json.loads(out)["database"] == str(path)  # Not "//tmp/…".


def test_the_rules() -> None:
    assert sqlite_url_problem("/srv/h.db") is None and sqlite_url_problem("h.db") is None
    assert sqlite_url_problem("postgresql://u@h/d") is None
    assert sqlite_url_path("sqlite:////srv/h.db") == "/srv/h.db"
    assert sqlite_url_path("relative.db") == "relative.db"
