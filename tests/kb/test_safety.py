"""Crashes mid-save and two editors at once: the knowledge base stays whole and nobody's edit is
silently lost."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from filelock import FileLock

from chatbot.knowledge_base import load_knowledge_base
from chatbot.knowledge_base.storage import KnowledgeBaseError
from chatbot.knowledge_base.store import LOCK_FILE, ConflictError, PassageStore
from tests import racers
from tests.conftest import ROOT


def test_a_failed_rename_leaves_the_old_passage_and_no_debris(
    kb_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = PassageStore(kb_copy)
    seen = store.get("helmet")
    before = (kb_copy / "helmet.json").read_bytes()
    real_replace = os.replace

    def failing_replace(src: str, dst: str) -> None:
        if str(dst).endswith("helmet.json") and ".history" not in str(dst):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    edited = seen.passage.model_copy(update={"text": "new text"})
    with pytest.raises(KnowledgeBaseError, match="helmet.json: cannot write: .*No space left"):
        store.save(edited, based_on=seen.revision)

    assert (kb_copy / "helmet.json").read_bytes() == before
    assert len(load_knowledge_base(kb_copy)) == 10
    assert list(kb_copy.glob(".*.tmp")) == []  # The temporary file was cleaned up.
    assert store.history("helmet") == []  # No history for a save that did not happen.
    monkeypatch.undo()
    assert store.save(edited, based_on=seen.revision).passage == edited  # Still at `seen`.


KILLED_MID_SAVE = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from chatbot.knowledge_base.store import PassageStore

    kb = Path(sys.argv[1])
    real_replace = os.replace

    def die_before_rename(src, dst):
        # The new text is written and fsynced to the temporary file; the process dies before the
        # rename, as a power cut or `kill -9` would.
        if Path(dst) == kb / "helmet.json":
            os.kill(os.getpid(), signal.SIGKILL)
        real_replace(src, dst)

    os.replace = die_before_rename
    store = PassageStore(kb)
    seen = store.get("helmet")
    store.save(seen.passage.model_copy(update={"text": "half-saved"}), based_on=seen.revision)
    """
)


def test_a_process_killed_between_write_and_rename_leaves_the_kb_intact(kb_copy: Path) -> None:
    before = (kb_copy / "helmet.json").read_bytes()
    result = subprocess.run(
        [sys.executable, "-c", KILLED_MID_SAVE, str(kb_copy)], cwd=ROOT, timeout=60
    )
    assert result.returncode == -signal.SIGKILL

    assert (kb_copy / "helmet.json").read_bytes() == before
    assert len(load_knowledge_base(kb_copy)) == 10
    store = PassageStore(kb_copy)
    report = store.check()
    assert report.problems == []
    # The fully written temporary file is left behind, dot-named so it is never a passage.
    [leftover] = kb_copy.glob(".helmet.json.*.tmp")
    assert "half-saved" in leftover.read_text(encoding="utf-8")
    assert any("interrupted save" in note for note in report.notes)
    # The dead process's lock went with it: the next save goes through.
    seen = store.get("helmet")
    store.save(seen.passage.model_copy(update={"text": "saved"}), based_on=seen.revision)
    assert store.get("helmet").passage.text == "saved"


def _save_after_everyone_has_read(
    kb: str, text: str, barrier: object, times: multiprocessing.Queue[tuple[float, float]]
) -> None:
    store = PassageStore(Path(kb))
    seen = store.get("helmet")
    ready = time.monotonic()
    barrier.wait()  # type: ignore[attr-defined]
    try:
        store.save(seen.passage.model_copy(update={"text": text}), based_on=seen.revision)
    except ConflictError as error:
        print(f"refused {text}: {error}", flush=True)
        times.put((ready, time.monotonic()))
        raise SystemExit(1) from None
    times.put((ready, time.monotonic()))


def test_of_several_processes_saving_one_passage_exactly_one_wins(kb_copy: Path) -> None:
    # Each process reads the same revision, then all save at once: the lock makes check-and-write
    # one step, so one save wins and every other is refused instead of overwriting it.
    context = racers.context()
    barrier = context.Barrier(4)
    times: multiprocessing.Queue[tuple[float, float]] = context.Queue()
    processes = [
        racers.start(_save_after_everyone_has_read, str(kb_copy), f"editor {n}", barrier, times)
        for n in range(4)
    ]
    spans = [times.get(timeout=60) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    # They raced: all four had read the passage before any save was over (CLOCK_MONOTONIC is
    # one clock for every process on the machine).
    assert max(ready for ready, _ in spans) < min(done for _, done in spans), spans
    codes = [process.exitcode if process.exitcode is not None else -1 for process in processes]
    assert sorted(codes) == [0, 1, 1, 1]
    winner = codes.index(0)
    store = PassageStore(kb_copy)
    assert store.get("helmet").passage.text == f"editor {winner}"
    assert len(store.history("helmet")) == 1  # Only the original was replaced.


def test_a_busy_knowledge_base_is_reported_not_waited_on_forever(kb_copy: Path) -> None:
    store = PassageStore(kb_copy, lock_timeout=0.1)
    seen = store.get("helmet")
    with FileLock(str(kb_copy / LOCK_FILE)), pytest.raises(KnowledgeBaseError, match="busy"):
        store.save(seen.passage.model_copy(update={"text": "x"}), based_on=seen.revision)
    assert store.get("helmet") == seen
