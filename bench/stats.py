"""The desk's figures at scale (issue 16): `DeskService.stats` over 100,000 conversations, beside
floors measured in the same run on the same file:

- `stats_s_100k`: every figure of `helpdesk stats` over everything recorded (the widest window);
  `stats_7d_s_100k` over the last 7 of its 30 days.
- floors, on a plain sqlite3 connection: `count_entries_ms_100k`, a bare `SELECT count(*) FROM
  entries` (the biggest table the figures read; SQLite counts it from the b-tree's pages),
  `count_conversations_ms_100k`, and `scan_entries_s_100k`, one pass reading every log entry's
  time (`stats_vs_scan_entries_100k`: the figures cost that many such passes).

The data generator (`generate`) writes 30 days of conversations the way the desk does (the same
rows, events and JSON bodies), straight into one transaction: answered questions with feedback,
escalations for every reason, claims, replies, resolutions, Valen errors, repeated questions.

    python bench/stats.py [--quick] [--conversations N] [--keep PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import median, time_once  # noqa: E402
from chatbot.assembly import open_service  # noqa: E402
from chatbot.config import load_settings  # noqa: E402
from chatbot.engine.models import Answer, Candidate, Decision, Reason  # noqa: E402
from chatbot.store import codec  # noqa: E402
from chatbot.store.schema import judgment_error_counts  # noqa: E402

DAYS = 30
PASSAGES = [f"passage-{n:02d}" for n in range(40)]
QUESTIONS = [f"question number {n} about bikes, docks and refunds" for n in range(3000)]


def _body(rng: random.Random, question: str, top: float | None, kinds: list[str]) -> Any:
    """A decision's stored body as the desk writes it (texts by digest), five candidates."""
    candidates = []
    for n in range(5):
        error = kinds[n] if n < len(kinds) else None
        probability = None if error else (top if n == 0 else round(rng.random() * (top or 0), 3))
        candidates.append(
            Candidate(
                id=rng.choice(PASSAGES),
                title="A passage",
                text=f"Passage text {n}.",
                bm25=round(rng.uniform(1, 9), 2),
                probability=probability,
                error=None if error is None else f"{error}: failed",
                error_kind=error,
            )  # fmt: skip
        )
    answer = None
    if top is not None and top >= 0.7:
        answer = Answer(id=candidates[0].id, text="Passage text 0.", probability=top)
    decision = Decision(question=question, answer=answer, reason=None if answer else
                        Reason.LOW_SCORE, candidates=tuple(candidates), threshold=0.7,
                        latency_ms=rng.lognormvariate(5.8, 0.5))  # fmt: skip
    body, _ = codec.compact(decision)
    return body, decision


def generate(db: Path, conversations: int, *, seed: int = 16) -> datetime:
    """`conversations` over the 30 days before the returned moment ("now")."""
    open_service(load_settings(store={"db": db})).close()  # Creates and migrates it.
    rng = random.Random(seed)
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    start = (now - timedelta(days=DAYS)).timestamp()
    span = DAYS * 86400
    convs: list[tuple[Any, ...]] = []
    entries: list[tuple[Any, ...]] = []
    decisions: list[tuple[Any, ...]] = []
    errors: list[tuple[Any, ...]] = []
    gaps: list[tuple[Any, ...]] = []
    entry_id = 0

    def entry(cid: int, at: float, *, author: str | None = None, event: Any = None,
              text: str | None = None, agent: str | None = None, passage: str | None = None,
              decision: int | None = None, feedback: str | None = None) -> int:  # fmt: skip
        nonlocal entry_id
        entry_id += 1
        entries.append((entry_id, cid, author, None if event is None else event["type"], text,
                        agent, passage, decision, feedback,
                        None if event is None else json.dumps(event), at))  # fmt: skip
        return entry_id

    for cid in range(1, conversations + 1):
        created = start + span * (cid - 1) / conversations
        at = created + rng.uniform(1, 20)
        question = rng.choice(QUESTIONS)
        asked = entry(cid, at, author="customer", text=question)
        state, reason, agent, waiting_since, claimed_at = "bot", None, None, None, None
        roll = rng.random()
        kinds: list[str] = []
        if roll < 0.05:
            kinds = [rng.choice(["timeout", "rate-limited", "server-error"])]
        elif roll < 0.10:
            kinds = ["replay-miss"]
        top = None if rng.random() < 0.03 else round(rng.betavariate(5, 2.5), 3)
        body, made = _body(rng, question, top, kinds)
        at += made.latency_ms / 1000
        decisions.append((cid, cid, asked, "bench", None if made.answer is None else
                          made.answer.id, None if made.reason is None else made.reason.value,
                          made.top_probability, made.latency_ms, json.dumps(body), at))  # fmt: skip
        errors.extend((cid, kind, count, at) for kind, count in judgment_error_counts(body).items())
        escalate: str | None = None
        if made.answer is not None:
            entry(cid, at, event={"type": "decided", "decision": cid, "question_entry": asked,
                                  "outcome": "answered"})  # fmt: skip
            answer = entry(cid, at, author="bot", text=None, passage=made.answer.id, decision=cid)
            verdict = rng.random()
            if verdict < 0.15:
                at += rng.uniform(5, 120)
                entries[-1] = (*entries[-1][:8], "helpful", *entries[-1][9:])
                entry(cid, at, event={"type": "feedback", "entry": answer, "value": "helpful"})
            elif verdict < 0.22:
                at += rng.uniform(5, 120)
                entries[-1] = (*entries[-1][:8], "not-helpful", *entries[-1][9:])
                entry(cid, at, event={"type": "feedback", "entry": answer, "value": "not-helpful"})
                escalate = "not-helpful"
            elif verdict < 0.26:
                at += rng.uniform(5, 300)
                escalate = "customer-asked"
        else:
            escalate = made.reason.value if made.reason else "low-score"
            if kinds and kinds[0] != "replay-miss":
                escalate = "valen-error"
            elif kinds:
                escalate = "not-judged"
            if top is None and not kinds:
                escalate = "no-passages"
            entry(cid, at, event={"type": "decided", "decision": cid, "question_entry": asked,
                                  "outcome": "escalated"})  # fmt: skip
        if escalate is not None:
            state, reason, waiting_since = "waiting", escalate, at
            entry(cid, at, event={"type": "escalated", "reason": escalate,
                                  "top_probability": top, "question_entry": asked})  # fmt: skip
            gaps.append((cid, question, escalate, top, asked, at))
            if created < start + span - 3600 * 6 or rng.random() < 0.5:
                agent = rng.choice(["ana", "ben", "chen", "dara"])
                at += rng.expovariate(1 / 900)
                claimed_at = at
                state = "claimed"
                entry(cid, at, event={"type": "claimed", "agent": agent})
                at += rng.expovariate(1 / 240)
                entry(cid, at, author="agent", text="Let me look into it.", agent=agent)
                if rng.random() < 0.85:
                    at += rng.expovariate(1 / 1800)
                    state, waiting_since = "resolved", None
                    entry(cid, at, event={"type": "resolved", "agent": agent})
        convs.append((cid, state, agent, reason, top if reason else None, waiting_since,
                      created, at, claimed_at, None))  # fmt: skip

    with sqlite3.connect(db) as raw:
        raw.executemany(
            "INSERT INTO conversations (id, state, agent, reason, top_probability, waiting_since,"
            " created_at, updated_at, claimed_at, question_entry) VALUES"
            " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            convs,
        )
        raw.executemany(
            "INSERT INTO entries (id, conversation_id, author, event, text, agent, passage_id,"
            " decision_id, feedback, params, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            entries,
        )
        raw.executemany(
            "INSERT INTO decisions (id, conversation_id, message_id, worker, answer_id, reason,"
            " top_probability, latency_ms, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            decisions,
        )
        raw.executemany("INSERT INTO judgment_errors VALUES (?, ?, ?, ?)", errors)
        raw.executemany(
            "INSERT INTO escalations (conversation_id, question, reason, top_probability,"
            " after_message_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            gaps,
        )
        raw.execute("ANALYZE")
    return now


