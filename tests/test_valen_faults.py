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
from pathlib import Path
from typing import Any

import pytest

# The transport imports aiohttp on its first request (replay mode never needs it). Imported here,
# at collection, so that the wall-clock budget tests below do not spend their budget on that
# import: on a busy machine it took longer than the whole budget.
import chatbot.valen._aiohttp  # noqa: F401
from chatbot.engine.models import Decision
from chatbot.valen.protocol import input_text
from tests.valen_faults import FAULTS, QUESTION, Fault, K, ask, err, fault_id, settings_for
from tests.valen_server import (
    FakeClock,
    ManualClock,
    Received,
    Reply,
    ValenTestServer,
    closed_port_url,
    probability_reply,
    refusal_reply,
    scripted,
    until,
)


def cases() -> list[Any]:
    return [
        pytest.param(fault, dialect, id=f"{dialect}:{fault_id(fault)}")
        for fault in FAULTS
        for dialect in fault.dialects
    ]


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
