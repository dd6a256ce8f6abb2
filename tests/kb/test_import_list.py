"""`helpdesk kb import` takes "an export or a list of passages" (README): a bare `[...]` list is
read as the `passages` list of an export is, each passage checked alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.knowledge_base import Passage, load_knowledge_base
from chatbot.knowledge_base.storage import KnowledgeBaseError, load_passages_file
from tests.cli_run import run_cli

PASSAGES = [
    {"id": "lost-item", "text": "Lost items are kept for 30 days.", "title": "Lost items"},
    {"id": "late-fee", "text": "A late return costs 2 euros an hour.", "tags": ["payments"]},
]


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_bare_list_loads_as_an_export_does(tmp_path: Path) -> None:
    bare = load_passages_file(write(tmp_path / "list.json", PASSAGES))
    wrapped = load_passages_file(write(tmp_path / "export.json", {"passages": PASSAGES}))
    assert bare == wrapped == [Passage.model_validate(p) for p in PASSAGES]


def test_a_bare_list_imports_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, kb = write(tmp_path / "list.json", PASSAGES), tmp_path / "kb"
    code, out, err = run_cli(capsys, "kb", "import", str(source), "--kb", str(kb))
    assert code == 0, err
    assert out == f"imported {source}: 2 added, 0 replaced, 0 unchanged\n"
    assert [p.id for p in load_knowledge_base(kb)] == ["late-fee", "lost-item"]


NOT_PASSAGES = r"list\.json: expected a list of passages or an object with a 'passages' list"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (
            [PASSAGES[0], {"id": "x", "text": ""}],
            r"list\.json: \[1\]: passage 'x': text: text is empty",
        ),
        ([PASSAGES[0], "text"], r"list\.json: \[1\]: a passage must be a JSON object"),
        ([PASSAGES[0], PASSAGES[0]], r"list\.json: passage 'lost-item': duplicate id"),
        ("passages", NOT_PASSAGES),
        ({"items": PASSAGES}, NOT_PASSAGES),
    ],
)
def test_a_bad_list_is_one_line_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: object, problem: str
) -> None:
    source, kb = write(tmp_path / "list.json", data), tmp_path / "kb"
    with pytest.raises(KnowledgeBaseError, match=problem):
        load_passages_file(source)
    code, out, err = run_cli(capsys, "kb", "import", str(source), "--kb", str(kb))
    assert (code, out) == (2, "")
    assert err.startswith("helpdesk: error: ") and err.count("\n") == 1
    assert not kb.exists()
