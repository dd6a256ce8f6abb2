"""An empty path is refused with one line naming where it was given: `Path("")` is the current
directory, so `--kb ""`, `path = ""`, `kb import ""` and `--cache ""` each used whatever folder
the command ran in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_run import run_cli
from tests.conftest import SHIPPED_KB


@pytest.fixture
def work_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current directory, holding a passage an empty path would have found."""
    folder = tmp_path / "work"
    folder.mkdir()
    passage = {"id": "stray", "text": "A stray passage in the current directory."}
    (folder / "stray.json").write_text(json.dumps(passage), encoding="utf-8")
    monkeypatch.chdir(folder)
    return folder


def write_config(tmp_path: Path, text: str) -> None:
    path = tmp_path / "config" / "helpdesk" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["kb", "list", "--kb", ""], "helpdesk: error: invalid option --kb: is empty"),
        (["--kb", "", "kb", "list"], "helpdesk: error: invalid option --kb: is empty"),
        (
            ["ask", "charged twice", "--cache", ""],
            "helpdesk: error: invalid option --cache: is empty",
        ),
        (["kb", "import", ""], "helpdesk kb import: error: argument FILE|DIR: is empty"),
    ],
)
def test_an_empty_option_is_refused(
    work_folder: Path, capsys: pytest.CaptureFixture[str], argv: list[str], error: str
) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert (code, out, err) == (2, "", error + "\n")
    assert sorted(p.name for p in work_folder.iterdir()) == ["stray.json"]


@pytest.mark.parametrize(
    ("config", "setting"),
    [
        ('[knowledge_base]\npath = ""\n', "knowledge_base.path"),
        ('[valen]\ncache = ""\n', "valen.cache"),
    ],
)
def test_an_empty_path_in_the_settings_file_is_refused(
    tmp_path: Path, work_folder: Path, capsys: pytest.CaptureFixture[str], config: str, setting: str
) -> None:
    write_config(tmp_path, config)
    if setting == "knowledge_base.path":
        code, out, err = run_cli(capsys, "kb", "list")
    else:
        code, out, err = run_cli(capsys, "ask", "charged twice", "--kb", str(SHIPPED_KB))
    path = tmp_path / "config" / "helpdesk" / "config.toml"
    assert (code, out) == (2, "")
    assert err == f"helpdesk: error: invalid setting {setting} in {path}: is empty\n"


def test_an_empty_long_environment_variable_is_refused(
    work_folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HELPDESK_KNOWLEDGE_BASE__PATH", "")
    code, out, err = run_cli(capsys, "kb", "list")
    assert (code, out) == (2, "")
    assert err == (
        "helpdesk: error: invalid setting knowledge_base.path from "
        "HELPDESK_KNOWLEDGE_BASE__PATH: is empty\n"
    )


def test_an_empty_short_environment_variable_is_still_unset(
    work_folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HELPDESK_KB", "")
    code, out, err = run_cli(capsys, "kb", "list")
    assert code == 0, err
    assert "stray" not in out and "helmet" in out  # The default knowledge base, seeded.
