"""Synonym groups added through the product (`kb synonyms add`, the editor) live in the main
`synonyms.toml`, and apply to questions in every language: a Chinese group reaches the engine
Chinese questions use. `kb check` judges each group against the passages its words' language
searches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.store import PassageStore
from tests.cli_run import run_cli


def candidates(capsys: pytest.CaptureFixture[str], question: str, kb: Path) -> list[str]:
    code, out, err = run_cli(capsys, "ask", question, "--kb", str(kb), "--json")
    assert code == 0, err
    return [c["id"] for c in json.loads(out)["candidates"]]


def test_a_chinese_group_added_from_the_command_line_finds_chinese_passages(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert candidates(capsys, "鹦鹉", kb_copy) == []
    code, out, err = run_cli(capsys, "kb", "synonyms", "add", "鹦鹉", "头盔", "--kb", str(kb_copy))
    assert code == 0 and out == "鹦鹉 = 头盔\n", err
    assert not (kb_copy / "zh" / "synonyms.toml").exists()
    assert "helmet" in candidates(capsys, "鹦鹉", kb_copy)


def test_check_judges_a_group_by_the_passages_its_language_searches(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = PassageStore(kb_copy)
    # An English passage that names a Chinese word: Chinese questions never search it.
    store.add(Passage(id="parrots", text="Parrots (鹦鹉) may not ride in the basket."))
    for words in (["单车", "自行车"], ["鹦鹉", "八哥"], ["zorb", "blorp"]):
        code, _, err = run_cli(capsys, "kb", "synonyms", "add", *words, "--kb", str(kb_copy))
        assert code == 0, err
    code, out, _ = run_cli(capsys, "kb", "check", "--kb", str(kb_copy))
    assert code == 0
    notes = [line for line in out.splitlines() if line.startswith("note: synonyms")]
    # 单车 and 自行车 are in the zh/ passages, which the main folder's are not.
    assert notes == [
        "note: synonyms '鹦鹉 = 八哥': questions in these words (Chinese) are searched in "
        "passages none of which has any of them, so they find nothing",
        "note: synonyms 'zorb = blorp': no passage has any of these words, so they find nothing",
    ]
