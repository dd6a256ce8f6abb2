"""An API key a server echoes in any spelling is scrubbed from everything kept or shown.

`scrub_key` (URLs, start lines, the CLI's own lines) hid the percent-encoded key, but `Redactor`
(every server message) only the key as written, whitespace-collapsed or JSON-escaped: a 401 that
quoted `urllib.parse.quote(key)` reached `helpdesk ask` (`auth (HTTP 401): bad key sk%20a%20b`),
a bot's decision in SQLite (and its -wal) and the agent's Errors panel. Both are one scrubber now.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from urllib.parse import quote, quote_plus

import httpx
import pytest
from pydantic import SecretStr

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotWorker
from chatbot.valen.client import RetryPolicy, ValenClient
from chatbot.valen.errors import AuthenticationError
from chatbot.valen.protocol import ANSWER_NAME, PREDICATE, Question
from chatbot.valen.redact import REDACTED, Redactor, display_url, scrub_key, url_secrets
from tests.backends import Backend
from tests.cli_run import run_cli
from tests.valen_faults import QUESTION, settings_for
from tests.valen_server import Received, Reply, ValenTestServer

KEYS = ["sk a b", 'sk q"x%y', "sk-live/0123+abc~d!e"]
"""A key with spaces, with a quote and a percent sign, and with characters that `quote`,
`quote_plus` and JavaScript's `encodeURIComponent` each spell differently (`/`, `+`, `~`, `!`)."""


def spellings(key: str) -> dict[str, str]:
    """Every way a server might echo `key`."""
    lower_hex = re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), quote(key, safe=""))
    basic = base64.b64encode(f"{key}:".encode()).decode()
    return {
        "as written": key,
        "quote": quote(key),
        "quote, nothing safe": quote(key, safe=""),
        "quote_plus": quote_plus(key),
        "lower-case hex": lower_hex,
        "every byte encoded": "".join(f"%{byte:02x}" for byte in key.encode()),
        "JSON": json.dumps(key)[1:-1],
        "JSON, \\u escapes": "".join(f"\\u{ord(c):04x}" for c in key),
        "collapsed": " ".join(key.split()),
        "doubled spaces": key.replace(" ", "  "),
        "base64": base64.b64encode(key.encode()).decode(),
        "base64 as Basic auth": basic,
        "base64 unpadded": basic.rstrip("="),
    }


def spelled(key: str, *, how: str) -> str:
    return spellings(key)[how]


def forms(key: str) -> set[str]:
    return {form for form in spellings(key).values() if form}


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("how", list(spellings(KEYS[0])))
def test_every_spelling_is_scrubbed_by_the_one_scrubber(key: str, how: str) -> None:
    echoed = spellings(key)[how]
    text = f"bad key {echoed} (see the docs)"
    assert Redactor([key])(text) == f"bad key {REDACTED} (see the docs)"
    # The same scrubber for URLs and start lines: the two paths cannot disagree.
    assert scrub_key(text, key) == f"bad key {REDACTED} (see the docs)"
    assert Redactor([key]).one_line(text, 200) == f"bad key {REDACTED} (see the docs)"


def test_credentials_in_the_url_are_scrubbed_as_basic_auth_carries_them() -> None:
    # httpx sends a URL's user and password as Basic auth; a server may echo that header.
    url = "http://valen-user:pa%20ss@h:1/v1"
    basic = base64.b64encode(b"valen-user:pa ss").decode()
    scrub = Redactor(url_secrets(url))
    assert scrub(f"refused Basic {basic}") == f"refused Basic {REDACTED}"
    assert display_url(url) == f"http://{REDACTED}@h:1/v1"


def test_ordinary_text_is_left_alone() -> None:
    text = "rate limited: 12% of 40 requests, try again in 2 s + jitter"
    assert Redactor(KEYS)(text) == text
    # A whitespace-only secret (a URL's blank password) would hide every space.
    assert Redactor(["    "])(text) == text


