"""Loading and importing a knowledge base, against the plainest way to do the same work.

- `kb_load_ms`: `load_knowledge_base` over N passage files (regular-file check without blocking
  on FIFOs, size cap, one-line errors, the committed-import overlay) against the floor: read
  each file, `json.loads` it and validate it as a `Passage`, nothing else.
- `kb_import_ms`: `PassageStore.import_passages` of M new passages, all or nothing (staged,
  fsynced, committed by one rename, moved into place) against writing the same N files with
  `write_text_atomic` one by one (M files), which a crash can leave half done.
"""

from __future__ import annotations

import gc
import json
import shutil
import tempfile
from functools import partial
from pathlib import Path

from bench.common import median, time_once, use_repo_root

use_repo_root()

from chatbot.files import write_text_atomic  # noqa: E402
from chatbot.knowledge_base.models import Passage  # noqa: E402
from chatbot.knowledge_base.storage import load_knowledge_base  # noqa: E402
from chatbot.knowledge_base.store import PassageStore, passage_file_text  # noqa: E402


def _passages(count: int) -> list[Passage]:
    return [Passage(id=f"p-{n:05d}", title=f"Passage {n}", tags=("bench",),
                    text=f"Passage number {n} says something useful. " * 8)
            for n in range(count)]  # fmt: skip


def _floor_load(directory: Path) -> list[Passage]:
    return [Passage.model_validate(json.loads(path.read_bytes()))
            for path in sorted(directory.glob("*.json"))]  # fmt: skip


def measure(quick: bool) -> dict[str, float | int]:
    count, imported, runs = (2000, 500, 3) if quick else (10_000, 3000, 3)
    passages = _passages(count)
    root = Path(tempfile.mkdtemp(prefix="bench-kb-"))
    try:
        loaded = root / "loaded"
        loaded.mkdir()
        for passage in passages:
            (loaded / f"{passage.id}.json").write_text(passage_file_text(passage))
        # In turns, each after a full collection: run after the other sections (`run.py` runs
        # them all in one process), ours went first into a large heap and paid for its garbage
        # collections, 1.5x the floor in full runs against 1.0 alone.
        pairs = []
        for _ in range(runs):
            gc.collect()
            mine = time_once(lambda: load_knowledge_base(loaded))
            gc.collect()
            pairs.append((mine, time_once(lambda: _floor_load(loaded))))
        ours = median([mine for mine, _ in pairs])
        floor = median([plain for _, plain in pairs])

        imports, writes = [], []
        batch = passages[:imported]
        for run in range(runs):
            store = PassageStore(root / f"import-{run}")
            imports.append(time_once(partial(store.import_passages, batch)))
            plain = root / f"plain-{run}"
            plain.mkdir()

            def write_each(plain: Path = plain) -> None:
                for passage in batch:
                    write_text_atomic(plain / f"{passage.id}.json", passage_file_text(passage))

            writes.append(time_once(write_each))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {
        "kb_passages": count,
        "kb_imported": imported,
        "kb_load_ms": round(ours * 1000, 1),
        "kb_load_floor_ms": round(floor * 1000, 1),
        "kb_load_ratio": round(ours / floor, 2),
        "kb_import_ms": round(median(imports) * 1000, 1),
        "kb_import_floor_ms": round(median(writes) * 1000, 1),
        "kb_import_ratio": round(median(imports) / median(writes), 2),
    }
