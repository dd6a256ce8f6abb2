"""The handoff queue under contention: 8 processes escalate and 4 processes claim 2,000
conversations in one SQLite file, through the desk service; and, apart, how fast 4 processes
claim 2,000 conversations already waiting (claim capacity, issue 13).

Each escalating process starts its share of conversations, each a customer asking a person their
question (one write transaction: the conversation, the message and the escalation). Each claiming
process reads the queue every 20 ms and claims the waiting conversations, oldest first, until every
conversation has been claimed. A conversation is lost if nobody claims it, double claimed if two
claims both report a win. Claims per second counts won claims over the wall time from the start
signal to the last claim, so it includes waiting for escalations to arrive: that is the pipeline's
figure (`queue_pipeline_claims_per_s`). Claim capacity (`queue_claims_per_s`) is measured on its
own: every conversation is escalated first, then the claimers race for them (each takes the queue in
a different order, so they seldom collide) from the start signal to the last claim.

    python bench/handoff.py [--conversations N]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
from collections import Counter
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chatbot.assembly import open_service  # noqa: E402
from chatbot.config import load_settings  # noqa: E402
from chatbot.desk.service import DeskService  # noqa: E402

ESCALATORS = 8
CLAIMERS = 4
# Claimers look at the queue every 20 ms (the app polls every 0.5 s). Polling without a pause
# spends the 2 cores re-reading the queue instead of escalating and claiming.
POLL_S = 0.02
READY = 1000
"""`finished` counts finished escalators below this and started processes in multiples of it."""
QUESTION = "My bike will not unlock at the station. Can someone help?"


def _context() -> Any:
    """Processes forked from one server that imported this module (and so the desk and store)
    once: with "spawn", each of the 16 processes a run starts imported them again, about a
    second of the 2 cores' time apiece, which is start-up, not the race's figures."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["bench.handoff"])
    return context


def _desk(db: Path | str) -> DeskService:
    return open_service(load_settings(store={"db": db}))


def _ready(counter: Any) -> None:
    """Count this process as started (store open) in the counter's high part."""
    with counter.get_lock():
        counter.value += READY


def _wait_ready(counter: Any, processes: int) -> None:
    """Until every process has opened its store: however long that takes on a busy machine, the
    figures are the race's, not the start-up's."""
    deadline = time.monotonic() + 300
    while counter.value < READY * processes:
        if time.monotonic() > deadline:
            raise RuntimeError("the processes did not start within 300 s")
        time.sleep(0.01)


def escalate(db: Path | str, count: int, start: Event, finished: Any, results: Any) -> None:
    """Start `count` conversations and escalate each; report their ids, then count itself in
    `finished`."""
    desk = _desk(db)
    _ready(finished)
    try:
        start.wait()
        escalated = []
        for _ in range(count):
            # A customer who asks a person their question: one write (issue 13).
            escalated.append(desk.ask(None, QUESTION, to_person=True).conversation.id)
    finally:
        desk.close()
    with finished.get_lock():
        finished.value += 1
    results.put(("escalated", escalated, time.time()))


def claim(db: Path | str, agent: str, start: Event, finished: Any, results: Any) -> None:
    """Claim waiting conversations until every escalator has finished and nothing is waiting;
    report the ones won."""
    desk = _desk(db)
    _ready(finished)
    try:
        start.wait()
        won: list[tuple[int, float]] = []
        while True:
            # Read before the queue: if every escalator had finished then, an empty queue means
            # every escalation was committed and claimed.
            done = finished.value % READY == ESCALATORS
            waiting = [item.conversation_id for item in desk.queue()]
            if not waiting and done:
                break
            for conversation in waiting:
                if desk.claim(conversation, agent=agent).won:
                    won.append((conversation, time.time()))
            time.sleep(POLL_S)
    finally:
        desk.close()
    results.put(("claimed", won, time.time()))


