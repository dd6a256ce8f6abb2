"""A status the Valen protocol gives no meaning to (418 here) is filed under a kind of its own,
`unexpected-status`, not `valen-error`, the escalation reason's name (a tester's finding: a bot's
log read `escalated: valen-error (valen-error ×3)`, and `ask` "not judged  valen-error (HTTP
418)"). Against a Valen-compatible server on 127.0.0.1, on both dialects."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.desk.bot import settled
from tests.cli_run import run_cli
from tests.valen_faults import K, ask, err, settings_for
from tests.valen_server import ValenTestServer, scripted

TEAPOT = {"error": {"message": "I'm a teapot"}}


@pytest.mark.parametrize("dialect", ["decisions", "systemone"])
async def test_an_unexpected_status_is_its_own_kind_and_is_not_retried(
    dialect: str, valen_server: ValenTestServer, tmp_path: Path
) -> None:
    valen_server.responder = scripted(err(418, TEAPOT))
    decision = await ask(settings_for(valen_server.base_url, tmp_path, dialect=dialect))
    # Once for each passage: the protocol retries only the statuses it names.
    assert valen_server.count() == K
    assert decision.answer is None and decision.reason is not None
    assert decision.reason.value == "valen-error"  # The escalation's reason is unchanged...
    assert [c.error_kind for c in decision.candidates] == ["unexpected-status"] * K
    for candidate in decision.candidates:  # ...and its passages say what came back.
        assert candidate.error == "unexpected-status (HTTP 418): I'm a teapot"
    # What `helpdesk bot -v` logs for the question.
    assert settled("escalated", decision) == f"escalated: valen-error (unexpected-status ×{K})"


def test_ask_says_the_kind_of_an_unexpected_status(
    valen_server: ValenTestServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    valen_server.responder = scripted(err(418, TEAPOT))
    code, out, err_out = run_cli(
        capsys, "ask", "How do I unlock a bike?", "--replay", "off", "-k", "1",
        "--base-url", valen_server.base_url, "--cache", str(tmp_path / "cache.json"),
    )  # fmt: skip
    assert code == 1
    assert "unexpected-status (HTTP 418): I'm a teapot" in out
    assert "valen-error (HTTP" not in out
    assert "nothing was judged (Valen failed 1 of 1 judgment: unexpected-status 1)" in err_out


def test_valen_check_names_the_kind_and_what_it_most_likely_means(
    valen_server: ValenTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    valen_server.responder = scripted(err(418, TEAPOT))
    code, out, err_out = run_cli(capsys, "valen", "check", "--base-url", valen_server.base_url)
    assert code == 1 and "  HTTP status  418" in out
    assert err_out.startswith(
        "helpdesk: error: Valen check failed: unexpected-status (HTTP 418): I'm a teapot (not a"
        " status Valen's protocol sends: is --base-url a Valen server?)"
    )
