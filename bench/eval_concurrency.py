"""`helpdesk eval` live, one question at a time beside several at once, against a loopback Valen
that answers every request after a fixed delay.

A tester's 32 questions took 2 min 42 s one at a time against a 5 s Valen. Here the same 32
(`tests/data/customer_questions.json` against the shipped knowledge base, 83 judgments) run as
`helpdesk eval --replay off --json` in a fresh process each time, with `--concurrency 1` and with
`--concurrency N` (default 8, the bot's); the server (`tests/valen_server.py`) is a process of
its own. Each run times both and takes the ratio within the run (one at a time ÷ several at
once); the figures are medians. Every report is checked to be the same as the first.

    python bench/eval_concurrency.py [--runs N] [--delay S] [--concurrency N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, median  # noqa: E402
from bench.concurrent_questions import server_process  # noqa: E402
from chatbot.knowledge_base.errors import shipped_knowledge_base  # noqa: E402

QUESTIONS = ROOT / "tests" / "data" / "customer_questions.json"
DELAY_S = 0.3


def run_eval(base_url: str, concurrency: int, cache: Path) -> tuple[float, str]:
    """Seconds one `helpdesk eval` process takes, and its report."""
    env = {**os.environ, "HELPDESK_CONFIG": os.devnull + ".toml", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "chatbot", "eval", str(QUESTIONS),
               "--passages", str(shipped_knowledge_base()), "--replay", "off",
               "--base-url", base_url, "--cache", str(cache), "--json",
               "--concurrency", str(concurrency)]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"helpdesk eval failed ({done.returncode}): {done.stderr.strip()}")
    return elapsed, done.stdout


def measure(runs: int, delay_s: float = DELAY_S, concurrency: int = 8) -> dict[str, float | int]:
    """Median wall times of a live `helpdesk eval`, one question at a time and `concurrency` at
    once, against a loopback Valen answering after `delay_s`."""
    sequential: list[float] = []
    concurrent: list[float] = []
    ratios: list[float] = []
    reports: set[str] = set()
    with server_process(delay_s) as base_url, tempfile.TemporaryDirectory() as scratch:
        cache = Path(scratch) / "cache.json"
        for _ in range(runs):
            one, report = run_eval(base_url, 1, cache)
            several, other = run_eval(base_url, concurrency, cache)
            reports.update((report, other))
            sequential.append(one)
            concurrent.append(several)
            ratios.append(one / several)
    if len(reports) != 1:
        raise RuntimeError("the reports differ between runs")
    judgments = json.loads(reports.pop())["judgments"]
    if judgments["judged"] != judgments["asked"]:
        raise RuntimeError(f"not every judgment was made: {judgments}")
    return {
        "eval_sequential_s": round(median(sequential), 3),
        "eval_concurrent_s": round(median(concurrent), 3),
        "eval_concurrency_ratio": round(median(ratios), 2),
        "eval_concurrency": concurrency,
        "eval_delay_s": delay_s,
        "eval_judgments": judgments["asked"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--delay", type=float, default=DELAY_S, help="the server's delay, s")
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    print(json.dumps(measure(args.runs, args.delay, args.concurrency), indent=2))


if __name__ == "__main__":
    main()
