"""`store_location` reads a `store.db` setting by the rule `--db` and `HELPDESK_DB` are checked
with (`chatbot.dburl`): a setting that reaches it some other way (a settings file, a `Settings`
made in code) names the same file, or is refused in the same words."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.assembly import store_location
from chatbot.dburl import sqlite_url_problem
from chatbot.errors import HelpdeskError


@pytest.mark.parametrize(
    ("db", "path"),
    [
        ("/srv/h.db", Path("/srv/h.db")),
        ("relative.db", Path("relative.db")),
        ("~/h.db", Path.home() / "h.db"),
        ("sqlite:///srv/h.db", Path("/srv/h.db")),
        ("SQLite:///srv/h.db", Path("/srv/h.db")),
        ("sqlite:////srv/h.db", Path("/srv/h.db")),  # SQLAlchemy's absolute form: not //srv.
    ],
)
def test_a_file_is_named_as_the_command_line_reads_it(db: str, path: Path) -> None:
    assert store_location(db) == path


@pytest.mark.parametrize("db", ["sqlite://relative.db", "sqlite:///h.db?mode=ro", "mysql://x/y"])
def test_a_url_the_command_line_refuses_is_refused_in_its_words(db: str) -> None:
    with pytest.raises(HelpdeskError) as refused:
        store_location(db)
    assert str(refused.value) == f"store.db: {sqlite_url_problem(db)}"


def test_an_empty_setting_and_a_postgresql_url_are_refused() -> None:
    with pytest.raises(HelpdeskError, match="^store.db is empty: "):
        store_location(" ")
    with pytest.raises(HelpdeskError, match="^store.db: a PostgreSQL URL is not a file$"):
        store_location("postgresql://ana:secret@db/helpdesk")
