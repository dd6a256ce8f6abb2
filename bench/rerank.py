"""Issues 2 and 13: judging k passages should take about one request's time, for every k the
settings allow (`engine.k` goes up to 50).

A loopback Valen-compatible server (`tests/valen_server.py`, in its own process so it does not
compete with the client for the GIL) answers every request after 300 ms. The judge and client
are built the way the app builds them (`chatbot.assembly`, default settings, replay off), so the
transport and the in-flight cap are the app's. Each run times one judgment, then k=5, k=20 and
the largest k, and takes the ratios within that run; the result is their median. The floor for
the largest k is the same requests sent by bare asyncio + httpx (no cap): its k ÷ one.

    python bench/rerank.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import median  # noqa: E402
from bench.concurrent_questions import (  # noqa: E402
    BareLoop,
    app_settings,
    bare_client,
    decisions_body,
    server_process,
)
from chatbot.assembly import make_http_client, make_valen_client  # noqa: E402
from chatbot.config import EngineSettings  # noqa: E402
from chatbot.valen.judge import PassageJudge  # noqa: E402
from chatbot.valen.protocol import input_text  # noqa: E402

DELAY_S = 0.3
QUESTION = "I was charged twice for the same ride, can I get my money back?"


def passages(count: int) -> list[str]:
    """Distinct passage texts; the content does not matter to the loopback server."""
    return [f"Passage {i}: double charges are refunded within five days." for i in range(count)]


def largest_k() -> int:
    """The largest `engine.k` the settings accept."""
    for rule in EngineSettings.model_fields["k"].metadata:
        if hasattr(rule, "le"):
            return int(rule.le)
    raise RuntimeError("engine.k has no upper bound")


async def _measure(base_url: str, runs: int) -> dict[str, float | int]:
    settings = app_settings(base_url)
    kmax = largest_k()
    async with make_http_client(settings) as http, bare_client() as floor_http:
        judge = PassageJudge(replay="off", client=make_valen_client(settings, http))
        floor = BareLoop(floor_http, base_url)

        async def timed(k: int) -> float:
            started = time.perf_counter()
            outcomes = await judge.judge(QUESTION, passages(k))
            elapsed = time.perf_counter() - started
            bad = [o for o in outcomes if not isinstance(o, float)]
            if bad:
                raise RuntimeError(f"judging failed during the benchmark: {bad[0]!r}")
            return elapsed

        async def timed_floor(k: int) -> float:
            bodies = [decisions_body(input_text(QUESTION, p)) for p in passages(k)]
            started = time.perf_counter()
            await floor.many(bodies)
            return time.perf_counter() - started

        # Open the pools' connections first: a running app has them open after its first question.
        await timed(kmax)
        await timed_floor(kmax)
        ratios: dict[str, list[float]] = {}
        singles: list[float] = []
        for _ in range(runs):
            one = await timed(1)
            singles.append(one)
            for k in (5, 20, kmax):
                ratios.setdefault(f"k{k}", []).append(await timed(k) / one)
            floor_one = await timed_floor(1)
            ratios.setdefault("floor", []).append(await timed_floor(kmax) / floor_one)
    return {
        "rerank_ratio_k5": round(median(ratios["k5"]), 3),
        "rerank_ratio_k20": round(median(ratios["k20"]), 3),
        "rerank_ratio_kmax": round(median(ratios[f"k{kmax}"]), 3),
        "rerank_floor_ratio_kmax": round(median(ratios["floor"]), 3),
        "rerank_kmax": kmax,
        "rerank_one_judgment_ms": round(median(singles) * 1000, 1),
        "rerank_max_in_flight": settings.valen.max_in_flight,
    }


def measure(runs: int) -> dict[str, float | int]:
    """Median rerank ratios over `runs` runs against a 300 ms loopback server."""
    with server_process() as base_url:
        return asyncio.run(_measure(base_url, runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("HELPDESK_CONFIG", os.devnull + ".toml")
    print(json.dumps(measure(args.runs), indent=2))


if __name__ == "__main__":
    main()
