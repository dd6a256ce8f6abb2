"""A server's Retry-After longer than the question's budget is the server's refusal, not a spent
budget: the passages keep the reply's kind (`rate-limited`, `server-error`) and say how long Valen
asked to wait, for the question that met it and for later ones held by the shared wait.

They used to read "budget: the question's time budget for Valen ran out; next try due in 44.4 s"
(kind `budget`, counted as such in the stats) though the call had returned in a moment.
"""

from __future__ import annotations

from pathlib import Path

from chatbot.assembly import build_engine, make_http_client
from chatbot.engine.models import Decision
from tests.valen_faults import QUESTION, K, err, settings_for
from tests.valen_server import ManualClock, ValenTestServer, scripted

BUDGET_S = 20.0
ASKED = "Valen asked to wait 50 s"
TOO_LONG = "longer than the question's time budget allows"


def assert_escalated_as(decision: Decision, kind: str, *says: str) -> None:
    assert decision.answer is None and decision.reason is not None
    assert decision.reason.value == "valen-error"
    assert len(decision.candidates) == K
    for candidate in decision.candidates:
        assert candidate.error_kind == kind, candidate.error
        assert candidate.error is not None and "\n" not in candidate.error
        assert "budget:" not in candidate.error and "ran out" not in candidate.error
        for text in says:
            assert text in candidate.error, candidate.error


async def test_a_long_rate_limit_keeps_its_kind_now_and_for_later_questions(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    valen_server.responder = scripted(err(429, {"error": "slow down"}, **{"retry-after": "50"}))
    clock = ManualClock()  # No time passes but what the test moves.
    settings = settings_for(valen_server.base_url, tmp_path, budget_s=BUDGET_S)
    async with make_http_client(settings) as http:
        engine = build_engine(settings, http)
        assert engine.judge.client is not None
        engine.judge.client.clock = clock
        first = await engine.answer(QUESTION)
        # One request per passage, refused for 50 s: the budget of 20 s cannot hold the wait.
        assert valen_server.count() == K
        assert_escalated_as(first, "rate-limited", "rate-limited (HTTP 429): slow down", ASKED,
                            TOO_LONG, "(20 s left)")  # fmt: skip

        clock.advance(5.6)
        second = await engine.answer(QUESTION)
    # Held by the wait the first question met: nothing sent, and said so, as a rate limit.
    assert valen_server.count() == K
    assert_escalated_as(second, "rate-limited", "not sent", ASKED, "44.4 s of it still to go",
                        TOO_LONG, "it said: slow down")  # fmt: skip


async def test_a_long_busy_wait_keeps_the_server_error_kind(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    valen_server.responder = scripted(err(503, {"detail": "engine busy"}, **{"retry-after": "50"}))
    clock = ManualClock()
    settings = settings_for(valen_server.base_url, tmp_path, budget_s=BUDGET_S)
    async with make_http_client(settings) as http:
        engine = build_engine(settings, http)
        assert engine.judge.client is not None
        engine.judge.client.clock = clock
        decision = await engine.answer(QUESTION)
    assert valen_server.count() == K
    assert_escalated_as(decision, "server-error", "server-error (HTTP 503): engine busy", ASKED,
                        TOO_LONG)  # fmt: skip
