"""Every failure case in valen-api.md, against the fault-injecting loopback server.

Each case runs one customer question through the real engine (BM25 over the shipped help
center, k=2, so two passages and two Valen inputs) and checks three things: what the client did
(requests counted per input at the server, and the waits it asked for between them), what the
customer got (an answer, or an escalation and its reason), and the reason kept for the agent on
each passage. Waits run on a `FakeClock`, so a `retry-after: 2` costs no real time, and the
budget shared by passages on a `ManualClock` the test moves; the read timeout and one budget
test run in real time (a second at most), because the wall clock is what they promise.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest

# The transport imports aiohttp on its first request (replay mode never needs it). Imported here,
# at collection, so that the wall-clock budget tests below do not spend their budget on that
# import: on a busy machine it took longer than the whole budget.
import chatbot.valen._aiohttp  # noqa: F401
from chatbot.assembly import build_engine, make_http_client
from chatbot.config import load_settings
from chatbot.engine.models import Decision
from chatbot.valen.client import Clock
from chatbot.valen.protocol import input_text
from tests.valen_server import (
    FakeClock,
    ManualClock,
    Received,
    Reply,
    Responder,
    ValenTestServer,
    closed_port_url,
    html_reply,
    probability_reply,
    refusal_reply,
    scripted,
    until,
)

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


def cases() -> list[Any]:
    return [
        pytest.param(fault, dialect, id=f"{dialect}:{fault_id(fault)}")
        for fault in FAULTS
        for dialect in fault.dialects
    ]


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


def inputs(decision: Decision) -> list[str]:
    return [input_text(QUESTION, c.text) for c in decision.candidates]


@pytest.mark.parametrize(("fault", "dialect"), cases())
async def test_fault(
    fault: Fault, dialect: str, valen_server: ValenTestServer, tmp_path: Path
) -> None:
    script = scripted(*fault.steps, then=fault.then)
    valen_server.responder = script
    clock = FakeClock()
    decision = await ask(settings_for(valen_server.base_url, tmp_path, dialect=dialect,
                                      **fault.settings), clock=clock)  # fmt: skip

    # What the client did: the same number of requests for each passage, nothing more, and a
    # wait before each retry that is at least what the server asked for.
    assert len(decision.candidates) == K
    assert [valen_server.count(text) for text in inputs(decision)] == [fault.attempts] * K
    assert valen_server.count() == fault.attempts * K
    assert all(r.path == f"/v1/{dialect}" for r in valen_server.received)
    assert len(clock.sleeps) == (fault.attempts - 1) * K
    assert all(wait >= fault.min_wait_s for wait in clock.sleeps), clock.sleeps

    # What the customer got, and what the agent sees for each passage.
    if fault.reason is None:
        assert decision.answer is not None and decision.answer.probability == 0.9
        assert all(c.error is None for c in decision.candidates)
        return
    assert decision.answer is None
    assert decision.reason is not None and decision.reason.value == fault.reason
    for candidate in decision.candidates:
        assert candidate.probability is None
        assert candidate.error_kind == fault.kind, candidate.error
        assert candidate.error is not None and "\n" not in candidate.error
        for text in fault.says:
            assert text.lower() in candidate.error.lower(), candidate.error
        for text in fault.never_says:
            assert text not in candidate.error, candidate.error


async def test_connection_refused_is_retried_then_escalated(tmp_path: Path) -> None:
    decision = await ask(settings_for(closed_port_url(), tmp_path))
    assert decision.answer is None and decision.reason is not None
    assert decision.reason.value == "valen-error"
    for candidate in decision.candidates:
        assert candidate.error_kind == "connection"
        assert candidate.error is not None and "after 3 attempts" in candidate.error


async def test_a_refusal_among_normal_answers_does_not_stop_the_others(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    # The best passage is refused; the other is judged: the refusal never becomes a probability.
    def respond(received: Received, _: int) -> Reply:
        if "temporary hold" in received.body["input"]:
            return refusal_reply(received)
        return probability_reply(received, 0.8)

    valen_server.responder = respond
    decision = await ask(settings_for(valen_server.base_url, tmp_path))
    assert decision.answer is not None and decision.answer.id == "refund-time"
    refused = next(c for c in decision.candidates if c.id == "card-charged-twice")
    assert refused.probability is None and refused.error_kind == "refused"
    assert decision.candidates[-1] is refused  # An unjudged passage is never ranked first.

    valen_server.responder = lambda r, i: (
        refusal_reply(r) if "temporary hold" in r.body["input"] else probability_reply(r, 0.3)
    )
    decision = await ask(settings_for(valen_server.base_url, tmp_path))
    assert decision.answer is None and decision.reason is not None
    assert decision.reason.value == "not-judged"
    assert decision.top_probability == 0.3


async def test_one_failing_passage_does_not_fail_the_others(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    def respond(received: Received, _: int) -> Reply:
        if "temporary hold" in received.body["input"]:
            return err(400, {"error": {"message": "no"}})
        return probability_reply(received, 0.95)

    valen_server.responder = respond
    decision = await ask(settings_for(valen_server.base_url, tmp_path))
    assert decision.answer is not None and decision.answer.id == "refund-time"
    assert valen_server.count() == K


async def test_budget_runs_out_on_a_slow_server(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    # Real time: the budget is a promise about the wall clock. Margins of seconds on either
    # side, so a busy machine (the suite runs on every core) cannot make it pass or fail.
    valen_server.responder = scripted(Reply(delay_s=30))
    started = time.monotonic()
    decision = await ask(settings_for(valen_server.base_url, tmp_path, budget_s=1.0,
                                      read_timeout_s=20.0))  # fmt: skip
    elapsed = time.monotonic() - started
    assert 0.98 <= elapsed < 15  # The budget, not the 30 s reply nor the 20 s read timeout.
    assert decision.answer is None and decision.reason is not None
    assert decision.reason.value == "valen-error"
    assert {c.error_kind for c in decision.candidates} == {"budget"}
    assert valen_server.count() == K


async def test_budget_bounds_retries_and_names_the_last_failure(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    valen_server.responder = scripted(*[err(503, {"detail": "engine busy"})] * 20)
    clock = FakeClock()
    decision = await ask(settings_for(valen_server.base_url, tmp_path, budget_s=0.6,
                                      max_attempts=10, backoff_base_s=0.2,
                                      backoff_cap_s=0.2), clock=clock)  # fmt: skip
    # Backoff of 0.1-0.2 s between tries inside 0.6 s: a few tries each, far from ten, and the
    # client never waits past the budget.
    assert 3 * K <= valen_server.count() <= 6 * K
    assert all(0.1 <= wait <= 0.2 for wait in clock.sleeps)
    assert clock.elapsed <= 0.6
    for candidate in decision.candidates:
        assert candidate.error_kind == "budget"
        assert candidate.error is not None and "engine busy" in candidate.error
    assert decision.reason is not None and decision.reason.value == "valen-error"


async def test_budget_is_shared_by_the_passages_of_one_question(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    """One slot in flight: the second passage waits for the first, and both share 60 s of the
    client's clock, which the test moves (no real second passes). The first is answered at 20 s;
    the second, sent then, runs out at 60 s, 40 s into its request (its own 60 s would last to
    80)."""
    replies = [threading.Event(), threading.Event()]

    def held(received: Received, before: int) -> Reply:
        replies[min(before, 1)].wait(30)  # The server's thread holds each reply until told.
        return probability_reply(received, 0.9)

    valen_server.responder = held
    clock = ManualClock()
    settings = settings_for(valen_server.base_url, tmp_path, budget_s=60.0, read_timeout_s=60.0,
                            max_in_flight=1, max_attempts=1)  # fmt: skip
    asking = asyncio.ensure_future(ask(settings, clock=clock))
    try:
        await until(lambda: valen_server.count() == 1)
        clock.advance(20.0)
        replies[0].set()
        await until(lambda: valen_server.count() == 2)  # The second, in the slot the first left.
        clock.advance(39.0)
        for _ in range(50):  # Turns of the loop, not time: a timeout due would end it in a few.
            await asyncio.sleep(0)
        assert not asking.done()  # 59 s: still in the budget.
        clock.advance(1.0)
        decision = await asyncio.wait_for(asking, 30)
    finally:
        replies[1].set()
        asking.cancel()
    kinds = sorted(str(c.error_kind) for c in decision.candidates)
    judged = [c for c in decision.candidates if c.probability is not None]
    assert len(judged) == 1 and kinds == ["None", "budget"]
    # 0.9 from the one passage judged in time: still an answer.
    assert decision.answer is not None


async def test_a_server_asking_to_wait_past_the_budget_is_not_waited_for(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    valen_server.responder = scripted(err(429, {"error": "later"}, **{"retry-after": "5"}))
    clock = FakeClock()
    decision = await ask(settings_for(valen_server.base_url, tmp_path, budget_s=1.0), clock=clock)
    assert clock.sleeps == []
    assert valen_server.count() == K
    # The budget did not run out (no time passed): Valen's wait is longer than it allows, and the
    # passage says so as the rate limit it is.
    assert {c.error_kind for c in decision.candidates} == {"rate-limited"}
    for candidate in decision.candidates:
        assert "Valen asked to wait 5 s, longer than the question's time budget allows" in str(
            candidate.error
        )


@pytest.mark.parametrize("status", [401, 500])
async def test_an_echoed_key_is_scrubbed_from_what_the_agent_sees(
    status: int, valen_server: ValenTestServer, tmp_path: Path
) -> None:
    key = "sk-live-0123456789abcdef"

    def echo(received: Received, _: int) -> Reply:
        sent = received.headers.get("authorization", "")
        return err(status, {"error": {"message": f"Incorrect API key provided: {sent}"}})

    valen_server.responder = echo
    settings = settings_for(valen_server.base_url, tmp_path, api_key=key)
    decision = await ask(settings)
    assert all(r.headers["authorization"] == f"Bearer {key}" for r in valen_server.received)
    for candidate in decision.candidates:
        assert candidate.error is not None and "[redacted]" in candidate.error
        assert key not in candidate.error and key[:12] not in candidate.error
    assert key not in decision.model_dump_json()


def test_every_documented_failure_case_has_a_test() -> None:
    # The bottom of valen-api.md, case by case, mapped to where it is tested.
    covered = {fault.name for fault in FAULTS}
    for name in ["400 with envelope", "422 with detail string", "422 with detail list", "401",
                 "413", "429 retry-after-ms then success", "429 retry-after seconds then success",
                 "429 retry-after HTTP date then success", "429 wait above the cap",
                 "502 then success", "503 then success", "503 retries exhausted", "read timeout",
                 "200 with HTML", "200 with non-JSON", "answers missing", "name missing",
                 "name duplicated", "name unknown", "probability NaN", "probability above 1",
                 "probability a string", "refused"]:  # fmt: skip
        assert name in covered, name