def claim_all(db: Path, agent: str, offset: int, start: Event, ready: Any, results: Any) -> None:
    """Claim waiting conversations as fast as possible until none waits; report the ones won.
    Each claimer starts at a different place in the queue, as agents picking work would."""
    desk = _desk(db)
    _ready(ready)
    try:
        start.wait()
        won: list[tuple[int, float]] = []
        while waiting := [item.conversation_id for item in desk.queue()]:
            at = offset * len(waiting) // CLAIMERS
            for conversation in waiting[at:] + waiting[:at]:
                if desk.claim(conversation, agent=agent).won:
                    won.append((conversation, time.time()))
    finally:
        desk.close()
    results.put(("claimed", won, time.time()))


def measure_claims(conversations: int = 2000) -> dict[str, float | int]:
    """Claim capacity: `conversations` already waiting, claimed by CLAIMERS processes at once."""
    context = _context()
    with tempfile.TemporaryDirectory() as directory:
        db = Path(directory) / "queue.sqlite3"
        desk = _desk(db)
        try:
            escalated = []
            for _ in range(conversations):
                escalated.append(desk.ask(None, QUESTION, to_person=True).conversation.id)
        finally:
            desk.close()
        start = context.Event()
        ready = context.Value("i", 0)
        results = context.Queue()
        processes = [
            context.Process(target=claim_all, args=(db, f"agent{i}", i, start, ready, results))
            for i in range(CLAIMERS)
        ]
        for process in processes:
            process.start()
        _wait_ready(ready, len(processes))
        started = time.time()
        start.set()
        claims: list[tuple[int, float]] = []
        for _ in processes:
            claims.extend(results.get(timeout=300)[1])
        for process in processes:
            process.join(timeout=60)
    winners = Counter(conversation for conversation, _ in claims)
    last_claim = max((at for _, at in claims), default=started)
    return {
        "queue_claims_per_s": round(len(claims) / (last_claim - started), 1),
        "queue_claims_lost": len(set(escalated) - set(winners)),
        "queue_claims_double_claimed": sum(1 for n in winners.values() if n > 1),
    }


def measure(conversations: int = 2000, db: str | None = None) -> dict[str, float | int]:
    """On a fresh SQLite file, or on the empty database `db` names (a PostgreSQL URL)."""
    context = _context()
    with tempfile.TemporaryDirectory() as directory:
        db = db or str(Path(directory) / "queue.sqlite3")
        _desk(db).close()  # Create and migrate once, before the race.
        start = context.Event()
        finished = context.Value("i", 0)
        results = context.Queue()
        share = [conversations // ESCALATORS + (i < conversations % ESCALATORS)
                 for i in range(ESCALATORS)]  # fmt: skip
        processes = [
            context.Process(target=escalate, args=(db, n, start, finished, results)) for n in share
        ] + [
            context.Process(target=claim, args=(db, f"agent{i}", start, finished, results))
            for i in range(CLAIMERS)
        ]
        for process in processes:
            process.start()
        _wait_ready(finished, len(processes))
        started = time.time()
        start.set()
        escalated: list[int] = []
        claims: list[tuple[int, float]] = []
        escalators_done = started
        for _ in processes:
            kind, items, finished_at = results.get(timeout=300)
            if kind == "escalated":
                escalated.extend(items)
                escalators_done = max(escalators_done, finished_at)
            else:
                claims.extend(items)
        for process in processes:
            process.join(timeout=60)

        winners = Counter(conversation for conversation, _ in claims)
        desk = _desk(db)
        try:
            unclaimed = [c for c in escalated if desk.conversation(c).agent is None]
        finally:
            desk.close()
        last_claim = max((at for _, at in claims), default=started)
    return {
        "queue_lost": len((set(escalated) - set(winners)) | set(unclaimed)),
        "queue_double_claimed": sum(1 for n in winners.values() if n > 1),
        "queue_pipeline_claims_per_s": round(len(claims) / (last_claim - started), 1),
        # Escalations (start, question and escalation: one write each) per second.
        "queue_escalations_per_s": round(len(escalated) / (escalators_done - started), 1),
        "queue_conversations": len(escalated),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=2000)
    args = parser.parse_args()
    print(
        json.dumps({**measure_claims(args.conversations), **measure(args.conversations)}, indent=2)
    )


if __name__ == "__main__":
    main()
