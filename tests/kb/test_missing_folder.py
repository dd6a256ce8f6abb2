"""A write to a knowledge-base folder that is not there is refused, never a new folder: a folder
moved away under a running editor, or a mistyped `--kb`, became a knowledge base of one passage
that every running app then switched to. An import still makes its folder, as README shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import filelock
import pytest

from chatbot.knowledge_base import Passage, load_knowledge_base
from chatbot.knowledge_base.storage import KnowledgeBaseError
from chatbot.knowledge_base.store import PassageStore
from tests.cli_run import run_cli
from tests.conftest import SEED_DATA

NEW = Passage(id="lost-item", text="Lost items are kept for 30 days.")


def files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*")
            if p.is_file() and p.name != ".lock"}  # fmt: skip


def test_adding_to_a_folder_moved_away_is_refused(kb_copy: Path) -> None:
    store = PassageStore(kb_copy)  # As a running editor holds it.
    moved = kb_copy.with_name("kb.moved")
    kb_copy.rename(moved)
    before = files(moved)
    with pytest.raises(KnowledgeBaseError, match=r"kb: knowledge base not found$"):
        store.add(NEW)
    with pytest.raises(KnowledgeBaseError, match=r"kb: knowledge base not found$"):
        store.save_synonyms([("helmet", "headgear")], based_on=None)
    assert not kb_copy.exists()
    assert files(moved) == before


def test_a_folder_moved_away_while_the_lock_is_taken_is_refused_and_not_left_made(
    kb_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """filelock makes a missing folder for its lock file: a folder moved between the store's
    check and the lock came back holding only `.lock`, which passed for the knowledge base."""
    moved = kb_copy.with_name("kb.moved")
    acquire = filelock.FileLock.acquire

    def move_then_acquire(self: filelock.FileLock, *args: Any, **kwargs: Any) -> Any:
        if kb_copy.exists():
            kb_copy.rename(moved)
        return acquire(self, *args, **kwargs)

    monkeypatch.setattr(filelock.FileLock, "acquire", move_then_acquire)
    with pytest.raises(KnowledgeBaseError, match="knowledge base not found"):
        PassageStore(kb_copy).add(NEW)
    assert not kb_copy.exists()
    assert not (moved / "lost-item.json").exists()


def test_an_import_still_makes_its_folder(tmp_path: Path) -> None:
    kb = tmp_path / "new-kb"
    report = PassageStore(kb).import_passages([NEW])
    assert report.added == ["lost-item"]
    assert load_knowledge_base(kb) == [NEW]
    PassageStore(kb).add(Passage(id="second", text="Then adding works."))
    assert [p.id for p in load_knowledge_base(kb)] == ["lost-item", "second"]


@pytest.mark.parametrize(
    "command",
    [
        ["kb", "add", "--id", "a1", "--text", "hello"],
        ["kb", "synonyms", "add", "x", "y"],
    ],
)
def test_the_cli_refuses_a_mistyped_kb_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    typo = tmp_path / "typo-kb"
    code, out, err = run_cli(capsys, *command, "--kb", str(typo))
    assert (code, out) == (2, "")
    assert err == f"helpdesk: error: {typo}: knowledge base not found\n"
    assert not typo.exists()


def test_the_cli_imports_into_a_new_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = tmp_path / "other-kb"
    code, out, err = run_cli(capsys, "kb", "import", str(SEED_DATA), "--kb", str(kb))
    assert code == 0, err
    assert "10 added" in out
    assert len(load_knowledge_base(kb)) == 10


def test_the_default_folder_is_still_made_on_first_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(capsys, "kb", "add", "--id", "a1", "--text", "hello")
    assert code == 0, err
    [default] = (tmp_path / "data").glob("*/knowledge_base")
    assert (default / "a1.json").is_file()
    assert len(load_knowledge_base(default)) > 1  # Seeded from the shipped passages first.
