"""The System One dialect against an independent server: `jev-compatible-server` from PyPI.

Its FastAPI app validates requests with its own pydantic models (`extra="forbid"`, `noul`
questions, named answers) and serialises its own responses, so it checks our wire format against
someone else's reading of the protocol. Its real backends load model weights from a hub, which
cannot be fetched here; `create_app(runtime=...)` takes any `DecisionRuntime`, so the test plugs in
a small deterministic one (shared words between question and passage) and everything else, the
HTTP layer, validation and answer encoding, is the package's own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from chatbot.cli.main import main
from chatbot.valen.protocol import PREDICATE

if TYPE_CHECKING:
    from tests.systemone_server import SystemOneServer

QUESTION = "I was charged twice for the same ride, can I get my money back?"


@pytest.fixture
def systemone() -> Iterator[SystemOneServer]:
    from tests.systemone_server import SystemOneServer

    with SystemOneServer() as server:
        yield server


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def test_ask_answers_through_the_independent_server(
    capsys: pytest.CaptureFixture[str], systemone: SystemOneServer, tmp_path: Path
) -> None:
    code, decision, err = run(capsys, "ask", QUESTION, "--json", "--replay", "record",
                              "--dialect", "systemone", "--base-url", systemone.base_url,
                              "--cache", str(tmp_path / "cache.json"))  # fmt: skip
    assert code == 0, err
    # Every passage judged by the server's own reading of our state, in our layout byte for byte.
    candidates = decision["candidates"]
    assert len(systemone.runtime.requests) == len(candidates) == 5
    assert all(c["probability"] is not None and c["error"] is None for c in candidates)
    states = {r.state for r in systemone.runtime.requests}
    for request in systemone.runtime.requests:
        assert request.model is None  # Left out: no model configured.
        assert list(request.questions) == ["answers"]
        question = request.questions["answers"]
        assert (question.type, question.instructions) == ("noul", PREDICATE)
        assert question.criteria is None
    best = candidates[0]
    assert decision["answer"]["id"] == best["id"] == "card-charged-twice"
    assert best["probability"] == pytest.approx(0.75)  # charged, twice, ride: 3 / (3 + 1).
    # The answers were recorded and replay offline, with no server at all.
    recorded = json.loads((tmp_path / "cache.json").read_text())["entries"]
    assert {e["input"] for e in recorded.values()} == states


def test_a_configured_model_is_sent(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    systemone: SystemOneServer, tmp_path: Path,
) -> None:  # fmt: skip
    monkeypatch.setenv("VALEN_MODEL", "Valen-Team/Valen-Preview-0923")
    code, decision, _ = run(capsys, "ask", QUESTION, "--json", "--replay", "off", "-k", "1",
                            "--dialect", "systemone", "--base-url", systemone.base_url)  # fmt: skip
    assert code == 0 and decision["answer"] is not None
    assert [r.model for r in systemone.runtime.requests] == ["Valen-Team/Valen-Preview-0923"]


def test_valen_check_against_the_independent_server(
    capsys: pytest.CaptureFixture[str], systemone: SystemOneServer
) -> None:
    code, report, err = run(capsys, "valen", "check", "--json", "--dialect", "systemone",
                            "--base-url", systemone.base_url)  # fmt: skip
    assert code == 0, err
    assert (report["status"], report["key"], report["ok"]) == (200, "not set (none needed)", True)
    from tests.systemone_server import overlap_probability

    assert report["probability"] == pytest.approx(overlap_probability(
        systemone.runtime.requests[0].state))  # fmt: skip


def test_the_wrong_dialect_is_a_clear_not_found(
    capsys: pytest.CaptureFixture[str], systemone: SystemOneServer
) -> None:
    # The decisions dialect posts to /decisions, which a System One server does not have.
    code, decision, err = run(capsys, "ask", QUESTION, "--json", "--replay", "off", "-k", "2",
                              "--dialect", "decisions",
                              "--base-url", systemone.base_url)  # fmt: skip
    assert code == 1 and decision["reason"] == "valen-error"  # Nothing judged.
    assert all(c["error"] == "not-found (HTTP 404): Not Found" for c in decision["candidates"])
    assert systemone.runtime.requests == []
    code = main(["valen", "check", "--base-url", systemone.base_url])
    assert code == 1
    assert "check --base-url and --dialect" in capsys.readouterr().err
