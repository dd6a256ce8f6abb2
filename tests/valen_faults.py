"""Every failure case in valen-api.md as a table (`FAULTS`), and one customer question run
through the real engine against the fault-injecting loopback server: the tiny waits
(`FAST`), the settings, the question, and `helpdesk` as a process with those waits."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path
from typing import Any

# The transport imports aiohttp on its first request: imported here, at collection, as
# tests/test_valen_faults.py does for its wall-clock budget tests, so that no test using these
# helpers spends its time (or budget) on that import.
import chatbot.valen._aiohttp  # noqa: F401
from chatbot.assembly import build_engine, make_http_client
from chatbot.config import load_settings
from chatbot.engine.models import Decision
from chatbot.valen.client import Clock
from tests.conftest import ROOT
from tests.valen_server import Received, Reply, Responder, html_reply, refusal_reply

QUESTION = "I was charged twice for the same ride, can I get my money back?"
K = 2
# Tiny waits so the whole table runs in seconds; the policy is the same as in production.
FAST: dict[str, Any] = {
    "max_attempts": 3,
    "backoff_base_s": 0.01,
    "backoff_cap_s": 0.04,
    "connect_timeout_s": 1.0,
    "read_timeout_s": 2.0,
    "budget_s": 10.0,
}


def answers_body(received: Received, answers: list[dict[str, Any]]) -> Reply:
    """A 200 whose `answers` are exactly `answers`, as a list (decisions) or a map (System One)."""
    if received.path.endswith("/systemone"):
        return Reply(body={"answers": {a.pop("name", "?"): a for a in answers}})
    return Reply(body={"model": "valen-test", "answers": answers})


def one_answer(**answer: Any) -> Responder:
    def respond(received: Received, _: int) -> Reply:
        return answers_body(received, [{"name": "answers", **answer}])

    return respond


def raw_json(text: str) -> Reply:
    return Reply(raw=text.encode())


@dataclass
class Fault:
    """One failure case: the script each input gets, and what must follow."""

    name: str
    steps: tuple[Reply | Responder, ...]
    attempts: int
    """Requests the server must see for each input."""
    reason: str | None
    """The escalation reason, or None when the question must be answered (from the 0.9)."""
    kind: str | None = None
    """The error kind kept on each passage, when escalated."""
    says: tuple[str, ...] = ()
    """Text the agent-facing error must contain."""
    never_says: tuple[str, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict)
    min_wait_s: float = 0.0
    """The least each wait between two attempts must be (the server's retry-after)."""
    dialects: tuple[str, ...] = ("decisions", "systemone")
    then: Responder | None = None


def err(status: int, body: Any, **headers: str) -> Reply:
    return Reply(status=status, body=body, headers=headers)


def http_date_in(seconds: float) -> str:
    return formatdate(time.time() + seconds, usegmt=True)


ENVELOPE = {"error": {"message": "input is empty", "type": "invalid_request_error"}}
DETAIL_LIST = [
    {"loc": ["body", "state"], "msg": "Field required"},
    {"loc": ["body", "x"], "msg": "Extra inputs are not permitted"},
]
PREDICATE_ANSWER = {"type": "predicate", "name": "answers"}

FAULTS: list[Fault] = [
    Fault("400 with envelope", (err(400, ENVELOPE),), attempts=1, reason="valen-error",
          kind="bad-request", says=("HTTP 400", "input is empty")),
    Fault("422 with detail string", (err(422, {"detail": "state must be a string"}),),
          attempts=1, reason="valen-error", kind="bad-request", says=("state must be a string",)),
    Fault("422 with detail list", (err(422, {"detail": DETAIL_LIST}),),
          attempts=1, reason="valen-error", kind="bad-request",
          says=("Field required; Extra inputs are not permitted",)),
    Fault("401", (err(401, {"error": "invalid api key"}),),  # Ollama's {"error": "..."} shape.
          attempts=1, reason="valen-error", kind="auth", says=("HTTP 401", "invalid api key")),
    Fault("403", (err(403, {"error": {"message": "key not allowed here"}}),),
          attempts=1, reason="valen-error", kind="auth", says=("key not allowed here",)),
    Fault("404", (err(404, {"detail": "Not Found"}),),
          attempts=1, reason="valen-error", kind="not-found"),
    Fault("413", (Reply(status=413, raw=b"Request Entity Too Large",
                        headers={"content-type": "text/plain"}),),
          attempts=1, reason="valen-error", kind="too-large", says=("Request Entity Too Large",)),
    Fault("429 retry-after-ms then success",
          (err(429, {"error": {"message": "slow down"}}, **{"retry-after-ms": "300"}),),
          attempts=2, reason=None, min_wait_s=0.3),
    Fault("429 retry-after seconds then success",
          (err(429, {"error": {"message": "slow down"}}, **{"retry-after": "1"}),),
          attempts=2, reason=None, min_wait_s=1.0, dialects=("decisions",)),
    Fault("429 retry-after HTTP date then success",
          (lambda _r, _i: err(429, {"error": "slow down"}, **{"retry-after": http_date_in(2)}),),
          attempts=2, reason=None, min_wait_s=0.9, dialects=("decisions",)),
    Fault("429 wait above the cap",
          (err(429, {"error": "come back later"}, **{"retry-after": "120"}),),
          attempts=1, reason="valen-error", kind="rate-limited",
          says=("come back later", "asked to wait 120 s")),
    Fault("429 retries exhausted",
          (err(429, {"error": "slow down"}, **{"retry-after-ms": "10"}),) * 3,
          attempts=3, reason="valen-error", kind="rate-limited", says=("after 3 attempts",)),
    Fault("502 then success", (html_reply(502),), attempts=2, reason=None),
    Fault("503 then success", (err(503, {"detail": "engine busy"}),), attempts=2, reason=None),
    Fault("500 twice then success", (err(500, {"error": "oops"}),) * 2, attempts=3, reason=None),
    Fault("408 then success", (err(408, {"error": "request timeout"}),), attempts=2, reason=None),
    Fault("503 retries exhausted", (err(503, {"detail": "engine busy"}),) * 3,
          attempts=3, reason="valen-error", kind="server-error",
          says=("HTTP 503", "engine busy", "after 3 attempts")),
    Fault("502 HTML retries exhausted", (html_reply(502),) * 3,
          attempts=3, reason="valen-error", kind="server-error",
          says=("HTML page", "502 Bad Gateway"), never_says=("<", "nginx")),
    Fault("504 not retried by default", (err(504, {"error": "upstream timed out"}),),
          attempts=1, reason="valen-error", kind="gateway-timeout"),
    Fault("504 retried when configured", (err(504, {"error": "upstream timed out"}),),
          attempts=2, reason=None, settings={"retry_gateway_timeout": True}),
    Fault("501 not retried", (err(501, {"error": "not implemented"}),),
          attempts=1, reason="valen-error", kind="server-error"),
    Fault("read timeout", (Reply(delay_s=0.6),) * 3,
          attempts=3, reason="valen-error", kind="timeout", says=("ReadTimeout",),
          settings={"read_timeout_s": 0.15}),
    Fault("read timeout then success", (Reply(delay_s=0.6),),
          attempts=2, reason=None, settings={"read_timeout_s": 0.15}),
    Fault("connection dropped then success", (Reply(drop=True),), attempts=2, reason=None),
    Fault("connection dropped retries exhausted", (Reply(drop=True),) * 3,
          attempts=3, reason="valen-error", kind="connection", says=("RemoteProtocolError",)),
    Fault("200 with HTML", (html_reply(200, "Just a moment..."),),
          attempts=1, reason="valen-error", kind="invalid-response",
          says=("HTML page", "Just a moment..."), never_says=("<",)),
    Fault("200 with non-JSON", (Reply(raw=b"upstream says hello",
                                      headers={"content-type": "text/plain"}),),
          attempts=1, reason="valen-error", kind="invalid-response",
          says=("not JSON", "upstream says hello")),
    Fault("answers missing", (Reply(body={"model": "valen-test", "usage": {}}),),
          attempts=1, reason="valen-error", kind="invalid-response", says=("no 'answers'",)),
    Fault("name missing",
          (lambda r, _: Reply(body={"answers": [{"type": "predicate", "probability": 0.9}]}),),
          attempts=1, reason="valen-error", kind="invalid-response", says=("no name",),
          dialects=("decisions",)),
    Fault("name duplicated",
          (lambda r, _: answers_body(r, [{**PREDICATE_ANSWER, "probability": 0.9},
                                         {**PREDICATE_ANSWER, "probability": 0.1}]),),
          attempts=1, reason="valen-error", kind="invalid-response", says=("duplicate",),
          dialects=("decisions",)),  # A JSON object cannot repeat a name in a useful way.
    Fault("name unknown", (one_answer(type="predicate", probability=0.9, name="other"),),
          attempts=1, reason="valen-error", kind="invalid-response", says=("unknown name",)),
    Fault("probability NaN",
          (raw_json('{"answers": [{"type": "predicate", "name": "answers", '
                    '"probability": NaN}]}'),),
          attempts=1, reason="valen-error", kind="invalid-response", says=("nan",),
          dialects=("decisions",)),
    Fault("noul NaN", (raw_json('{"answers": {"answers": {"type": "noul", "noul": NaN}}}'),),
          attempts=1, reason="valen-error", kind="invalid-response", says=("nan",),
          dialects=("systemone",)),
    Fault("probability above 1", (one_answer(type="predicate", probability=1.5),),
          attempts=1, reason="valen-error", kind="invalid-response", says=("1.5",),
          dialects=("decisions",)),
    Fault("noul above 1", (one_answer(type="noul", noul=1.5),),
          attempts=1, reason="valen-error", kind="invalid-response", says=("1.5",),
          dialects=("systemone",)),
    Fault("probability a string", (one_answer(type="predicate", probability="0.9"),),
          attempts=1, reason="valen-error", kind="invalid-response", says=("not a number",)),
    Fault("wrong answer type", (one_answer(type="choice", probability=0.9),),
          attempts=1, reason="valen-error", kind="invalid-response", says=("'choice'",)),
    Fault("refused", (refusal_reply,), attempts=1, reason="not-judged", kind="refused"),
    # A wait the server asks for that the budget (10 s here) cannot hold keeps the reply's kind:
    # it was "budget: ... ran out" with no time spent.
    Fault("429 retry-after past the budget",
          (err(429, {"error": "slow down"}, **{"retry-after": "50"}),),
          attempts=1, reason="valen-error", kind="rate-limited",
          says=("HTTP 429", "slow down",
                "Valen asked to wait 50 s, longer than the question's time budget allows"),
          never_says=("budget:", "ran out")),
    Fault("503 retry-after past the budget",
          (err(503, {"detail": "engine busy"}, **{"retry-after": "50"}),),
          attempts=1, reason="valen-error", kind="server-error",
          says=("HTTP 503", "engine busy",
                "Valen asked to wait 50 s, longer than the question's time budget allows"),
          never_says=("budget:", "ran out")),
    # The server was reached: never "cannot reach" it.
    Fault("connection closed before any reply", (Reply(drop=True),) * 3,
          attempts=3, reason="valen-error", kind="connection",
          says=("closed the connection before answering completely",),
          never_says=("cannot reach",)),
    Fault("307 names its target", (err(307, None, location="https://valen.example/v2/decisions"),),
          attempts=1, reason="valen-error", kind="redirect",
          says=("HTTP 307", "redirected the request to https://valen.example/v2/decisions",
                "redirects are not followed"),
          never_says=("null",)),
]  # fmt: skip


def fault_id(fault: Fault) -> str:
    return fault.name.replace(" ", "-")


def settings_for(base_url: str, tmp_path: Path, *, dialect: str = "decisions", k: int = K,
                 db: Path | None = None, **valen: Any) -> Any:  # fmt: skip
    """Live Valen at `base_url` with tiny waits, `k` passages a question, a cache of the test's
    own; the desk's database `db` if given."""
    values = {"base_url": base_url, "dialect": dialect, "replay": "off",
              "cache": tmp_path / "cache.json", **FAST, **valen}  # fmt: skip
    store = {} if db is None else {"store": {"db": db}}
    return load_settings(valen=values, engine={"k": k}, **store)


async def ask(settings: Any, question: str = QUESTION, *, clock: Clock | None = None
              ) -> Decision:  # fmt: skip
    """One question through the engine the app builds; on `clock` when given."""
    async with make_http_client(settings) as http:
        engine = build_engine(settings, http)
        if clock is not None:
            assert engine.judge.client is not None
            engine.judge.client.clock = clock
        return await engine.answer(question)


def helpdesk(*args: str | bytes, env: dict[str, str] | None = None,
             cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:  # fmt: skip
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    for name, value in FAST.items():
        full_env[f"HELPDESK_VALEN__{name.upper()}"] = str(value)
    return subprocess.run(
        [sys.executable, "-m", "chatbot", *args], cwd=cwd, env=full_env,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
