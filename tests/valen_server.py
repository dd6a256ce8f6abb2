"""A fault-injecting Valen-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

It speaks both dialects (`POST /v1/decisions`, `POST /v1/systemone`), checks each request against
its dialect the way a real server would (404 for an unknown route, 422 for a malformed body),
records every request it receives (path, headers, JSON body) and answers through a replaceable
`responder`, so a test can script any reply: a probability, a refusal, an error status with any
body or headers, an HTML page, a delay, a dropped connection. `scripted` plays a script per input
text, so "fail twice then answer" holds for each passage even when passages are judged at once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

MAX_SYSTEMONE_QUESTIONS = 64


@dataclass
class Received:
    """One request as the server saw it."""

    path: str
    """The path without the query string, which is in `query`."""
    headers: dict[str, str]
    body: Any
    query: str = ""


@dataclass
class Reply:
    """What the server sends back."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    """Send these bytes as they are instead of `body` as JSON."""
    delay_s: float = 0.0
    drop: bool = False
    """Close the connection without sending anything (after `delay_s`)."""
    chunks: Callable[[], Iterable[bytes]] | None = None
    """Stream these chunks with chunked transfer encoding (no content-length), made lazily, so a
    reply can be far larger than the test's memory would like."""


Responder = Callable[[Received, int], Reply]
"""Builds the reply to a request; the int is how many requests came before this one."""


def input_of(received: Received) -> str:
    """The text a request asks about, in either dialect."""
    body = received.body if isinstance(received.body, dict) else {}
    text = body.get("input", body.get("state", ""))
    return text if isinstance(text, str) else ""


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


def refusal_reply(received: Received, _index: int = 0) -> Reply:
    """Valen declining every question, in the request's dialect."""
    questions = received.body.get("questions", [])
    if received.path.endswith("/systemone"):
        return Reply(body={"answers": {name: {"type": "refusal"} for name in questions}})
    listed = [{"type": "refusal", "name": q.get("name")} for q in questions]
    return Reply(body={"model": "valen-test", "answers": listed})


def constant(probability: float, delay_s: float = 0.0) -> Responder:
    """Answer every question with `probability`, after `delay_s`."""

    def respond(received: Received, _: int) -> Reply:
        reply = probability_reply(received, probability)
        reply.delay_s = delay_s
        return reply

    return respond


def fixed(reply: Reply) -> Responder:
    """Send the same reply to every request."""
    return lambda _received, _index: reply


def html_reply(status: int = 502, title: str = "502 Bad Gateway") -> Reply:
    """A gateway's HTML error page, the kind a proxy sends when Valen is down."""
    page = (
        f"<!DOCTYPE html><html><head><title>{title}</title></head><body><center><h1>{title}</h1>"
        "</center><hr><center>nginx</center>" + "<!-- padding -->" * 40 + "</body></html>"
    )
    return Reply(status=status, raw=page.encode(), headers={"content-type": "text/html"})


Step = Reply | Responder


class Scripted:
    """Plays `steps` to each distinct input in turn: its first request gets steps[0], its second
    steps[1], ...; once the script runs out, `then` answers. Counts requests per input."""

    def __init__(self, *steps: Step, then: Responder | None = None) -> None:
        self.steps = steps
        self.then: Responder = then or constant(0.9)
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, received: Received, index: int) -> Reply:
        key = input_of(received)
        with self._lock:
            seen = self.counts.get(key, 0)
            self.counts[key] = seen + 1
        if seen >= len(self.steps):
            return self.then(received, index)
        step = self.steps[seen]
        return step if isinstance(step, Reply) else step(received, index)


def scripted(*steps: Step, then: Responder | None = None) -> Scripted:
    """See `Scripted`: e.g. `scripted(Reply(503), Reply(503))` fails twice per input, then 0.9."""
    return Scripted(*steps, then=then)


