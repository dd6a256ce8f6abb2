"""`kb restore` of the current version, `kb add` over a deleted passage's id, `kb history` of
title and tag changes, and `kb synonyms add` of a word another group has: each says what it did."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.knowledge_base.models import Passage
from chatbot.knowledge_base.store import PassageStore
from tests.cli_run import run_cli
from tests.kb.backends import KnowledgeBaseBackend, kb_backend

__all__ = ["kb_backend"]


def kb(capsys: pytest.CaptureFixture[str], path: Path, *argv: str) -> tuple[str, str]:
    code, out, err = run_cli(capsys, "kb", *argv, "--kb", str(path))
    assert code == 0, err
    return out, err


def test_restoring_the_current_version_again_says_so_and_adds_no_history(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb(capsys, kb_copy, "edit", "helmet", "--text", "Helmets for all.")
    out, _ = kb(capsys, kb_copy, "restore", "helmet", "--version", "1")
    assert out.startswith("restored helmet")
    assert len(PassageStore(kb_copy).history("helmet")) == 2
    out, _ = kb(capsys, kb_copy, "restore", "helmet", "--version", "1")
    assert out == "helmet unchanged: version 1 is already the current version\n"
    assert len(PassageStore(kb_copy).history("helmet")) == 2


def test_adding_a_deleted_passages_id_says_its_history_continues(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb(capsys, kb_copy, "rm", "helmet")
    out, _ = kb(capsys, kb_copy, "add", "--id", "helmet", "--text", "Bring your own helmet.")
    added, said = out.splitlines()
    assert added.startswith("added helmet")
    assert said == (
        "a deleted passage had the id helmet: its history continues under it (1 earlier "
        "version; see helpdesk kb history helmet, and bring one back with helpdesk kb restore "
        "helmet --version N)"
    )
    out, _ = kb(capsys, kb_copy, "add", "--id", "lost-item", "--text", "Kept 30 days.")
    assert len(out.splitlines()) == 1


def test_history_shows_a_change_of_title_or_tags(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb(capsys, kb_copy, "edit", "helmet", "--title", "Helmet rules")
    kb(capsys, kb_copy, "edit", "helmet", "--tag", "rides", "--tag", "night")
    kb(capsys, kb_copy, "edit", "helmet", "--text", "Helmets for all.")
    out, _ = kb(capsys, kb_copy, "history", "helmet")
    lines = out.splitlines()
    assert lines[1] == "      title: 'Helmets' -> 'Helmet rules'"
    assert lines[3] == "      tags: equipment -> rides, night"
    assert lines[4].startswith("   3  ") and lines[5] == "   -  current"


def test_adding_to_a_word_of_another_group_joins_that_group(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb(capsys, kb_copy, "synonyms", "add", "helmet", "headgear")
    out, err = kb(capsys, kb_copy, "synonyms", "add", "Headgear", "cap")
    assert out == "helmet = headgear, cap\n"
    assert err == "'Headgear' is in the group 'helmet' already: added to it\n"
    assert PassageStore(kb_copy).synonyms() == (("helmet", "headgear", "cap"),)


def test_a_restore_of_the_current_version_writes_nothing_on_either_backend(
    kb_backend: KnowledgeBaseBackend,
) -> None:
    store = kb_backend.open()
    first = store.add(Passage(id="helmet", text="Helmets."))
    store.save(Passage(id="helmet", text="Helmets for all."), based_on=first.revision)
    store.restore("helmet", version=1)
    stamp = store.stamp()
    again = store.restore("helmet", version=1)
    assert again.revision == first.revision
    assert [v.number for v in store.history("helmet")] == [1, 2]
    assert store.stamp() == stamp  # Nothing written, nothing announced.
