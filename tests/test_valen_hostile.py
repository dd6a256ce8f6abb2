"""Issue 9: a Valen (or whatever answers at its URL) that sends hostile replies, and secrets in the
key and the base URL. Every case runs against the loopback server on 127.0.0.1, through the
engine the app builds or the `helpdesk` CLI as a real process.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import time
import tracemalloc
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from chatbot.engine.models import Decision
from tests.valen_faults import QUESTION, K, ask, err, helpdesk, settings_for
from tests.valen_server import (
    Received,
    Reply,
    ValenTestServer,
    closed_port_url,
    probability_reply,
    scripted,
)

CAP = 1_000_000


def answer_bytes(received: Received, probability: float = 0.9) -> bytes:
    """A valid answer to `received`, as bytes, so a test can pad it (JSON allows any whitespace)."""
    return json.dumps(probability_reply(received, probability).body).encode()


def kinds(decision: Decision) -> set[str | None]:
    return {c.error_kind for c in decision.candidates}


def errors(decision: Decision) -> str:
    return " | ".join(str(c.error) for c in decision.candidates)


class Heartbeat:
    """Ticks on the event loop and keeps the longest gap between ticks: a parse that blocks the
    loop (and so would freeze the app) shows up as a gap."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _beat(self) -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            self.longest = max(self.longest, now - last)
            last = now

    def __enter__(self) -> Heartbeat:
        self._task = asyncio.get_running_loop().create_task(self._beat())
        return self

    def __exit__(self, *_: object) -> None:
        assert self._task is not None
        self._task.cancel()


# --- replies that cost time or memory -------------------------------------------------------


