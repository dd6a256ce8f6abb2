"""A success status carrying an error envelope instead of answers is said as the server's error,
its message quoted (the key scrubbed), as for any other status.

`{"error": {"message": "quota exceeded for key …", "type": "quota"}}` with a 200 used to read
"invalid-response: reply has no 'answers' (is this a Valen server, and is --dialect right?)".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from chatbot.valen.client import RetryPolicy, ValenClient
from chatbot.valen.errors import ErrorReplyError
from chatbot.valen.protocol import PREDICATE, Question
from tests.cli_run import run_cli
from tests.valen_faults import QUESTION
from tests.valen_server import FakeClock, Reply, ValenTestServer, fixed

KEY = "sk-quota-0123456789abcdef"
QUOTA = {"error": {"message": f"quota exceeded for key {KEY}", "type": "quota"}}


def test_valen_check_quotes_the_servers_error_without_the_key(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
) -> None:  # fmt: skip
    monkeypatch.setenv("VALEN_API_KEY", KEY)
    valen_server.responder = fixed(Reply(200, QUOTA))
    code, out, err = run_cli(capsys, "valen", "check", "--base-url", valen_server.base_url)
    assert code == 1
    assert "  HTTP status  200" in out
    assert err == (
        "helpdesk: error: Valen check failed: error-reply (HTTP 200): the server answered 200 "
        "with an error instead of an answer: quota exceeded for key [redacted] (type 'quota')\n"
    )
    assert KEY not in out + err
    assert len(valen_server.received) == 1


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (QUOTA, "quota exceeded for key [redacted] (type 'quota')"),
        ({"error": {"message": "model is loading"}}, "model is loading"),
        ({"error": f"model 'valen' not found for {KEY}"}, "model 'valen' not found for [redacted]"),
        ({"detail": "engine not ready"}, "engine not ready"),
        ({"detail": [{"loc": ["body"], "msg": "field required"}]}, "field required"),
        ({"answers": None, "error": {"message": "overloaded"}}, "overloaded"),
    ],
    ids=["openai-envelope", "no-type", "ollama", "fastapi", "fastapi-list", "answers-null"],
)
async def test_an_error_envelope_with_a_200_is_the_servers_error(
    body: dict[str, Any], says: str, valen_server: ValenTestServer
) -> None:
    valen_server.responder = fixed(Reply(200, body))
    async with httpx.AsyncClient() as http:
        client = ValenClient(http, base_url=valen_server.base_url, api_key=SecretStr(KEY),
                             retry=RetryPolicy(), clock=FakeClock())  # fmt: skip
        with pytest.raises(ErrorReplyError) as caught:
            await client.decide("t", [Question("answers", PREDICATE)])
    said = caught.value.describe()
    assert said == (
        f"error-reply (HTTP 200): the server answered 200 with an error instead of an answer: "
        f"{says}"
    )
    assert "no 'answers'" not in said and "dialect" not in said
    assert caught.value.attempts == 1 and len(valen_server.received) == 1  # A 200: not retried.


@pytest.mark.parametrize(
    "extra",
    [{"error": None}, {"error": ""}, {"detail": None}, {"error": {}}, {"error": False}],
    ids=["error-null", "error-empty", "detail-null", "error-empty-object", "error-false"],
)
async def test_an_answer_beside_an_empty_error_field_is_an_answer(
    extra: dict[str, Any], valen_server: ValenTestServer
) -> None:
    answers = [{"type": "predicate", "name": "answers", "probability": 0.75}]
    valen_server.responder = fixed(Reply(200, {"answers": answers, **extra}))
    async with httpx.AsyncClient() as http:
        client = ValenClient(http, base_url=valen_server.base_url)
        assert await client.decide("t", [Question("answers", PREDICATE)]) == {"answers": 0.75}


def test_ask_shows_the_servers_error_on_each_passage(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer, tmp_path: Path,
) -> None:  # fmt: skip
    monkeypatch.setenv("VALEN_API_KEY", KEY)
    valen_server.responder = fixed(Reply(200, QUOTA))
    code, out, err = run_cli(capsys, "ask", QUESTION, "--replay", "off", "--base-url",
                             valen_server.base_url, "--cache", str(tmp_path / "cache.json"),
                             "-k", "2")  # fmt: skip
    said = out + err
    assert code == 1 and "Traceback" not in said
    line = ("error-reply (HTTP 200): the server answered 200 with an error instead of an answer: "
            "quota exceeded for key [redacted] (type 'quota')")  # fmt: skip
    assert said.count(line) == 2, said
    assert KEY not in said and "no 'answers'" not in said
    assert len(valen_server.received) == 2  # One request per passage.