def measure(
    conversations: int = 100_000, *, runs: int = 5, keep: Path | None = None
) -> dict[str, Any]:
    suffix = "100k" if conversations == 100_000 else f"{conversations // 1000}k"
    with tempfile.TemporaryDirectory() as folder:
        db = keep or Path(folder) / "stats.sqlite3"
        started = time.perf_counter()
        now = generate(db, conversations)
        generated_s = time.perf_counter() - started
        desk = open_service(load_settings(store={"db": db}), clock=lambda: now)
        raw = sqlite3.connect(db)
        try:
            figures = desk.stats(threshold=0.7)
            assert figures.conversations == conversations
            desk.stats()  # Warm: the first read of the file pays for the page cache.
            everything = median([time_once(lambda: desk.stats(threshold=0.7)) for _ in range(runs)])
            week = now - timedelta(days=7)
            last_week = median(
                [time_once(lambda: desk.stats(since=week, threshold=0.7)) for _ in range(runs)]
            )
            count_entries = median(
                [
                    time_once(lambda: raw.execute("SELECT count(*) FROM entries").fetchone())
                    for _ in range(runs)
                ]  # fmt: skip
            )
            # A bare pass over every log entry (reading each row's time): what any figure that
            # looked at the whole log without an index would cost at least.
            scan_entries = median(
                [
                    time_once(
                        lambda: raw.execute(
                            "SELECT count(*) FROM entries WHERE +created_at >= 0"
                        ).fetchone()
                    )
                    for _ in range(runs)
                ]  # fmt: skip
            )
            count_conversations = median(
                [
                    time_once(lambda: raw.execute("SELECT count(*) FROM conversations").fetchone())
                    for _ in range(runs)
                ]  # fmt: skip
            )
            (entry_rows,) = raw.execute("SELECT count(*) FROM entries").fetchone()
        finally:
            desk.close()
            raw.close()
        size_mb = db.stat().st_size / 1e6
    return {
        f"stats_s_{suffix}": round(everything, 3),
        f"stats_7d_s_{suffix}": round(last_week, 3),
        f"count_entries_ms_{suffix}": round(count_entries * 1000, 2),
        f"count_conversations_ms_{suffix}": round(count_conversations * 1000, 2),
        f"scan_entries_s_{suffix}": round(scan_entries, 3),
        f"stats_vs_scan_entries_{suffix}": round(everything / scan_entries, 2),
        f"stats_entries_{suffix}": entry_rows,
        f"stats_db_mb_{suffix}": round(size_mb, 1),
        f"stats_generate_s_{suffix}": round(generated_s, 1),
        f"stats_bot_resolution_rate_{suffix}": round(figures.bot_resolution_rate or 0, 3),
        # Other work on the machine slows every figure: the 1-minute load average at the end.
        f"stats_loadavg_1m_{suffix}": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 runs instead of 7")
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="write the database here and keep it")
    args = parser.parse_args()
    print(json.dumps(measure(args.conversations, runs=3 if args.quick else 7, keep=args.keep),
                     indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
