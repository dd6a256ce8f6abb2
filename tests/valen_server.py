"""A Valen-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

It speaks both dialects (`POST /v1/decisions`, `POST /v1/systemone`), records every request it
receives (path, headers, JSON body) and answers through a replaceable `responder`, so a test can
script any reply: a probability, a refusal, an error status with any body, a delay.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Reply:
    """What the server sends back."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    """Send these bytes as they are instead of `body` as JSON."""
    delay_s: float = 0.0


Responder = Callable[[Received, int], Reply]
"""Builds the reply to a request; the int is how many requests came before this one."""


def probability_reply(received: Received, probability: float) -> Reply:
    """A well-formed answer in the request's own dialect, for every question it asked."""
    questions = received.body.get("questions", [])
    if received.path.endswith("/systemone"):
        answers = {name: {"type": "noul", "noul": probability} for name in questions}
        return Reply(body={"answers": answers, "usage": {"input_tokens": 10}})
    listed = [
        {"type": "predicate", "name": q.get("name"), "probability": probability} for q in questions
    ]
    return Reply(body={"model": "valen-test", "answers": listed, "usage": {"input_tokens": 10}})


def constant(probability: float, delay_s: float = 0.0) -> Responder:
    """Answer every question with `probability`, after `delay_s`."""

    def respond(received: Received, _: int) -> Reply:
        reply = probability_reply(received, probability)
        reply.delay_s = delay_s
        return reply

    return respond


class ValenTestServer:
    """A threaded loopback server; `base_url` ends in `/v1` like the real ones."""

    def __init__(self, responder: Responder | None = None) -> None:
        self.responder: Responder = responder or constant(0.5)
        self.received: list[Received] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # Keep test output clean.

            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                received = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with server._lock:
                    index = len(server.received)
                    server.received.append(received)
                reply = server.responder(received, index)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    headers = {"content-type": "application/json", **reply.headers}
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # The client gave up (a timeout test); nothing to answer.

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> ValenTestServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()


@contextmanager
def running(responder: Responder | None = None) -> Iterator[ValenTestServer]:
    """A started server, stopped on exit."""
    server = ValenTestServer(responder).start()
    try:
        yield server
    finally:
        server.stop()
