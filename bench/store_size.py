"""Database bytes per conversation (issue 13): N conversations as the bot has them, each a
customer's question judged by the engine on the shipped knowledge base with recorded answers
(k=5), and its decision recorded (an answer, or an escalation to the queue).

The size is the SQLite file's after a WAL checkpoint, divided by N; the share of it the passage
texts take (stored once each, by digest, in `chatbot/store/codec.py`) and the decisions' bodies
are given beside it, from SQLite's `dbstat` table.

    python bench/store_size.py [--conversations N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.engine import SEED_QUESTIONS  # noqa: E402
from chatbot.assembly import build_engine, make_http_client, open_service  # noqa: E402
from chatbot.config import load_settings  # noqa: E402

WORKER = "bench"


async def _fill(db: Path, conversations: int) -> None:
    questions = [q["text"] for q in json.loads(SEED_QUESTIONS.read_text())["queries"]]
    settings = load_settings(store={"db": db})
    desk = open_service(settings)
    try:
        async with make_http_client(settings) as http:
            engine = build_engine(settings, http)
            decisions = {q: await engine.answer(q) for q in questions}
            for n in range(conversations):
                desk.ask(None, questions[n % len(questions)])
                for pending in desk.lease(WORKER, limit=100, lease_s=60):
                    desk.record_decision(WORKER, pending, decisions[pending.text])
    finally:
        desk.close()


def measure(conversations: int = 2000) -> dict[str, float | int]:
    with tempfile.TemporaryDirectory() as directory:
        db = Path(directory) / "size.sqlite3"
        asyncio.run(_fill(db, conversations))
        connection = sqlite3.connect(db)
        try:
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            by_table = dict(
                connection.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
            )
        finally:
            connection.close()
        size = db.stat().st_size
    decisions = by_table.get("decisions", 0)
    texts = sum(v for k, v in by_table.items() if "text" in k and not k.startswith("sqlite"))
    return {
        "db_bytes_per_conversation": round(size / conversations),
        "db_mb_per_10000_conversations": round(size / conversations * 10_000 / 1e6, 2),
        "db_decision_share": round(decisions / size, 2),
        "db_passage_text_share": round(texts / size, 3),
        "db_conversations": conversations,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=2000)
    print(json.dumps(measure(parser.parse_args().conversations), indent=2))


if __name__ == "__main__":
    main()
