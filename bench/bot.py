"""Bot workers' throughput against the 300 ms loopback Valen at k=5 (`tests/valen_server.py` in a
process of its own, as the other Valen benchmarks run it, so its threads take no GIL from ours).

1. One worker (in-process, built as `helpdesk bot` builds it) with 50 questions outstanding,
   beside a bare asyncio + httpx loop making the same requests (the same bodies, 50 questions at
   once, the same client limits: 20 requests in flight) in the same run. Their ratio is the
   worker's overhead: store, lease, retrieval, recording. Goal: >= 0.8.
2. 1, 2 and 4 `helpdesk bot` processes on one SQLite file: questions per second from the first
   question stored to the last decided. With 50 questions at once each, one worker already keeps
   the machine (and the loopback server) busy, so more workers show what the CPU allows; with 5
   at once each (`_c5`), Valen's latency is the bound and each worker adds its share.

    python bench/bot.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from bench.common import ROOT  # noqa: E402
from bench.concurrent_questions import server_process  # noqa: E402
from chatbot.assembly import build_engine, make_http_client, open_service  # noqa: E402
from chatbot.config import Settings, load_settings  # noqa: E402
from chatbot.desk.aio import AsyncDesk  # noqa: E402
from chatbot.desk.bot import BotWorker  # noqa: E402
from chatbot.desk.service import DeskService  # noqa: E402
from chatbot.valen.protocol import (  # noqa: E402
    ANSWER_NAME,
    PREDICATE,
    Question,
    input_text,
    request_body,
    route,
)

DELAY_S = 0.3
OUTSTANDING = 50
WARM_UP = 50
BASE = [
    "I was charged twice for the same ride, can I get my money back?",
    "How long does a refund take to reach my card?",
    "Do I have to wear a helmet on an e-bike?",
    "The station was full so I kept riding, will I pay a late fee?",
    "How do I report damage to a bike I rented?",
]


def questions(count: int) -> list[str]:
    return [f"{BASE[i % len(BASE)]} (#{i})" for i in range(count)]


def settings_for(db: Path | str, base_url: str, cache: Path) -> Settings:
    """The settings `helpdesk bot` would read, pointed at the loopback server, replay off."""
    return load_settings(
        store={"db": db},
        valen={"replay": "off", "base_url": base_url, "cache": cache},
        engine={"k": 5},
        bot={"concurrency": OUTSTANDING},
    )


def ask_all(desk: DeskService, texts: list[str]) -> None:
    for text in texts:
        desk.ask(None, text)


def pending(desk: DeskService) -> int:
    total, after = 0, 0
    while page := desk.conversations(after_id=after, limit=1000):
        total += sum(c.pending for c in page)
        after = page[-1].id
    return total


async def _one_worker(settings: Settings, texts: list[str]) -> float:
    """Questions per second through one worker, all of them stored before it starts. A first
    worker on the same HTTP client answers a warm-up round, so the pool's connections are open,
    as a running worker's are (the bare loop warms up the same way)."""
    desk = AsyncDesk.open(lambda: open_service(settings))
    try:
        async with make_http_client(settings) as http:
            engine = build_engine(settings, http)

            async def through_a_worker(batch: list[str]) -> float:
                desk.call_blocking(lambda service: ask_all(service, batch))
                worker = BotWorker(desk, lambda: engine, concurrency=OUTSTANDING, lease_s=60,
                                   poll_s=1.0, grace_s=0)  # fmt: skip
                started = time.perf_counter()
                task = asyncio.create_task(worker.run())
                while worker.stats.settled < len(batch):
                    await asyncio.sleep(0.005)
                elapsed = time.perf_counter() - started
                worker.stop()
                await task
                if worker.stats.outcomes != {"answered": len(batch)}:
                    raise RuntimeError(f"not every question answered: {worker.stats.outcomes}")
                return len(batch) / elapsed

            await through_a_worker([f"Warm-up: {text}" for text in texts[:WARM_UP]])
            return await through_a_worker(texts)
    finally:
        await desk.aclose()