async def test_an_html_page_of_unclosed_title_tags_is_read_in_one_pass(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    # 40,000 unclosed <title> tags, ~280 KB, on a 502 that is retried: the old lazy regex
    # rescanned the page from every tag (142 s for one question against a 20 s budget, with
    # the event loop, and so the app, frozen throughout).
    page = b"<!DOCTYPE html><html><head>" + b"<title>" * 40_000
    valen_server.responder = scripted(
        *[Reply(status=502, raw=page, headers={"content-type": "text/html"})] * 3
    )
    settings = settings_for(valen_server.base_url, tmp_path, budget_s=10.0)
    started = time.monotonic()
    with Heartbeat() as heartbeat:
        decision = await ask(settings)
    assert time.monotonic() - started < settings.valen.budget_s
    assert heartbeat.longest < 1.0, heartbeat.longest
    assert kinds(decision) == {"server-error"}
    assert valen_server.count() == 3 * K
    for candidate in decision.candidates:
        assert candidate.error is not None
        assert f"HTML page instead of JSON, {len(page)} bytes" in candidate.error


def padded(size: int) -> Any:
    """A responder whose valid answer is followed by `size` bytes of JSON whitespace."""

    def respond(received: Received, _: int) -> Reply:
        return Reply(raw=answer_bytes(received) + b" " * size)

    return respond


def streamed(size: int) -> Any:
    """A valid answer followed by `size` bytes of whitespace, streamed in 64 KB chunks with no
    content-length, made as they are sent (the test never holds them)."""

    def respond(received: Received, _: int) -> Reply:
        head = answer_bytes(received)

        def chunks() -> Iterator[bytes]:
            yield head
            block = b" " * 65_536
            for _ in range(size // len(block)):
                yield block

        return Reply(chunks=chunks)

    return respond


def gzip_bomb(decoded_size: int) -> Any:
    """A valid answer followed by `decoded_size` bytes of whitespace, gzipped (~1,000:1). Packed
    once, before the test measures, so the server's own work is not counted in the client's
    memory."""
    answer = {"type": "predicate", "name": "answers", "probability": 0.9}
    body = json.dumps({"answers": [answer]}).encode() + b" " * decoded_size
    packed = gzip.compress(body, compresslevel=9)
    del body
    return lambda _received, _index: Reply(raw=packed, headers={"content-encoding": "gzip"})


# Made by the test that uses it, not at collection: packing the bomb took every worker 0.2 s of
# CPU and held its 64 KB result, whichever tests the worker ran.
@pytest.mark.parametrize(
    "make_responder",
    [
        pytest.param(partial(padded, 2 * CAP), id="2MB-declared"),
        pytest.param(partial(streamed, 300 * 1024 * 1024), id="300MB-chunked"),
        pytest.param(partial(gzip_bomb, 64 * 1024 * 1024), id="64MiB-gzip-bomb"),
    ],
)
async def test_an_oversize_reply_is_invalid_and_never_held_whole(
    make_responder: Callable[[], Any], valen_server: ValenTestServer, tmp_path: Path
) -> None:
    # Each is a *valid* answer padded with whitespace: before the cap all three were accepted,
    # after holding the whole body (five 300 MB bodies: 3.4 GB; a 1 MB bomb: 6-7.6 GB).
    valen_server.responder = make_responder()
    tracemalloc.start()
    try:
        decision = await ask(settings_for(valen_server.base_url, tmp_path, k=5))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(decision.candidates) == 5  # Five replies, at once.
    assert kinds(decision) == {"invalid-response"}
    assert all("larger than 1,000,000 bytes" in str(c.error) for c in decision.candidates)
    assert valen_server.count() == 5  # Not retried: the same server would send it again.
    assert peak < 25 * CAP, f"peak {peak:,} bytes"


async def test_a_small_gzipped_answer_is_still_read(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    def respond(received: Received, _: int) -> Reply:
        return Reply(raw=gzip.compress(answer_bytes(received, 0.93)),
                     headers={"content-encoding": "gzip"})  # fmt: skip

    valen_server.responder = respond
    decision = await ask(settings_for(valen_server.base_url, tmp_path))
    assert decision.answer is not None and decision.answer.probability == 0.93


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        pytest.param(b'{"answers": [{"type": "predicate", "name": "answers", "probability": 1'
                     + b"0" * 5000 + b"}]}", "a number with 5,001 digits", id="5000-digits"),
        pytest.param(b'{"answers": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
                     "nested too deeply", id="nested-100000"),
        pytest.param(b'{"answers": [{"type": "predicate", "name": "answers", '
                     b'"probability": 0.' + b"9" * 500_000 + b"}]}", None, id="500000-decimals"),
    ],
)  # fmt: skip
async def test_numbers_and_nesting_that_break_a_json_reader_are_invalid_responses(
    raw: bytes, says: str | None, valen_server: ValenTestServer, tmp_path: Path
) -> None:
    valen_server.responder = scripted(Reply(raw=raw))
    decision = await ask(settings_for(valen_server.base_url, tmp_path))
    if says is None:  # A long but harmless number is read as the float it is.
        assert decision.answer is not None and decision.answer.probability == 1.0
        return
    assert decision.reason is not None and decision.reason.value == "valen-error"
    assert kinds(decision) == {"invalid-response"}
    assert all(says in str(c.error) for c in decision.candidates), errors(decision)


# --- the CLI as a real process ----------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b'{"answers": [{"type": "predicate", "name": "answers", "probability": '
                     + b"9" * 5000 + b"}]}", id="5000-digits"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, id="nested-100000"),
    ],
)  # fmt: skip
def test_ask_survives_a_reply_that_broke_it_before(raw: bytes, valen_server: ValenTestServer
                                                   ) -> None:  # fmt: skip
    valen_server.responder = scripted(Reply(raw=raw))
    result = helpdesk("ask", QUESTION, "--replay", "off", "--base-url", valen_server.base_url,
                      "-k", "2")  # fmt: skip
    assert result.returncode == 1, result.stderr  # Valen judged nothing, as `eval` says it.
    assert "Traceback" not in result.stderr
    assert result.stdout.startswith("Escalated to a person: valen-error")
    assert result.stdout.count("not judged  invalid-response") == 2


def test_invalid_utf8_in_a_question_is_one_line_and_exit_2() -> None:
    result = helpdesk("ask", b"refund \xff")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1
    assert "not valid UTF-8" in result.stderr and "byte 0xff" in result.stderr


# --- the key ----------------------------------------------------------------------------------

KEY = "sk-hostile-0123456789abcdef"
# A key with inner whitespace is still a header value, so it is sent; collapsing whitespace
# before scrubbing would let an echo of it through.
SPACED_KEY = "sk-spaced\t0123  456789abcdef"


def echo_key_in(where: str) -> Any:
    """A 200 whose answer carries the bearer key back in its `name`, `type` or `probability`."""

    def respond(received: Received, _: int) -> Reply:
        key = received.headers.get("authorization", "").removeprefix("Bearer ")
        answer: dict[str, Any] = {"type": "predicate", "name": "answers", "probability": 0.9}
        answer[where] = key
        return Reply(body={"answers": [answer]})

    return respond


def echo_key_in_error(received: Received, _: int) -> Reply:
    key = received.headers.get("authorization", "").removeprefix("Bearer ")
    return err(401, {"error": {"message": f"Incorrect API key provided: {key}"}})


