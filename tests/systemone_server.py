"""jev-compatible-server, from PyPI, under uvicorn in a thread: the independent System One server
of tests/test_valen_systemone_server.py. Its own module so that only a worker running those
tests imports FastAPI, uvicorn and the package (0.3 s of CPU at collection otherwise)."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence

import uvicorn
from jev_compatible_server.app import create_app
from jev_compatible_server.protocol import (
    DecisionRequest,
    DecisionResponse,
    NoulAnswer,
    Usage,
)
from jev_compatible_server.runtime import DecisionRuntime

LAYOUT = re.compile(r"Customer question: (.*)\n\nHelp-center passage: (.*)", re.DOTALL)


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3}


def overlap_probability(state: str) -> float:
    """A stand-in judgment: shared long words n give n / (n + 1); 0 unless the layout parses."""
    match = LAYOUT.fullmatch(state)
    if match is None:
        return 0.0
    shared = len(words(match.group(1)) & words(match.group(2)))
    return shared / (shared + 1)


class OverlapRuntime(DecisionRuntime):
    """Answers every noul question with `overlap_probability` of the state, and keeps requests."""

    model_name = "overlap-test"

    def __init__(self) -> None:
        self.requests: list[DecisionRequest] = []

    def decide_batch(self, requests: Sequence[DecisionRequest]) -> list[DecisionResponse]:
        self.requests.extend(requests)
        return [
            DecisionResponse(
                model=self.model_name,
                answers={
                    name: NoulAnswer(type="noul", noul=overlap_probability(r.state))
                    for name in r.questions
                },
                usage=Usage(input_tokens=len(str(r.state).split())),
            )  # fmt: skip
            for r in requests
        ]


class SystemOneServer:
    """jev-compatible-server's app under uvicorn, on a free loopback port, in a thread."""

    def __init__(self) -> None:
        self.runtime = OverlapRuntime()
        config = uvicorn.Config(create_app(runtime=self.runtime), host="127.0.0.1", port=0,
                                log_level="warning", lifespan="on")  # fmt: skip
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> SystemOneServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("jev-compatible-server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *_: object) -> None:
        self._server.should_exit = True
        self._thread.join(10)

    @property
    def base_url(self) -> str:
        port = self._server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"
