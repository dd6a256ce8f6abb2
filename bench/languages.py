"""What languages cost: reading a conversation's locale with its partial index (migration 6),
beside the same read without the locale and with the locale found by walking the log; and
compiling the Chinese catalog from its .po on first use. Prints one JSON object.

    python bench/languages.py [--entries N] [--reads N]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine, median  # noqa: E402
from chatbot.i18n import translations  # noqa: E402
from chatbot.store.sqlite import SQLiteStore  # noqa: E402


def per_read_us(store: SQLiteStore, query: str, conversation_id: int, reads: int) -> float:
    """Median over five batches of the microseconds one read takes."""
    batches = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(reads):
            store._db.execute(query, (conversation_id,)).fetchone()
        batches.append((time.perf_counter() - started) / reads * 1e6)
    return median(batches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=2000, help="messages in the conversation")
    parser.add_argument("--reads", type=int, default=500, help="reads per batch")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        from chatbot.desk.service import DeskService

        desk = DeskService(SQLiteStore.open(Path(folder) / "bench.sqlite3"))
        conversation_id = desk.ask(None, "你好，我的车坏了").conversation.id
        for number in range(args.entries):
            desk.ask(conversation_id, f"message {number}")
        store = desk.store
        assert isinstance(store, SQLiteStore)
        indexed = f"{SQLiteStore._CONVERSATION} WHERE c.id = ?"
        start = indexed.index(", (SELECT json_extract")
        without = indexed[:start] + " FROM conversations c WHERE c.id = ?"
        walking = indexed.replace("FROM entries l WHERE", "FROM entries l NOT INDEXED WHERE")
        figures = {
            "entries": args.entries,
            "read_with_indexed_locale_us": per_read_us(store, indexed, conversation_id, args.reads),
            "read_without_locale_us": per_read_us(store, without, conversation_id, args.reads),
            "read_with_walked_locale_us": per_read_us(store, walking, conversation_id, args.reads),
        }
        desk.close()
    started = time.perf_counter()
    translations.cache_clear()
    translations("zh").gettext("Quit")
    figures["compile_zh_catalog_ms"] = (time.perf_counter() - started) * 1e3
    figures["indexed_over_without"] = round(
        float(figures["read_with_indexed_locale_us"]) / float(figures["read_without_locale_us"]), 2
    )
    figures["walked_over_without"] = round(
        float(figures["read_with_walked_locale_us"]) / float(figures["read_without_locale_us"]), 2
    )
    print(json.dumps({"machine": machine(), **figures}, indent=2))


if __name__ == "__main__":
    main()
