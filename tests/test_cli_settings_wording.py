"""Refusals say what to write, in the words of the file being written, never pydantic's: a path
given as a number named `knowledge_base.path.constrained-str`, a section given as a value "a
valid dictionary or instance of KnowledgeBaseSettings", an eval file's question given as a string
"a valid dictionary or instance of LabelledQuery". And a settings file that is a link to nothing
is said, as a missing `HELPDESK_CONFIG` file is: it left every default in force unsaid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_process import helpdesk
from tests.cli_run import run_cli


def settings_file(tmp_path: Path, text: str) -> Path:
    """The settings file where the test's `XDG_CONFIG_HOME` puts it, holding `text`."""
    path = tmp_path / "config" / "helpdesk" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("[knowledge_base]\npath = 5\n", "knowledge_base.path in {path}: Input should be a valid"
                                         " string"),
        ("knowledge_base = 5\n", "knowledge_base in {path}: expected a table of settings"
                                 " ([knowledge_base] with its keys under it)"),
    ],
)  # fmt: skip
def test_a_setting_of_the_wrong_kind_is_named_as_the_file_names_it(
    text: str, refused: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = settings_file(tmp_path, text)
    code, out, err = run_cli(capsys, "doctor", "--db", str(tmp_path / "d.db"))
    assert (code, out) == (2, "")
    assert err == f"helpdesk: error: invalid setting {refused.format(path=path)}\n"


@pytest.mark.parametrize(
    ("query", "refused"),
    [
        ("x", 'expected an object such as {"text": "Can I get a refund?", "relevant":'
              ' ["refunds"]}'),
        ({"text": "x", "relevant": "a"}, 'relevant: expected a list of passage ids, such as'
                                         ' ["refunds"]'),
    ],
)  # fmt: skip
def test_an_eval_question_that_is_not_one_says_what_one_looks_like(
    query: object, refused: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "ev.json"
    passage = {"id": "a", "title": "A", "text": "Some words.", "tags": []}
    data.write_text(json.dumps({"passages": [passage], "queries": [query]}))
    code, out, err = run_cli(capsys, "eval", str(data))
    assert (code, out) == (2, "")
    assert err == f"helpdesk: error: {data}: queries[0]: {refused}\n"


def test_a_settings_file_that_links_to_nothing_is_warned_about(tmp_path: Path) -> None:
    link = tmp_path / "config" / "helpdesk" / "config.toml"
    link.parent.mkdir(parents=True)
    link.symlink_to("../../dotfiles/helpdesk.toml")  # Not checked out here.
    result = helpdesk("doctor", "--db", str(tmp_path / "d.db"))
    assert result.returncode == 0
    assert result.stderr == (
        f"helpdesk: warning: {link}: a link to ../../dotfiles/helpdesk.toml, which does not"
        " exist; settings from it not used\n"
    )
    # Named by HELPDESK_CONFIG, it is said as that variable's.
    named = tmp_path / "named.toml"
    named.symlink_to("gone.toml")
    result = helpdesk("doctor", "--db", str(tmp_path / "d.db"), env={"HELPDESK_CONFIG": str(named)})
    assert result.stderr == (
        f"helpdesk: warning: HELPDESK_CONFIG={named}: a link to gone.toml, which does not exist;"
        " settings from it not used\n"
    )
