"""`helpdesk valen check`: one request, a report, and one clear line when it fails."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatbot.cli.main import main
from chatbot.valen.client import SYSTEMONE_BASE_URL
from tests.valen_server import (
    Received,
    Reply,
    ValenTestServer,
    closed_port_url,
    constant,
    fixed,
    html_reply,
    refusal_reply,
)

KEY = "sk-check-0123456789abcdef"


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["valen", "check", *args])
    out, err = capsys.readouterr()
    return code, out, err


def check_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = check(capsys, *args, "--json")
    return code, json.loads(out), err


def test_a_working_server_with_a_key(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
) -> None:  # fmt: skip
    monkeypatch.setenv("VALEN_API_KEY", KEY)
    valen_server.responder = constant(0.93)
    code, out, err = check(capsys, "--base-url", valen_server.base_url)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"Valen check: POST {valen_server.base_url}/decisions"
    assert f"  base URL     {valen_server.base_url}" in lines
    assert "  dialect      decisions" in lines
    assert "  HTTP status  200" in lines
    assert "  API key      accepted" in lines
    assert "  answer       probability 0.930 that the passage answers the question" in lines
    assert any(line.startswith("  latency      ") and line.endswith(" ms") for line in lines)
    assert KEY not in out
    [request] = valen_server.received  # One request: no retries, no cache.
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_no_key_and_none_needed(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    code, report, _ = check_json(capsys, "--base-url", valen_server.base_url)
    assert code == 0
    assert (report["ok"], report["status"], report["key"]) == (True, 200, "not set (none needed)")
    assert report["probability"] == 0.5 and report["latency_ms"] > 0
    assert "authorization" not in valen_server.received[0].headers


def echo_401(received: Received, _: int) -> Reply:
    sent = received.headers.get("authorization", "(none)")
    return Reply(status=401, body={"error": {"message": f"Incorrect API key provided: {sent}"}})


def test_a_rejected_key_fails_with_one_line_and_no_key(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
) -> None:  # fmt: skip
    monkeypatch.setenv("VALEN_API_KEY", KEY)
    valen_server.responder = echo_401
    code, out, err = check(capsys, "--base-url", valen_server.base_url)
    assert code == 1
    assert "  HTTP status  401" in out and "  API key      rejected" in out
    assert "result       FAILED" in out
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("helpdesk: error: Valen check failed: auth (HTTP 401): ")
    assert "[redacted]" in err and "check VALEN_API_KEY" in err
    assert KEY not in out + err
    assert len(valen_server.received) == 1


def test_a_missing_key_says_to_set_one(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    valen_server.responder = echo_401
    code, report, err = check_json(capsys, "--base-url", valen_server.base_url)
    assert code == 1 and report["key"] == "not set (the server wants one)"
    assert "set VALEN_API_KEY" in err


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (Reply(status=503, body={"detail": "engine busy"}), "server-error (HTTP 503): engine busy"),
        (html_reply(200, "Sign in"), "HTML page ('Sign in')"),
        (Reply(status=429, body={"error": "slow"}, headers={"retry-after": "1"}), "rate-limited"),
    ],
    ids=["503", "html", "429"],
)
def test_a_failing_server_is_asked_once(
    reply: Reply, says: str, capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    valen_server.responder = fixed(reply)
    code, out, err = check(capsys, "--base-url", valen_server.base_url)
    assert code == 1 and says in err and err.count("\n") == 1
    assert f"  HTTP status  {reply.status}" in out
    assert len(valen_server.received) == 1


def test_nothing_listening(capsys: pytest.CaptureFixture[str]) -> None:
    url = closed_port_url()
    code, out, err = check(capsys, "--base-url", url)
    assert code == 1
    assert "  HTTP status  none (no reply)" in out
    assert "  API key      not set" in out.splitlines()  # Was "unknown" with no key at all.
    assert err == (f"helpdesk: error: Valen check failed: connection: cannot reach {url}/decisions:"
                   " ConnectError (is the server running, and is --base-url right?)\n")  # fmt: skip


def test_a_wrong_base_url_hints_at_url_and_dialect(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    code, report, err = check_json(capsys, "--base-url", valen_server.base_url + "/v2")
    assert code == 1 and report["status"] == 404
    assert "not-found (HTTP 404)" in err and "check --base-url and --dialect" in err


def test_systemone_dialect(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    valen_server.responder = constant(0.81)
    code, report, _ = check_json(capsys, "--dialect", "systemone", "--base-url",
                                 valen_server.base_url)  # fmt: skip
    assert code == 0 and report["dialect"] == "systemone" and report["probability"] == 0.81
    [request] = valen_server.received
    assert request.path == "/v1/systemone"
    assert set(request.body) == {"state", "questions"}


def test_a_refusal_still_shows_the_server_works(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    valen_server.responder = refusal_reply
    code, report, _ = check_json(capsys, "--base-url", valen_server.base_url)
    assert code == 0 and report["probability"] is None and "refused" in report["answer"]


@pytest.mark.parametrize("how", ["option", "environment"])
def test_systemone_without_a_base_url_goes_to_the_local_default(
    how: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if how == "environment":
        monkeypatch.setenv("VALEN_DIALECT", "systemone")
        args: list[str] = []
    else:
        args = ["--dialect", "systemone"]
    _, report, _ = check_json(capsys, *args)
    assert report["base_url"] == SYSTEMONE_BASE_URL == "http://127.0.0.1:8795/v1"
    assert report["url"] == "http://127.0.0.1:8795/v1/systemone"


def test_an_explicit_base_url_wins_over_the_systemone_default(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = closed_port_url()
    monkeypatch.setenv("VALEN_BASE_URL", url)
    _, report, _ = check_json(capsys, "--dialect", "systemone")
    assert report["base_url"] == url


def test_valen_without_a_subcommand_shows_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["valen"]) == 2
    assert "check" in capsys.readouterr().err
