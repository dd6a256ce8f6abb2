"""Editing synonyms (issue 15): the editor's lines, the file written back atomically and
revision-checked behind `PassageStore`, `helpdesk kb synonyms list|add|rm`, `kb check` naming
groups that find nothing, and the live engine picking up a save."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chatbot.engine.engine import Engine
from chatbot.engine.live import LiveEngine
from chatbot.knowledge_base import load_knowledge_base
from chatbot.knowledge_base.store import ConflictError, PassageStore
from chatbot.knowledge_base.synonyms import (
    SYNONYMS_FILE,
    group_line,
    load_synonyms,
    parse_synonym_lines,
    synonyms_toml,
)
from chatbot.retrieval.retrievers import BM25Retriever, unmatched_synonyms
from chatbot.valen.cache import ReplayCache
from chatbot.valen.judge import PassageJudge
from tests.kb.helpers import run_cli, snapshot


def test_lines_become_groups_and_each_bad_line_is_named() -> None:
    text = "\n".join([
        "# a comment, then a blank line",
        "",
        "senior = pensioner, retiree ,elderly",
        "helmet",
        "bike = ",
        "a = b = c",
        "Senior = old",
        "x, y = z",
        "e-bike = electric bike",
    ])  # fmt: skip
    groups, problems = parse_synonym_lines(text)
    assert groups == (("senior", "pensioner", "retiree", "elderly"), ("e-bike", "electric bike"))
    assert [p.split(":")[0] for p in problems] == ["line 4", "line 5", "line 6", "line 7", "line 8"]
    assert problems[0] == "line 4: no '=': write word = synonym, synonym"
    assert problems[3] == "line 7: 'Senior' already starts line 3"


def test_the_written_file_loads_back_the_same_groups(tmp_path: Path) -> None:
    groups = (
        ("senior", "pensioner", "retiree"),
        ("return station", "dock"),
        ('quote "me"', "back\\slash", "自行车"),
    )
    (tmp_path / SYNONYMS_FILE).write_text(synonyms_toml(groups), encoding="utf-8")
    assert load_synonyms(tmp_path) == groups
    assert parse_synonym_lines("\n".join(group_line(g) for g in groups)) == (groups, [])


def test_saves_are_atomic_and_refused_after_someone_else_saved(kb_copy: Path) -> None:
    store = PassageStore(kb_copy)
    assert store.synonyms() == () and store.synonyms_revision() is None
    first = store.save_synonyms([("senior", "pensioner")], based_on=None)
    assert store.synonyms_revision() == first
    with pytest.raises(ConflictError, match="changed by someone else"):
        store.save_synonyms([("bike", "bicycle")], based_on=None)
    store.save_synonyms([("bike", "bicycle")], based_on=first)
    assert store.synonyms() == (("bike", "bicycle"),)
    # No temporary file is left beside it.
    assert sorted(p.name for p in kb_copy.glob(".*.tmp")) == []


def test_unmatched_synonyms_are_groups_no_passage_has_a_word_of(kb_copy: Path) -> None:
    passages = load_knowledge_base(kb_copy)
    groups = [("helmet", "headgear"), ("zorb", "blorp"), ("head protection", "lid"),
              ("refunds", "reimbursed"), ("damaged bike", "wreck")]  # fmt: skip
    # A word any passage has (as BM25 indexes it, stemmed) makes a group useful; a phrase needs
    # every one of its words: no passage says "head".
    assert unmatched_synonyms(passages, groups) == [("zorb", "blorp"), ("head protection", "lid")]


def test_a_save_reaches_the_live_engine(kb_copy: Path, tmp_path: Path) -> None:
    passages = load_knowledge_base(kb_copy)
    judge = PassageJudge(replay="on", cache=ReplayCache(tmp_path / "none.json"), client=None)
    live = LiveEngine(Engine(retriever=BM25Retriever(passages), judge=judge), PassageStore(kb_copy))
    question = "Do you lend headgear?"
    assert live.engine.retrieve(question) == []
    assert live.passages is not None
    live.passages.save_synonyms([("helmet", "headgear")], based_on=None)
    assert live.changed()
    asyncio.run(live.poll())
    assert [r.passage.id for r in live.engine.retrieve(question)][:1] == ["helmet"]


def test_cli_add_list_rm(kb_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb = ["--kb", str(kb_copy)]
    assert run_cli(capsys, "kb", "synonyms", "add", "helmet", "headgear", *kb)[:2] == (
        0, "helmet = headgear\n",
    )  # fmt: skip
    code, out, _ = run_cli(capsys, "kb", "synonyms", "add", "HELMET", "head protection", *kb)
    assert (code, out) == (0, "helmet = headgear, head protection\n")
    run_cli(capsys, "kb", "synonyms", "add", "senior", "pensioner", "retiree", *kb)
    code, out, err = run_cli(capsys, "kb", "synonyms", "list", *kb)
    assert code == 0 and "2 synonym groups" in err
    assert out.splitlines() == [
        "helmet = headgear, head protection", "senior = pensioner, retiree",
    ]  # fmt: skip
    code, out, _ = run_cli(capsys, "kb", "synonyms", "rm", "senior", "retiree", *kb)
    assert (code, out) == (0, "senior = pensioner\n")
    code, out, _ = run_cli(capsys, "kb", "synonyms", "rm", "senior", "pensioner", *kb)
    assert code == 0 and "no synonyms left" in out
    code, out, _ = run_cli(capsys, "kb", "synonyms", "rm", "helmet", *kb)
    assert (code, out) == (0, "removed helmet = headgear, head protection\n")
    assert load_synonyms(kb_copy) == ()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["rm", "nope"], "synonyms: no group starts with 'nope'\n"),
        (["rm", "helmet", "cap"], "synonyms: 'helmet' has no synonym 'cap'\n"),
        (["add", "bike", "a,b"], "synonyms: 'bike': the synonym 'a,b' holds ','"),
        (["add", "bike", "  "], "an empty word"),
        (["add", "bike", "x" * 101], "longer than 100 characters"),
    ],
)
def test_cli_refusals_are_one_line_and_change_nothing(
    kb_copy: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    PassageStore(kb_copy).save_synonyms([("helmet", "headgear")], based_on=None)
    before = snapshot(kb_copy)
    code, out, err = run_cli(capsys, "kb", "synonyms", *argv, "--kb", str(kb_copy))
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and message in err
    assert snapshot(kb_copy) == before


def test_check_lists_synonyms_that_find_nothing_and_a_broken_file(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = PassageStore(kb_copy)
    store.save_synonyms([("helmet", "headgear"), ("zorb", "blorp")], based_on=None)
    code, out, _ = run_cli(capsys, "kb", "check", "--kb", str(kb_copy))
    assert code == 0
    assert "note: synonyms 'zorb = blorp': no passage has any of these words" in out
    assert "helmet" not in out
    (kb_copy / SYNONYMS_FILE).write_text("x = [1\n")
    code, out, _ = run_cli(capsys, "kb", "check", "--kb", str(kb_copy))
    assert code == 1 and "problem:" in out and "synonyms.toml: malformed TOML" in out