def echo(encode: Callable[[str], str], *, status: int = 401) -> Callable[[Received, int], Reply]:
    """A server that rejects the key, quoting it back as `encode` spells it."""

    def respond(received: Received, _: int) -> Reply:
        key = received.headers.get("authorization", "").removeprefix("Bearer ")
        return Reply(status=status, body={"error": {"message": f"bad key {encode(key)}"}})

    return respond


@pytest.mark.parametrize("key", KEYS)
async def test_the_client_never_raises_an_echoed_spelling(
    key: str, valen_server: ValenTestServer
) -> None:
    for how, spell in spellings(key).items():
        valen_server.responder = echo(partial(spelled, how=how))
        async with httpx.AsyncClient() as http:
            client = ValenClient(
                http,
                base_url=valen_server.base_url,
                api_key=SecretStr(key),
                retry=RetryPolicy(max_attempts=1),
            )
            with pytest.raises(AuthenticationError) as caught:
                await client.decide("t", [Question(ANSWER_NAME, PREDICATE)])
        said = caught.value.describe()
        assert said == f"auth (HTTP 401): bad key {REDACTED}", (how, said)
        assert spell not in said and spell not in repr(caught.value)


def test_helpdesk_ask_prints_no_encoded_key(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
    tmp_path: Path,
) -> None:
    # The tester's case, as they ran it.
    key = "sk a b"
    valen_server.responder = echo(quote)
    monkeypatch.setenv("VALEN_API_KEY", key)
    live = ["--replay", "off", "--base-url", valen_server.base_url, "--cache", str(tmp_path / "c")]
    code, out, err = run_cli(capsys, "ask", QUESTION, *live)
    assert valen_server.received, err
    assert "bad key [redacted]" in out + err
    for form in forms(key):
        assert form not in out + err, form
    code, out, err = run_cli(capsys, "ask", QUESTION, "--json", *live)
    assert "bad key [redacted]" in out
    for form in forms(key):
        assert form not in out + err, form


async def test_a_bot_keeps_no_encoded_key_in_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, valen_server: ValenTestServer
) -> None:
    # The tester found `bad key sk%20q%22x%25y` in the decision's error, in the database and in
    # its -wal, which the agent's Errors panel shows.
    from chatbot.assembly import build_engine, make_http_client

    key = 'sk q"x%y'
    valen_server.responder = echo(quote)
    monkeypatch.setenv("VALEN_API_KEY", key)
    db = tmp_path / "desk.sqlite3"
    settings = settings_for(valen_server.base_url, tmp_path, db=db, k=2)
    desk = AsyncDesk.open(Backend("sqlite", db).service)
    try:
        async with make_http_client(settings) as http:
            engine = build_engine(settings, http)
            worker = BotWorker(desk, lambda: engine, poll_s=0.05)
            asked = await desk.ask(None, QUESTION)
            task = asyncio.create_task(worker.run())
            async with asyncio.timeout(30):
                while not worker.stats.outcomes:
                    await asyncio.sleep(0.01)
            worker.stop()
            await task
        assert worker.stats.outcomes == {"escalated": 1}
        assert (await desk.conversation(asked.conversation.id)).pending == 0
        stored = b"".join(
            path.read_bytes() for path in tmp_path.iterdir() if path.name.startswith("desk.")
        )
    finally:
        await desk.aclose()
    assert b"bad key [redacted]" in stored
    for form in forms(key):
        assert form.encode() not in stored, form


def test_valen_check_prints_no_encoded_key(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
) -> None:
    key = "sk-live/0123+abc~d!e"
    monkeypatch.setenv("VALEN_API_KEY", key)
    for encode in (quote, quote_plus, partial(spelled, how="base64 as Basic auth")):
        valen_server.responder = echo(encode)
        for extra in ([], ["--json"]):
            code, out, err = run_cli(capsys, "valen", "check", "--base-url",
                                     valen_server.base_url, *extra)  # fmt: skip
            assert code == 1
            assert "bad key [redacted]" in out + err
            for form in forms(key):
                assert form not in out + err, form