async def _bare_loop(settings: Settings, texts: list[str]) -> float:
    """The same requests with nothing in between: 50 questions at once, each its k requests."""
    async with make_http_client(settings) as http:
        engine = build_engine(settings, http)
        dialect = settings.valen.dialect
        url = settings.valen.base_url.rstrip("/") + route(dialect)
        bodies = [
            [
                request_body(dialect, text=input_text(text, r.passage.text),
                             questions=[Question(ANSWER_NAME, PREDICATE)], model=None)
                for r in engine.retrieve(text)
            ]
            for text in texts
        ]  # fmt: skip
        in_flight = asyncio.Semaphore(settings.valen.max_in_flight)
        outstanding = asyncio.Semaphore(OUTSTANDING)

        async def post(body: dict[str, Any]) -> None:
            async with in_flight:
                response = await http.post(url, json=body)
                response.raise_for_status()
                response.json()

        async def question(requests: list[dict[str, Any]]) -> None:
            async with outstanding:
                await asyncio.gather(*(post(body) for body in requests))

        await asyncio.gather(*(question(b) for b in bodies[:WARM_UP]))  # Open the pool.
        started = time.perf_counter()
        await asyncio.gather(*(question(b) for b in bodies))
        return len(texts) / (time.perf_counter() - started)


def one_worker_vs_bare(base_url: str, count: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as directory:
        settings = settings_for(Path(directory) / "bot.sqlite3", base_url, Path(directory) / "c")
        bare = asyncio.run(_bare_loop(settings, questions(count)))
        worker = asyncio.run(_one_worker(settings, questions(count)))
    return {
        "bot_one_worker_qps": round(worker, 2),
        "bot_bare_loop_qps": round(bare, 2),
        "bot_vs_bare": round(worker / bare, 3),
    }


def workers(
    base_url: str,
    processes: int,
    count: int,
    *,
    concurrency: int = OUTSTANDING,
    db: str | Path | None = None,
) -> float:
    """Questions per second through `processes` workers, ready before the first is stored; on a
    fresh SQLite file, or on the empty database `db` names (a PostgreSQL URL)."""
    with tempfile.TemporaryDirectory() as directory:
        db = db or Path(directory) / "bot.sqlite3"
        settings = settings_for(db, base_url, Path(directory) / "c")
        desk = open_service(settings)
        logs = [Path(directory) / f"bot{n}.log" for n in range(processes)]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        command = [
            sys.executable, "-m", "chatbot", "bot", "--db", str(db), "--replay", "off",
            "--base-url", base_url, "--cache", str(Path(directory) / "c"),
            "--concurrency", str(concurrency), "-k", "5",
        ]  # fmt: skip
        bots = [
            subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log.open("wb"), env=env)
            for log in logs
        ]
        try:
            deadline = time.monotonic() + 120
            while not all("answering questions" in log.read_text() for log in logs):
                if time.monotonic() > deadline or any(b.poll() is not None for b in bots):
                    raise RuntimeError("a worker did not start: " + logs[0].read_text())
                time.sleep(0.05)
            started = time.perf_counter()
            ask_all(desk, questions(count))
            while pending(desk) > 0:
                time.sleep(0.02)
            elapsed = time.perf_counter() - started
        finally:
            for bot in bots:
                bot.send_signal(signal.SIGTERM)
            for bot in bots:
                bot.wait(timeout=60)
        decided = Counter(
            d.message_id for c in desk.conversations(limit=count + 1) for d in desk.decisions(c.id)
        )
        desk.close()
    if len(decided) != count or set(decided.values()) != {1}:
        raise RuntimeError(f"{processes} workers: {len(decided)} of {count} decided, some twice?")
    return count / elapsed


def measure(quick: bool) -> dict[str, float | int]:
    count = 100 if quick else 400
    with server_process(DELAY_S) as base_url:
        results: dict[str, float | int] = dict(one_worker_vs_bare(base_url, count))
        for processes in (1, 2, 4):
            key = f"bot_qps_{processes}_worker{'s' if processes > 1 else ''}"
            results[key] = round(workers(base_url, processes, count), 2)
            few = count * 2 // 5
            results[f"{key}_c5"] = round(workers(base_url, processes, few, concurrency=5), 2)
    results["bot_questions"] = count
    results["bot_outstanding"] = OUTSTANDING
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("HELPDESK_CONFIG", os.devnull + ".toml")
    print(json.dumps(measure(args.quick), indent=2))


if __name__ == "__main__":
    main()
