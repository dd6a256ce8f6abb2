"""`helpdesk valen check` says what came back as it was: an empty 200, a reply over the size
cap, a probability of -0.0."""

from __future__ import annotations

import gzip
import json

import pytest

from chatbot.cli.main import main
from tests.valen_server import Received, Reply, ValenTestServer, fixed


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["valen", "check", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_an_empty_reply_is_called_empty(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    # It said "reply is not JSON (malformed JSON at line 1 column 1): OK", the status line's
    # words quoted as though they were the reply.
    valen_server.responder = fixed(Reply(raw=b""))
    code, out, err = run(capsys, "--base-url", valen_server.base_url)
    assert code == 1 and "  HTTP status  200" in out.splitlines()
    assert err == (
        "helpdesk: error: Valen check failed: invalid-response (HTTP 200): the reply is empty: "
        "no body at all (is this a Valen server, and is --dialect right?)\n"
    )


def test_a_reply_over_the_cap_is_called_too_large(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    # "(no complete reply)" read as a server that broke off, when it was read no further.
    body = gzip.compress(b" " * 2_000_000)
    valen_server.responder = fixed(Reply(raw=body, headers={"content-encoding": "gzip"}))
    code, out, err = run(capsys, "--base-url", valen_server.base_url)
    assert code == 1
    assert "  HTTP status  200 (reply too large, read no further)" in out.splitlines()
    assert "the reply is larger than 1,000,000 bytes" in err
    code, out, _ = run(capsys, "--base-url", valen_server.base_url, "--json")
    report = json.loads(out)
    assert (report["status"], report["incomplete"], report["too_large"]) == (200, True, True)


def test_minus_zero_reads_zero(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    def minus_zero(received: Received, _: int) -> Reply:
        name = received.body["questions"][0]["name"]
        # Sent as -0.0: JSON keeps the sign.
        return Reply(body={"answers": [{"type": "predicate", "name": name, "probability": -0.0}]})

    valen_server.responder = minus_zero
    code, out, _ = run(capsys, "--base-url", valen_server.base_url)
    assert code == 0
    assert "  answer       probability 0.000 that the passage answers the question" in out
