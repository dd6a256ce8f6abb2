"""Every benchmark of issues 6 and 13, printed as one JSON object (timings are medians over
repeated runs; every ratio is taken within one run). `--quick` finishes in under three minutes on
a quiet 2-core machine.

    python bench/run.py [--quick] [--only SECTION]   (rerank, concurrent, retrieval, engine, app,
                                                     cli, queue, store, kb, kb_notify, bot, web,
                                                     console, stats, postgres)

Progress goes to stderr; stdout is the JSON alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import (  # noqa: E402
    agent_console,
    app,
    bot,
    cli,
    concurrent_questions,
    engine,
    handoff,
    kb,
    kb_notify,
    postgres,
    rerank,
    retrieval,
    stats,
    store_size,
    web,
)
from bench.common import machine  # noqa: E402

Figures = dict[str, float | int | bool | str]


def run_rerank(quick: bool) -> Figures:
    return dict(rerank.measure(3 if quick else 7))


def run_concurrent(quick: bool) -> Figures:
    # The bare httpx floor takes 5-20 s a run (httpcore's pool with 250 connections): once when
    # quick, after its warm-up, against every run of ours and the other floors.
    return dict(concurrent_questions.measure(3 if quick else 7, floor_runs=1 if quick else None))


def run_retrieval(quick: bool) -> Figures:
    return dict(retrieval.measure(quick))


def run_engine(quick: bool) -> Figures:
    return {**engine.measure_reindex(quick), **engine.measure_ask(quick)}


def run_app(quick: bool) -> Figures:
    return {**app.measure_startup(quick), **app.measure_open_conversation(quick)}


def run_cli(quick: bool) -> Figures:
    return dict(cli.measure(5 if quick else 11))


def run_queue(quick: bool) -> Figures:
    # An odd number of runs, so the median is a run's own figure (with two, the old code took
    # the smaller one).
    count = 3 if quick else 5
    runs = [{**handoff.measure_claims(2000), **handoff.measure(2000)} for _ in range(count)]

    def middle(key: str) -> float:
        return sorted(float(r[key]) for r in runs)[len(runs) // 2]

    return {
        # Any lost or double-claimed conversation in any run counts: these are correctness.
        "queue_lost": max(int(r["queue_lost"]) + int(r["queue_claims_lost"]) for r in runs),
        "queue_double_claimed": max(
            int(r["queue_double_claimed"]) + int(r["queue_claims_double_claimed"]) for r in runs
        ),
        "queue_claims_per_s": middle("queue_claims_per_s"),
        "queue_pipeline_claims_per_s": middle("queue_pipeline_claims_per_s"),
        "queue_runs": len(runs),
    }


def run_store(quick: bool) -> Figures:
    return dict(store_size.measure(2000 if quick else 10_000))


def run_kb(quick: bool) -> Figures:
    return dict(kb.measure(quick))


def run_kb_notify(quick: bool) -> Figures:
    return dict(kb_notify.flat(quick))


def run_bot(quick: bool) -> Figures:
    return dict(bot.measure(quick))


def run_web(quick: bool) -> Figures:
    return dict(web.measure(quick))


def run_console(quick: bool) -> Figures:
    return dict(agent_console.measure(quick))


def run_stats(quick: bool) -> Figures:
    # Writing 100,000 conversations takes minutes on a loaded 2-core machine: --quick measures
    # 10,000 (`stats_s_10k`), the full run 100,000 (`stats_s_100k`).
    return dict(stats.measure(10_000 if quick else 100_000, runs=3 if quick else 5))


def run_postgres(quick: bool) -> Figures:
    return dict(postgres.measure(quick))


SECTIONS: dict[str, Callable[[bool], Figures]] = {
    "rerank": run_rerank,
    "concurrent": run_concurrent,
    "retrieval": run_retrieval,
    "engine": run_engine,
    "app": run_app,
    "cli": run_cli,
    "queue": run_queue,
    "store": run_store,
    "kb": run_kb,
    "kb_notify": run_kb_notify,
    "bot": run_bot,
    "web": run_web,
    "console": run_console,
    "stats": run_stats,
    "postgres": run_postgres,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, under three minutes")
    parser.add_argument("--only", choices=sorted(SECTIONS), action="append")
    args = parser.parse_args()
    # No benchmark reads the developer's own configuration.
    os.environ["HELPDESK_CONFIG"] = os.devnull + ".toml"
    started = time.perf_counter()
    load_at_start = f"{os.getloadavg()[0]:.2f}"
    results: Figures = {}
    for name in args.only or list(SECTIONS):
        section_started = time.perf_counter()
        results.update(SECTIONS[name](args.quick))
        print(f"{name}: {time.perf_counter() - section_started:.1f} s", file=sys.stderr)
    results["quick"] = args.quick
    results["total_s"] = round(time.perf_counter() - started, 1)
    about = {**machine(), "loadavg_1m_start": load_at_start}
    print(json.dumps({**results, "machine": about}, indent=2))


if __name__ == "__main__":
    main()
