"""A process for the migration race (tests/store/test_postgres.py): kept apart from the test
module, which imports Textual, because each racer imports the module its target lives in."""

from __future__ import annotations

import multiprocessing
import time
from multiprocessing.synchronize import Barrier

from chatbot.store.postgres import PostgresStore


def open_at_once(
    url: str, barrier: Barrier, opened: multiprocessing.Queue[tuple[float, int, float]]
) -> None:
    """Open the store as soon as every racer is ready: when it began, its schema version, when
    it was done."""
    barrier.wait()
    began = time.monotonic()
    store = PostgresStore.open(url)
    done = time.monotonic()
    store.close()
    opened.put((began, store.schema_version, done))
