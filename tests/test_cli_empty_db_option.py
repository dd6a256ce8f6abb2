"""`--db ""` is named as typed, as `--kb ""` is: it said `store.db is empty: ...`, a setting the
person who typed `--db` never wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_run import run_cli


@pytest.mark.parametrize(
    "argv",
    [["stats"], ["conversations", "list"], ["users", "list"], ["doctor"], ["bot"]],
    ids=" ".join,
)
@pytest.mark.parametrize("db", ["", "  "], ids=["empty", "spaces"])
def test_an_empty_db_option_is_named_as_typed(
    argv: list[str], db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(capsys, *argv, "--db", db) == (
        2, "", "helpdesk: error: invalid option --db: is empty\n"
    )  # fmt: skip


def test_an_empty_db_in_the_settings_file_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[store]\ndb = ""\n')
    monkeypatch.setenv("HELPDESK_CONFIG", str(config))
    assert run_cli(capsys, "stats") == (
        2, "", f"helpdesk: error: invalid setting store.db in {config}: is empty\n"
    )  # fmt: skip
