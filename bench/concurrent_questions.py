"""Issue 13: 50 customer questions at once, k=5 each, against a 300 ms loopback Valen.

Ours is the app's path: 50 `PassageJudge.judge` calls of 5 passages each, gathered, with the
HTTP client and the Valen client built as the app builds them (`chatbot.assembly`, default
settings, replay off). Three floors send the same 250 requests (same bodies, same server), each
a `gather` of post-and-read-the-JSON with no in-flight cap:

- the floor (`*_floor_*`), issue 13's: bare asyncio + httpx, one `AsyncClient` with no pool limit;
- `*_aiohttp_floor_*`: bare asyncio + aiohttp, one `ClientSession` with no connection limit, the
  fastest way we know to send these requests from Python;
- `*_transport_floor_*`: the bare httpx loop over the app's transport
  (`chatbot.valen.transport.ValenTransport`, httpx over aiohttp's pool): what httpx and the
  transport cost per request, so the difference to ours is the Valen client's own work.

The server runs in its own process (`python -m tests.valen_server`), so the CPU time measured
here (`time.process_time`, every thread of this process) is the client's alone. Every pool is
warmed first, as a running app's would be. Each run times the floors, then ours; ratios are
within the run and the figures are medians over the runs. `run.py --quick` times the bare httpx
floor in the first run only (it is most of the benchmark's time).

    python bench/concurrent_questions.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp  # noqa: E402
import httpx  # noqa: E402

from bench.common import ROOT, median  # noqa: E402
from chatbot.assembly import make_http_client, make_valen_client  # noqa: E402
from chatbot.config import Settings, ValenSettings  # noqa: E402
from chatbot.valen.judge import PassageJudge  # noqa: E402
from chatbot.valen.protocol import PREDICATE, input_text  # noqa: E402
from chatbot.valen.transport import ValenTransport  # noqa: E402

DELAY_S = 0.3
QUESTIONS = 50
K = 5


@contextmanager
def server_process(delay_s: float = DELAY_S) -> Iterator[str]:
    """A loopback Valen (`tests/valen_server.py`) in a child process; yields its base URL."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.valen_server", "--delay", str(delay_s)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert child.stdin is not None and child.stdout is not None
    try:
        base_url = child.stdout.readline().strip()
        if not base_url.startswith("http://"):
            raise RuntimeError(f"the loopback server did not start: {base_url!r}")
        yield base_url
    finally:
        child.stdin.close()  # The server stops when its stdin closes.
        child.wait(timeout=10)


def questions(count: int = QUESTIONS) -> list[str]:
    return [f"Question {i}: I was charged twice for the same ride, refund?" for i in range(count)]


def passages(count: int) -> list[str]:
    """Distinct passage texts; the content does not matter to the loopback server."""
    return [f"Passage {i}: double charges are refunded within five days." for i in range(count)]


def app_settings(base_url: str) -> Settings:
    """The app's own default settings pointed at `base_url`; nothing read from the user's files."""
    return Settings.model_construct(valen=ValenSettings(base_url=base_url, replay="off"))


def decisions_body(text: str) -> dict[str, Any]:
    """What the app sends for one passage (decisions dialect, no model), written out by hand."""
    question = {"type": "predicate", "name": "answers", "instructions": PREDICATE}
    return {"input": text, "questions": [question]}


class BareLoop:
    """The floor: plain asyncio + httpx, no in-flight cap, no retries, no validation beyond
    reading the probability."""

    def __init__(self, http: httpx.AsyncClient, base_url: str) -> None:
        self.http = http
        self.url = base_url + "/decisions"

    async def one(self, body: dict[str, Any]) -> float:
        response = await self.http.post(self.url, json=body)
        response.raise_for_status()
        probability: float = response.json()["answers"][0]["probability"]
        return probability

    async def many(self, bodies: list[dict[str, Any]]) -> list[float]:
        return list(await asyncio.gather(*(self.one(body) for body in bodies)))


def bare_client() -> httpx.AsyncClient:
    unlimited = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    return httpx.AsyncClient(timeout=30.0, limits=unlimited)


class AiohttpLoop:
    """The aiohttp floor: plain asyncio + aiohttp, no connection limit, no retries."""

    def __init__(self, session: aiohttp.ClientSession, base_url: str) -> None:
        self.session = session
        self.url = base_url + "/decisions"

    async def one(self, body: dict[str, Any]) -> float:
        async with self.session.post(self.url, json=body) as response:
            response.raise_for_status()
            probability: float = (await response.json())["answers"][0]["probability"]
            return probability

    async def many(self, bodies: list[dict[str, Any]]) -> list[float]:
        return list(await asyncio.gather(*(self.one(body) for body in bodies)))


