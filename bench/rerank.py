"""Issue 2's rerank benchmark: judging k passages should take about one request's time.

A loopback Valen-compatible server (`tests/valen_server.py`) answers every request after 300 ms.
The judge and client are built the way the app builds them (`chatbot.assembly`, default
settings, replay off), so the pool size and in-flight cap are the app's. Each run times one
judgment, then k=5 and k=20, and takes the ratios within that run; the result is their median.

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
from chatbot.assembly import make_http_client, make_valen_client  # noqa: E402
from chatbot.config import Settings, ValenSettings  # noqa: E402
from chatbot.valen.judge import PassageJudge  # noqa: E402
from tests.valen_server import ValenTestServer, constant  # noqa: E402

DELAY_S = 0.3
QUESTION = "I was charged twice for the same ride, can I get my money back?"


def passages(count: int) -> list[str]:
    """Distinct passage texts; the content does not matter to the loopback server."""
    return [f"Passage {i}: double charges are refunded within five days." for i in range(count)]


async def _measure(base_url: str, runs: int) -> dict[str, float | int]:
    # The app's own settings, pointed at the loopback server; nothing read from the user's files.
    settings = Settings.model_construct(
        valen=ValenSettings(base_url=base_url, replay="off"),
    )
    async with make_http_client(settings) as http:
        judge = PassageJudge(replay="off", client=make_valen_client(settings, http))

        async def timed(k: int) -> float:
            started = time.perf_counter()
            outcomes = await judge.judge(QUESTION, passages(k))
            elapsed = time.perf_counter() - started
            bad = [o for o in outcomes if not isinstance(o, float)]
            if bad:
                raise RuntimeError(f"judging failed during the benchmark: {bad[0]!r}")
            return elapsed

        # Open the pool's connections first: a running app has them open after its first question.
        await timed(20)
        ratios5: list[float] = []
        ratios20: list[float] = []
        singles: list[float] = []
        for _ in range(runs):
            one = await timed(1)
            singles.append(one)
            ratios5.append(await timed(5) / one)
            ratios20.append(await timed(20) / one)
    return {
        "rerank_ratio_k5": round(median(ratios5), 3),
        "rerank_ratio_k20": round(median(ratios20), 3),
        "rerank_one_judgment_ms": round(median(singles) * 1000, 1),
        "rerank_max_in_flight": settings.valen.max_in_flight,
    }


def loopback_server() -> ValenTestServer:
    """The test server (TCP_NODELAY, a deep listen backlog) answering 0.9 after 300 ms."""
    return ValenTestServer(constant(0.9, DELAY_S)).start()


def measure(runs: int) -> dict[str, float | int]:
    """Median rerank ratios over `runs` runs against a 300 ms loopback server."""
    server = loopback_server()
    try:
        return asyncio.run(_measure(server.base_url, runs))
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("HELPDESK_CONFIG", os.devnull)
    print(json.dumps(measure(args.runs), indent=2))


if __name__ == "__main__":
    main()
