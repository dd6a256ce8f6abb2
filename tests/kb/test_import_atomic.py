"""`kb import` is all or nothing: killed at any moment, readers see the knowledge base before the
import or after it, and the next write finishes or discards what the dead process left."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from chatbot.cli.main import main
from chatbot.knowledge_base import load_knowledge_base
from chatbot.knowledge_base.store import PassageStore
from tests.conftest import ROOT

COUNT = 1000


@pytest.fixture
def big_import(tmp_path: Path) -> Path:
    path = tmp_path / "import.json"
    passages = [{"id": f"imported-{n:04d}", "title": f"Imported {n}",
                 "text": f"Imported passage number {n}. " * 20} for n in range(COUNT)]  # fmt: skip
    path.write_text(json.dumps({"passages": passages}), encoding="utf-8")
    return path


# Runs `kb import`, killing itself (as a power cut or `kill -9` would) at the Nth call of a step.
KILL_AT = textwrap.dedent(
    """
    import os, signal, sys
    from chatbot.cli.main import main
    import chatbot.knowledge_base.store as store

    step, after = sys.argv[1], int(sys.argv[2])
    calls = 0

    def counted(real):
        def call(*args, **kwargs):
            global calls
            calls += 1
            if calls > after:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)
        return call

    if step == "stage":      # Writing the staged files.
        store.write_new_file = counted(store.write_new_file)
    elif step == "move":     # Moving committed files into place.
        os.replace = counted(os.replace)
    sys.exit(main(["kb", "import", *sys.argv[3:]]))
    """
)


def kill_import_at(step: str, after: int, *argv: str) -> None:
    result = subprocess.run([sys.executable, "-c", KILL_AT, step, str(after), *argv],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == -signal.SIGKILL, result.stderr


def imported(kb: Path) -> int:
    return sum(p.id.startswith("imported-") for p in load_knowledge_base(kb))


def test_killed_while_staging_nothing_is_imported_and_the_next_write_cleans_up(
    kb_copy: Path, big_import: Path
) -> None:
    kill_import_at("stage", COUNT // 2, str(big_import), "--kb", str(kb_copy))
    assert imported(kb_copy) == 0
    assert len(load_knowledge_base(kb_copy)) == 10
    store = PassageStore(kb_copy)
    assert any("interrupted before it finished" in note for note in store.check().notes)

    seen = store.get("helmet")
    store.save(seen.passage.model_copy(update={"text": "Helmets."}), based_on=seen.revision)
    assert sorted(p.name for p in kb_copy.iterdir() if p.name.startswith(".")) == [
        ".history",
        ".lock",
    ]
    assert imported(kb_copy) == 0


def test_killed_while_moving_files_in_the_whole_import_is_seen_and_then_finished(
    kb_copy: Path, big_import: Path
) -> None:
    kill_import_at("move", COUNT // 3, str(big_import), "--kb", str(kb_copy))
    # A third of the files are in place, the rest still in the committed staging folder: a reader
    # sees all of them, never a part.
    assert 0 < len(list(kb_copy.glob("imported-*.json"))) < COUNT
    assert imported(kb_copy) == COUNT
    store = PassageStore(kb_copy)
    last = f"imported-{COUNT - 1:04d}"
    assert store.get(last).passage.title == f"Imported {COUNT - 1}"
    assert store.exists(last)
    assert any("already in use" in note for note in store.check().notes)

    store.add(store.get("helmet").passage.model_copy(update={"id": "helmet-2"}))
    assert len(list(kb_copy.glob("imported-*.json"))) == COUNT
    assert not (kb_copy / ".import").exists()
    assert imported(kb_copy) == COUNT


def import_progress(kb: Path) -> int:
    """How far an import has got, from 0 to 2 * COUNT: files staged (up to COUNT), then files
    moved from the committed staging folder into place (each one counts once more)."""
    staged = 0
    for folder in kb.glob(".import*"):
        try:
            staged += len(os.listdir(folder))
        except OSError:  # Renamed (the commit) or removed between the glob and the listing.
            return import_progress(kb)
    return staged + 2 * sum(1 for _ in kb.glob("imported-*.json"))


def test_killed_at_any_moment_an_import_is_all_or_nothing(kb_copy: Path, big_import: Path) -> None:
    # A real kill at a point of the import drawn at random (staging or moving files in), waited
    # for as the files appear: one import killed, not several after guessed delays.
    command = [sys.executable, "-m", "chatbot", "kb", "import", str(big_import), "--kb",
               str(kb_copy)]  # fmt: skip
    target = random.randrange(1, 2 * COUNT)
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while process.poll() is None and import_progress(kb_copy) < target:
            assert time.monotonic() < deadline, "the import made no progress"
            time.sleep(0.02)
    finally:
        process.kill()
        process.wait()
    count = imported(kb_copy)
    assert count in (0, COUNT), (target, count)
    # Whatever happened, a further import (in this process: a process is not the point here)
    # finishes the job with nothing duplicated.
    assert main(["kb", "import", str(big_import), "--kb", str(kb_copy), "--replace"]) == 0
    assert imported(kb_copy) == COUNT
    assert not any(p.name.startswith(".import") for p in kb_copy.iterdir())