@pytest.mark.parametrize("key", [KEY, SPACED_KEY], ids=["plain-key", "spaced-key"])
@pytest.mark.parametrize(
    "responder",
    [echo_key_in("name"), echo_key_in("type"), echo_key_in("probability"), echo_key_in_error],
    ids=["name", "type", "probability", "error-body"],
)
async def test_a_key_echoed_anywhere_in_a_reply_is_scrubbed(
    key: str, responder: Any, valen_server: ValenTestServer, tmp_path: Path
) -> None:
    valen_server.responder = responder
    decision = await ask(settings_for(valen_server.base_url, tmp_path, api_key=key))
    assert all(r.headers["authorization"] == f"Bearer {key}" for r in valen_server.received)
    assert decision.answer is None
    stored = decision.model_dump_json()  # What the desk writes to decisions.body.
    for fragment in (key, key[:12], " ".join(key.split())):
        assert fragment not in stored and fragment not in errors(decision)
    assert all("[redacted]" in str(c.error) for c in decision.candidates), errors(decision)


@pytest.mark.parametrize(
    ("key", "says"),
    [("clé-0123456789", "non-ASCII character (character 3)"),
     ("sk-abc\n0123456789", "line break (character 7)")],
    ids=["non-ascii", "newline"],
)  # fmt: skip
def test_a_malformed_key_is_one_line_and_never_sent(
    key: str, says: str, valen_server: ValenTestServer, tmp_path: Path
) -> None:
    # A bad setting, refused at start: the worker used to start, warn "Valen rejected the API
    # key" (Valen never saw it) and escalate every question as valen-error.
    env = {"VALEN_API_KEY": key}
    live = ("--replay", "off", "--base-url", valen_server.base_url)
    refusal = (
        "helpdesk: error: invalid setting valen.api_key from VALEN_API_KEY: the API key cannot "
        f"be sent in an HTTP header: it holds a {says}\n"
    )
    results = [
        helpdesk("ask", QUESTION, *live, "-k", "2", env=env),
        helpdesk("valen", "check", "--base-url", valen_server.base_url, env=env),
        helpdesk("bot", *live, env={**env, "HELPDESK_DB": str(tmp_path / "h.db")}),
    ]
    for result in results:
        assert (result.returncode, result.stdout, result.stderr) == (2, "", refusal)
    assert valen_server.received == []  # Not sent, so not retried either.
    # Replaying, the key is never sent: nothing to refuse.
    assert helpdesk("ask", QUESTION, env=env).returncode == 0


# --- credentials in the base URL ---------------------------------------------------------------

PASSWORD = "hunter2-pass"
TOKEN = "tok-0123456789"


def with_credentials(base_url: str) -> str:
    """A gateway's key in the query: a user name and password (`user:pass@`) are refused at
    start instead, since httpx would send them as Basic auth in place of the API key."""
    return f"{base_url}?api_key={TOKEN}&region=eu"


def assert_no_url_secrets(text: str) -> None:
    for secret in (PASSWORD, TOKEN, "valen-user"):
        assert secret not in text, text


def test_a_user_and_password_in_the_base_url_are_refused_unrepeated() -> None:
    url = f"http://valen-user:{PASSWORD}@127.0.0.1:9/v1"
    for command in (["valen", "check"], ["ask", "Can I get a refund?", "--replay", "off"]):
        result = helpdesk(*command, "--base-url", url)
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr == (
            "helpdesk: error: invalid option --base-url: the URL holds a user name or password "
            "(before an @): give the API key as VALEN_API_KEY instead, and the URL without them\n"
        )


def test_valen_check_hides_credentials_in_the_base_url(valen_server: ValenTestServer) -> None:
    url = with_credentials(valen_server.base_url)
    # The server echoes the query back in an error, as a confused gateway might.
    valen_server.responder = lambda r, _: err(403, {"error": f"no access with {r.query}"})
    text = helpdesk("valen", "check", "--base-url", url)
    as_json = helpdesk("valen", "check", "--base-url", url, "--json")
    for result in (text, as_json):
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert_no_url_secrets(result.stdout + result.stderr)
    host = valen_server.base_url.split("://", 1)[1].removesuffix("/v1")
    assert f"  base URL     http://{host}/v1?api_key=[redacted]&region=[redacted]" in text.stdout
    assert json.loads(as_json.stdout)["url"].endswith("/v1/decisions?api_key=[redacted]"
                                                      "&region=[redacted]")  # fmt: skip
    # The credentials were used: the route comes before the query.
    request = valen_server.received[0]
    assert request.path == "/v1/decisions" and request.query == f"api_key={TOKEN}&region=eu"


async def test_credentials_in_the_base_url_never_reach_a_decision(tmp_path: Path) -> None:
    decision = await ask(settings_for(with_credentials(closed_port_url()), tmp_path))
    assert kinds(decision) == {"connection"}
    assert all("api_key=[redacted]" in str(c.error) for c in decision.candidates)
    assert_no_url_secrets(decision.model_dump_json())