def closed_port_url() -> str:
    """A base URL on loopback where nothing listens, so a connection is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def check_request(path: str, body: Any) -> Reply | None:
    """The error a strict server would send for this request, or None when it is well formed.

    Decisions errors use the OpenAI-style envelope; System One errors are FastAPI's `detail`.
    """
    if path == "/v1/decisions":
        problem = _decisions_problem(body)
        if problem:
            error = {"message": problem, "type": "invalid_request_error"}
            return Reply(status=422, body={"error": error})
        return None
    if path == "/v1/systemone":
        problem = _systemone_problem(body)
        return Reply(status=422, body={"detail": problem}) if problem else None
    return Reply(status=404, body={"detail": "Not Found"})


def _decisions_problem(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "body is not a JSON object"
    if set(body) - {"model", "input", "questions"}:
        return f"unexpected fields {sorted(set(body) - {'model', 'input', 'questions'})}"
    if not _is_text(body.get("input")):
        return "'input' must be a non-empty string"
    if "model" in body and not _is_text(body["model"]):
        return "'model' must be a non-empty string when present"
    questions = body.get("questions")
    if not isinstance(questions, list) or not questions:
        return "'questions' must be a non-empty list"
    names = [q.get("name") if isinstance(q, dict) else None for q in questions]
    for q in questions:
        if not isinstance(q, dict) or q.get("type") != "predicate":
            return "every question must be a predicate"
        if not _is_text(q.get("name")) or not _is_text(q.get("instructions")):
            return "every question needs a name and instructions"
    if len(set(names)) != len(names):
        return "question names must be unique"
    return None


def _systemone_problem(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "body is not a JSON object"
    if set(body) - {"model", "state", "questions"}:
        return f"unexpected fields {sorted(set(body) - {'model', 'state', 'questions'})}"
    if not _is_text(body.get("state")):
        return "'state' must be a non-empty string"
    questions = body.get("questions")
    if not isinstance(questions, dict) or not questions:
        return "'questions' must be a non-empty object"
    if len(questions) > MAX_SYSTEMONE_QUESTIONS:
        return f"at most {MAX_SYSTEMONE_QUESTIONS} questions per request"
    for question in questions.values():
        if not isinstance(question, dict) or question.get("type") != "noul":
            return "every question must be a noul"
        if "criteria" in question:
            return "noul takes no criteria"
        if not _is_text(question.get("instructions")):
            return "every question needs instructions"
    return None


class _Server(ThreadingHTTPServer):
    """socketserver's listen backlog of 5 drops connections when 20 open at once (the kernel then
    retries the SYN a second later); benchmarks open 250 at once."""

    request_queue_size = 1024

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that resets a connection it is done with (a reply past its size cap, a
        # closed pool) is not a server failure worth a traceback in the test output.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class ValenTestServer:
    """A threaded loopback server; `base_url` ends in `/v1` like the real ones.

    With `validate` (the default) a malformed request is refused before the responder sees it.
    """

    def __init__(self, responder: Responder | None = None, *, validate: bool = True) -> None:
        self.responder: Responder = responder or constant(0.5)
        self.validate = validate
        self.received: list[Received] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Like production servers: without TCP_NODELAY a reply's body can wait 40 ms for the
            # client's delayed ACK of its headers, which would measure the server, not the client.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass  # Keep test output clean.

            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                target = urlsplit(self.path)
                received = Received(
                    target.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                    query=target.query,
                )
                with server._lock:
                    index = len(server.received)
                    server.received.append(received)
                reply = check_request(received.path, body) if server.validate else None
                if reply is None:
                    try:
                        reply = server.responder(received, index)
                    except Exception as error:  # A broken test responder, shown as a 599.
                        reply = Reply(status=599, body={"detail": f"responder failed: {error!r}"})
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.drop:
                    self.close_connection = True
                    return
                try:
                    self.send_response(reply.status)
                    headers = {"content-type": "application/json", **reply.headers}
                    for name, value in headers.items():
                        self.send_header(name, value)
                    if reply.chunks is not None:
                        self.send_header("transfer-encoding", "chunked")
                        self.end_headers()
                        for chunk in reply.chunks():
                            if chunk:
                                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.write(b"0\r\n\r\n")
                        return
                    payload = reply.raw if reply.raw is not None else _dumps(reply.body)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    # The client gave up (a timeout, a reply past its size cap): nothing to answer.
                    self.close_connection = True

        self._http = _Server(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        # A short poll interval so stop() returns at once: tests start one server each.
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def count(self, text: str | None = None) -> int:
        """Requests received so far, all of them or those asking about `text`."""
        with self._lock:
            return sum(1 for r in self.received if text is None or input_of(r) == text)

    def start(self) -> ValenTestServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()


def _dumps(body: Any) -> bytes:
    # json.dumps writes NaN and Infinity as bare tokens, as some servers do: tests rely on it.
    return json.dumps(body, allow_nan=True).encode()


@contextmanager
def running(responder: Responder | None = None) -> Iterator[ValenTestServer]:
    """A started server, stopped on exit."""
    server = ValenTestServer(responder).start()
    try:
        yield server
    finally:
        server.stop()


class FakeClock:
    """Time for `ValenClient(clock=...)` that moves only when the client sleeps.

    A `retry-after` of seconds passes at once, and `sleeps` records every wait the client asked
    for, so a test asserts the waits without waiting them. Each asyncio task sees only its own
    sleeps pass, as concurrent real sleeps would: two passages judged at once that each wait 2 s
    are both 2 s on, not 4. The wall clock starts at the real time, so an HTTP date a server
    computes from `time.time()` means what it says.
    """

    def __init__(self) -> None:
        self.start = 1000.0
        self.wall = datetime.now(UTC)
        self.sleeps: list[float] = []
        self._slept: dict[asyncio.Task[Any] | None, float] = {}

    def _own(self) -> float:
        try:
            task = asyncio.current_task()
        except RuntimeError:  # No running loop.
            task = None
        return self._slept.get(task, 0.0)

    def monotonic(self) -> float:
        return self.start + self._own()

    def now(self) -> datetime:
        return self.wall + timedelta(seconds=self._own())

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        task = asyncio.current_task()
        self._slept[task] = self._slept.get(task, 0.0) + seconds
        await asyncio.sleep(0)  # Still a turn of the loop, as a real sleep is.

    def timeout(self, seconds: float) -> AbstractAsyncContextManager[object]:
        # Time moves only when a task sleeps, not while it waits for a reply: a budget running
        # out mid-request is the real one (ManualClock moves it instead).
        return asyncio.timeout(seconds)

    @property
    def elapsed(self) -> float:
        """The longest any one task has slept."""
        return max(self._slept.values(), default=0.0)


async def until(condition: Callable[[], bool], timeout_s: float = 30.0) -> None:
    """Wait, a loop turn at a time, until `condition()` holds (`TimeoutError` after
    `timeout_s`, so a broken test fails instead of hanging)."""
    async with asyncio.timeout(timeout_s):
        while not condition():
            await asyncio.sleep(0.001)


class ManualClock:
    """Time for `ValenClient(clock=...)` that moves only when the test calls `advance`, for every
    task at once: sleeps and timeouts end when it passes their deadline, however long the wait for
    a reply took really, so a budget running out mid-request costs no real time."""

    def __init__(self) -> None:
        self.time = 1000.0
        self.wall = datetime.now(UTC)
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []
        self._timeouts: list[tuple[float, asyncio.Timeout]] = []

    def monotonic(self) -> float:
        return self.time

    def now(self) -> datetime:
        return self.wall + timedelta(seconds=self.time - 1000.0)

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        woken = asyncio.get_running_loop().create_future()
        entry = (self.time + seconds, woken)
        self._sleepers.append(entry)
        try:
            await woken
        finally:
            self._sleepers.remove(entry)

    @asynccontextmanager
    async def timeout(self, seconds: float) -> AsyncIterator[None]:
        # asyncio's own Timeout, never due by itself: `advance` makes it due, and asyncio then
        # cancels the block and turns that into TimeoutError exactly as for a real one.
        async with asyncio.timeout(None) as timer:
            entry = (self.time + seconds, timer)
            self._timeouts.append(entry)
            try:
                yield
            finally:
                self._timeouts.remove(entry)

    def advance(self, seconds: float) -> None:
        """Move time on; every sleep and timeout due by then ends at the loop's next turn."""
        self.time += seconds
        loop = asyncio.get_running_loop()
        for due, woken in self._sleepers:
            if due <= self.time and not woken.done():
                woken.set_result(None)
        for due, timer in self._timeouts:
            if due <= self.time and not timer.expired():
                timer.reschedule(loop.time())


def serve_until_stdin_closes() -> None:
    """`python -m tests.valen_server --delay S`: a server in its own process, for benchmarks.

    Prints its base URL on one line, answers `--probability` after `--delay` seconds to every
    well-formed request, and stops when its standard input closes (the parent exited or closed
    the pipe). In its own process, the server's CPU time is not counted as the client's.
    """
    parser = argparse.ArgumentParser(description=serve_until_stdin_closes.__doc__)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each reply")
    parser.add_argument("--probability", type=float, default=0.9)
    args = parser.parse_args()
    server = ValenTestServer(constant(args.probability, args.delay)).start()
    print(server.base_url, flush=True)
    try:
        sys.stdin.read()
    finally:
        server.stop()


if __name__ == "__main__":
    serve_until_stdin_closes()