def aiohttp_session() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0), timeout=aiohttp.ClientTimeout(total=30.0)
    )


async def timed(work: Callable[[], Awaitable[list[Any]]], requests: int) -> tuple[float, float]:
    """(wall seconds, client CPU ms per request) for one call of `work`; every outcome must be a
    probability, or the benchmark stops."""
    wall, cpu = time.perf_counter(), time.process_time()
    outcomes = await work()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    bad = [o for o in outcomes if not isinstance(o, float)]
    if bad or len(outcomes) != requests:
        raise RuntimeError(f"a request failed during the benchmark: {bad[:1]!r}")
    return wall, cpu * 1000 / requests


async def _measure(base_url: str, runs: int, floor_runs: int) -> dict[str, float | int]:
    asked = questions()
    texts = passages(K)
    bodies = [decisions_body(input_text(q, p)) for q in asked for p in texts]
    settings = app_settings(base_url)
    transport_http = httpx.AsyncClient(
        timeout=30.0, transport=ValenTransport(max_connections=len(bodies))
    )
    async with (
        bare_client() as floor_http,
        aiohttp_session() as session,
        transport_http,
        make_http_client(settings) as http,
    ):
        judge = PassageJudge(replay="off", client=make_valen_client(settings, http))

        async def ours() -> list[Any]:
            judged = await asyncio.gather(*(judge.judge(q, texts) for q in asked))
            return [outcome for outcomes in judged for outcome in outcomes]

        floors: dict[str, Callable[[], Awaitable[list[Any]]]] = {
            "floor": partial(BareLoop(floor_http, base_url).many, bodies),
            "aiohttp": partial(AiohttpLoop(session, base_url).many, bodies),
            "transport": partial(BareLoop(transport_http, base_url).many, bodies),
        }
        # Open every pool's connections first, as a running app has them.
        for work in (*floors.values(), ours):
            await timed(work, len(bodies))
        figures: dict[str, list[float]] = {}
        for run in range(runs):
            measured = {
                name: await timed(work, len(bodies))
                for name, work in floors.items()
                if name != "floor" or run < floor_runs
            }
            wall, cpu = await timed(ours, len(bodies))
            figures.setdefault("wall", []).append(wall)
            figures.setdefault("cpu", []).append(cpu)
            for name, (floor_wall, floor_cpu) in measured.items():
                figures.setdefault(f"{name}_wall", []).append(floor_wall)
                figures.setdefault(f"{name}_cpu", []).append(floor_cpu)
                figures.setdefault(f"{name}_ratio", []).append(wall / floor_wall)
    mid = {key: median(values) for key, values in figures.items()}
    return {
        "concurrent_50_s": round(mid["wall"], 3),
        "concurrent_50_floor_s": round(mid["floor_wall"], 3),
        "concurrent_50_ratio": round(mid["floor_ratio"], 3),
        "concurrent_50_aiohttp_floor_s": round(mid["aiohttp_wall"], 3),
        "concurrent_50_aiohttp_ratio": round(mid["aiohttp_ratio"], 3),
        "concurrent_50_transport_floor_s": round(mid["transport_wall"], 3),
        "concurrent_50_questions_per_s": round(QUESTIONS / mid["wall"], 1),
        "valen_cpu_ms_per_request": round(mid["cpu"], 3),
        "valen_cpu_floor_ms_per_request": round(mid["floor_cpu"], 3),
        "valen_cpu_aiohttp_floor_ms_per_request": round(mid["aiohttp_cpu"], 3),
        "valen_cpu_transport_floor_ms_per_request": round(mid["transport_cpu"], 3),
    }


def measure(runs: int, floor_runs: int | None = None) -> dict[str, float | int]:
    """Median figures over `runs` runs against a 300 ms loopback server in its own process; the
    bare httpx floor is timed in the first `floor_runs` of them (all by default): at 5-20 s a
    run, it is most of this benchmark's time, and ours is a small fraction of it."""
    with server_process() as base_url:
        return asyncio.run(_measure(base_url, runs, runs if floor_runs is None else floor_runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("HELPDESK_CONFIG", os.devnull + ".toml")
    print(json.dumps(measure(args.runs), indent=2))


if __name__ == "__main__":
    main()
