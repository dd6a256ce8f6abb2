"""`kb edit --tag` says what it replaced (and `--add-tag` keeps the tags); `kb show --version N`
prints an earlier version whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.knowledge_base.store import PassageStore
from tests.cli_run import run_cli


def test_tag_replaces_every_tag_and_says_so(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = ["--kb", str(kb_copy)]
    store = PassageStore(kb_copy)
    seen = store.get("helmet")
    store.save(seen.passage.model_copy(update={"tags": ("rides", "safety")}),
               based_on=seen.revision)  # fmt: skip
    code, out, err = run_cli(capsys, "kb", "edit", "helmet", "--tag", "night", *kb)
    assert code == 0, err
    assert "tags: night (was: rides, safety)" in out.splitlines()
    assert store.get("helmet").passage.tags == ("night",)
    code, out, err = run_cli(capsys, "kb", "edit", "--help")
    assert "replacing every tag" in " ".join(out.split())


def test_add_tag_keeps_the_tags_there(kb_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb = ["--kb", str(kb_copy)]
    before = PassageStore(kb_copy).get("helmet").passage.tags
    code, out, err = run_cli(
        capsys, "kb", "edit", "helmet", "--add-tag", "night", "--add-tag", before[0], *kb
    )
    assert code == 0, err
    assert PassageStore(kb_copy).get("helmet").passage.tags == (*before, "night")
    assert f"tags: {', '.join((*before, 'night'))} (was: {', '.join(before)})" in out
    # Text alone says nothing of tags.
    code, out, _ = run_cli(capsys, "kb", "edit", "helmet", "--text", "Helmets: ask us.", *kb)
    assert code == 0 and "tags:" not in out


def test_show_prints_an_earlier_version_whole(
    kb_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = ["--kb", str(kb_copy)]
    long_text = "If your bike is stolen, report it to the police at once. " * 20
    assert run_cli(capsys, "kb", "edit", "helmet", "--text", long_text, *kb)[0] == 0
    assert run_cli(capsys, "kb", "edit", "helmet", "--text", "Short now.", *kb)[0] == 0
    code, out, err = run_cli(capsys, "kb", "history", "helmet", *kb)
    assert "kb show helmet --version N" in err
    code, out, err = run_cli(capsys, "kb", "show", "helmet", "--version", "2", *kb)
    assert code == 0, err
    assert "version:  2, archived" in out and "replaced by edit" in out
    assert " ".join(out.split("\n\n", 1)[1].split()) == " ".join(long_text.split())
    code, out, _ = run_cli(capsys, "kb", "show", "helmet", "--version", "2", "--json", *kb)
    assert json.loads(out)["text"] == long_text.strip()
    # A deleted passage's versions are shown too; a missing number names the ones there are.
    assert run_cli(capsys, "kb", "rm", "helmet", *kb)[0] == 0
    code, out, _ = run_cli(capsys, "kb", "show", "helmet", "--version", "3", *kb)
    assert code == 0 and "Short now." in out
    code, out, err = run_cli(capsys, "kb", "show", "helmet", "--version", "9", *kb)
    assert code == 2 and "has no version 9 (versions: 1, 2, 3)" in err
