"""Two things a tester found with a fake Valen on 127.0.0.1.

The key leaked when Valen echoed it base64-encoded at a shifted position (an echoed
`Authorization` header is `base64("Bearer " + key)`: the key's bytes start one byte into a
three-byte group, so none of its own base64 is in there), as hex, upper-cased or reversed:
`valen check`, `ask --replay off`, the bot's decision in the database and the agent's Errors
panel all showed it. Only the key's base64 alone was scrubbed.

One 429 with `Retry-After: 3600` held every later request of the client for the hour: a running
bot escalated every question at once, unsent, until it was restarted. The shared wait now lasts
`max_retry_wait_s` at most, and the worker says once that Valen asked for more.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from chatbot.assembly import build_engine, make_http_client
from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotWorker
from chatbot.valen.client import RetryPolicy, ValenClient
from chatbot.valen.errors import AuthenticationError, BadRequestError, RateLimitedError
from chatbot.valen.protocol import ANSWER_NAME, PREDICATE, Question
from chatbot.valen.redact import REDACTED, Redactor, scrub_key
from tests.backends import Backend
from tests.cli_run import run_cli
from tests.valen_faults import QUESTION, settings_for
from tests.valen_server import (
    ManualClock,
    Received,
    Reply,
    ValenTestServer,
    probability_reply,
    until,
)

KEY = "sk-Ab/+c=9f3e71d20a"
"""Mixed case (upper-casing changes it), and `/`, `+` that standard and URL-safe base64 differ on
around it."""

ENCODERS: dict[str, Callable[[bytes], str]] = {
    "base64": lambda raw: base64.b64encode(raw).decode(),
    "base64 unpadded": lambda raw: base64.b64encode(raw).decode().rstrip("="),
    "url-safe": lambda raw: base64.urlsafe_b64encode(raw).decode(),
    "url-safe unpadded": lambda raw: base64.urlsafe_b64encode(raw).decode().rstrip("="),
}
PREFIXES = ["", "x", "xy", "Bearer ", "Basic "]
"""Before the key: 0, 1 and 2 bytes into a group of three; an echoed Authorization header."""
SUFFIXES = ["", "!", "?!"]


def key_span(encoded: str, encode: Callable[[bytes], str], prefix: str, suffix: str) -> range:
    """Where in `encoded` the characters that depend on the key are: those that change when the
    key's bytes do (told apart without knowing how base64 lays out its bits)."""
    changed = {
        i
        for flip in (0xFF, 0x55, 0xAA, 0x0F)
        for i, char in enumerate(
            encode(prefix.encode() + bytes(b ^ flip for b in KEY.encode()) + suffix.encode())
        )
        if char != encoded[i]
    }
    return range(min(changed), max(changed) + 1)


@pytest.mark.parametrize("how", list(ENCODERS))
@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_base64_at_every_alignment_is_scrubbed(how: str, prefix: str, suffix: str) -> None:
    encode = ENCODERS[how]
    encoded = encode(f"{prefix}{KEY}{suffix}".encode())
    span = key_span(encoded, encode, prefix, suffix)
    text = f"invalid header {encoded} (see the docs)"
    scrubbers: list[Callable[[str], str]] = [
        Redactor([KEY]),
        lambda t: scrub_key(t, KEY),
        lambda t: Redactor([KEY]).one_line(t, 200),
    ]
    for scrub in scrubbers:
        said = scrub(text)
        head, tail = "invalid header ", " (see the docs)"
        assert said.startswith(head) and said.endswith(tail), said
        before, hidden, after = said[len(head) : -len(tail)].partition(REDACTED)
        assert hidden == REDACTED and REDACTED not in after, said
        # Only what the prefix and suffix alone decide is left around the one [redacted].
        assert encoded.startswith(before) and len(before) <= span.start, said
        assert encoded.endswith(after) and len(encoded) - len(after) >= span.stop, said


OTHER_SPELLINGS = {
    "hex": KEY.encode().hex(),
    "HEX": KEY.encode().hex().upper(),
    "hex, mixed case": "".join(c.upper() if i % 2 else c for i, c in enumerate(KEY.encode().hex())),
    "upper-case": KEY.upper(),
    "lower-case": KEY.lower(),
    "swapped case": KEY.swapcase(),
    "reversed": KEY[::-1],
    "reversed, upper-case": KEY[::-1].upper(),
}


@pytest.mark.parametrize("how", list(OTHER_SPELLINGS))
def test_hex_any_case_and_reversed_are_scrubbed(how: str) -> None:
    text = f"bad key {OTHER_SPELLINGS[how]} (see the docs)"
    assert Redactor([KEY])(text) == f"bad key {REDACTED} (see the docs)"
    assert scrub_key(text, KEY) == f"bad key {REDACTED} (see the docs)"


def test_short_secrets_keep_their_rules() -> None:
    # Under 4 characters, a secret is not searched for in a server's prose at all, and
    # `scrub_key` (URLs, start lines) hides it as written only: no hex, case or reversed forms
    # of a few letters any text may hold.
    text = "route V1 at 7631 via 1v, Ab3 3bA 416233"
    assert Redactor(["v1", "Ab3"])(text) == text
    assert scrub_key(text, "v1") == text
    assert scrub_key("path /v1/x", "v1") == f"path /{REDACTED}/x"
    # Ordinary prose stays readable with a long key, too.
    prose = "rate limited: 12% of 40 requests, try again in 2 s + jitter; Bearer token required"
    assert Redactor([KEY])(prose) == prose


LEAKS: dict[str, Callable[[str], str]] = {
    "Bearer": lambda key: base64.b64encode(f"Bearer {key}".encode()).decode(),
    "x": lambda key: base64.b64encode(f"x{key}".encode()).decode(),
    "hex": lambda key: key.encode().hex(),
    "upper": str.upper,
    "reversed": lambda key: key[::-1],
}
"""The tester's echoes, as Valen would send them."""
SCRUBBED = (
    "bad request Bearer=QmVhcmVyI[redacted] x=e[redacted] hex=[redacted] upper=[redacted] "
    "reversed=[redacted]"
)
"""What is left of them: `QmVhcmVy` is "Bearer", `I` and `e` the space's and the x's own bits."""


def every_form(key: str) -> list[str]:
    """Pieces of each echo that only the key decides: none may be shown or stored."""
    pieces = [KEY.encode().hex(), KEY.upper(), KEY[::-1]]
    for prefix in ("Bearer ", "x"):
        encoded = base64.b64encode(f"{prefix}{key}".encode()).decode()
        span = key_span(encoded, ENCODERS["base64"], prefix, "")
        pieces.append(encoded[span.start : span.stop])
    return pieces


def echo(status: int = 400) -> Callable[[Received, int], Reply]:
    """A server that refuses each request with every one of the tester's echoes of its key."""

    def respond(received: Received, _: int) -> Reply:
        key = received.headers.get("authorization", "").removeprefix("Bearer ")
        said = " ".join(f"{name}={leak(key)}" for name, leak in LEAKS.items())
        return Reply(status=status, body={"error": {"message": f"bad request {said}"}})

    return respond


def assert_no_leak(text: str | bytes) -> None:
    shown = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    for piece in every_form(KEY):
        assert piece not in shown, (piece, shown[:2000])


@pytest.mark.parametrize(("status", "kind"), [(400, BadRequestError), (401, AuthenticationError)])
async def test_the_client_raises_no_echo(
    status: int, kind: type[Exception], valen_server: ValenTestServer
) -> None:
    valen_server.responder = echo(status)
    async with httpx.AsyncClient() as http:
        client = ValenClient(http, base_url=valen_server.base_url, api_key=SecretStr(KEY),
                             retry=RetryPolicy(max_attempts=1))  # fmt: skip
        with pytest.raises(kind) as caught:
            await client.decide("t", [Question(ANSWER_NAME, PREDICATE)])
    said = str(caught.value.describe())  # type: ignore[attr-defined]
    assert SCRUBBED in said, said
    assert_no_leak(said)
    assert_no_leak(repr(caught.value))


def test_valen_check_and_ask_show_no_echo(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
    tmp_path: Path,
) -> None:
    valen_server.responder = echo()
    monkeypatch.setenv("VALEN_API_KEY", KEY)
    base = ["--base-url", valen_server.base_url]
    for extra in ([], ["--json"]):
        code, out, err = run_cli(capsys, "valen", "check", *base, *extra)
        assert code == 1 and SCRUBBED in " ".join((out + err).split()), out + err
        assert_no_leak(out + err)
    live = ["--replay", "off", *base, "--cache", str(tmp_path / "c.json")]
    for extra in ([], ["--json"]):
        code, out, err = run_cli(capsys, "ask", QUESTION, *live, *extra)
        assert SCRUBBED in " ".join((out + err).split()), out + err
        assert_no_leak(out + err)


async def test_a_bot_stores_no_echo(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # What the agent's Errors panel shows is the decision's candidates as stored.
    valen_server.responder = echo()
    monkeypatch.setenv("VALEN_API_KEY", KEY)
    db = tmp_path / "desk.sqlite3"
    settings = settings_for(valen_server.base_url, tmp_path, db=db, k=2)
    desk = AsyncDesk.open(Backend("sqlite", db).service)
    try:
        async with make_http_client(settings) as http:
            engine = build_engine(settings, http)
            worker = BotWorker(desk, lambda: engine, poll_s=0.05)
            asked = await desk.ask(None, QUESTION)
            task = asyncio.create_task(worker.run())
            await until(lambda: bool(worker.stats.outcomes))
            worker.stop()
            await task
        assert worker.stats.outcomes == {"escalated": 1}
        stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("desk."))
    finally:
        await desk.aclose()
    assert SCRUBBED.encode() in stored
    assert_no_leak(stored)
    code, out, err = run_cli(
        capsys, "conversations", "show", str(asked.conversation.id), "--json", "--db", str(db)
    )
    assert code == 0, err
    errors = [c["error"] for d in json.loads(out)["decisions"] for c in d["candidates"]]
    assert errors and all(SCRUBBED in e for e in errors), out
    assert_no_leak(out + err)


# -- a long Retry-After ----------------------------------------------------------------------------

HOUR = {"retry-after": "3600"}


def limited_once() -> Callable[[Received, int], Reply]:
    """The tester's server: one 429 asking for an hour, then fine again."""

    def respond(received: Received, index: int) -> Reply:
        if index == 0:
            return Reply(status=429, body={"error": "slow down"}, headers=HOUR)
        return probability_reply(received, 0.9)

    return respond


async def test_a_long_retry_after_holds_other_requests_for_the_cap_only(
    valen_server: ValenTestServer,
) -> None:
    valen_server.responder = limited_once()
    clock = ManualClock()
    question = [Question(ANSWER_NAME, PREDICATE)]
    async with httpx.AsyncClient() as http:
        client = ValenClient(http, base_url=valen_server.base_url, clock=clock, budget_s=20,
                             retry=RetryPolicy(max_wait_s=60))  # fmt: skip
        with pytest.raises(RateLimitedError) as first:
            await client.decide("first", question)
        # Not retried: Valen asked for more than the client waits.
        assert valen_server.count() == 1
        assert "the server asked to wait 3600 s, more than the 60 s we wait" in str(first.value)
        assert client.paused_for == 60  # Not 3600.
        assert client.longest_refused_wait_s == 3600
        clock.advance(30)
        with pytest.raises(RateLimitedError) as held:
            await client.decide("second", question)
        assert valen_server.count() == 1
        assert held.value.describe() == (
            "rate-limited (HTTP 429): not sent: Valen asked to wait 3600 s, of which requests "
            "wait 60 s at most (30 s of it still to go), longer than the question's time budget "
            "allows (20 s left); it said: slow down"
        )
        clock.advance(31)  # The cap has passed: Valen is asked again, and answers.
        assert await client.decide("third", question) == {ANSWER_NAME: 0.9}
    assert valen_server.count() == 2


async def test_a_running_bot_asks_again_after_the_cap_and_says_so_once(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    valen_server.responder = limited_once()
    monkeypatch.setenv("VALEN_API_KEY", "sk-bot-0123456789")
    db = tmp_path / "desk.sqlite3"
    settings = settings_for(valen_server.base_url, tmp_path, db=db, k=1, budget_s=20.0)
    clock = ManualClock()
    desk = AsyncDesk.open(Backend("sqlite", db).service)
    try:
        async with make_http_client(settings) as http:
            engine = build_engine(settings, http)
            assert engine.judge.client is not None
            engine.judge.client.clock = clock
            worker = BotWorker(desk, lambda: engine, poll_s=0.05)
            task = asyncio.create_task(worker.run())
            with caplog.at_level(logging.WARNING, logger="helpdesk.bot"):
                await desk.ask(None, QUESTION)
                await until(lambda: worker.stats.outcomes.get("escalated") == 1)
                clock.advance(30)  # Within the cap: held, unsent, as before.
                await desk.ask(None, QUESTION)
                await until(lambda: worker.stats.outcomes.get("escalated") == 2)
                assert valen_server.count() == 1
                clock.advance(31)  # Past the cap, far from the hour: answered, unrestarted.
                await desk.ask(None, QUESTION)
                await until(lambda: worker.stats.outcomes.get("answered") == 1)
                assert valen_server.count() == 2
            worker.stop()
            await task
    finally:
        await desk.aclose()
    said = [r.getMessage() for r in caplog.records if "asked to wait" in r.getMessage()]
    assert said == [
        "Valen asked to wait 3600 s before it is asked again (HTTP 429), more than the 60 s a "
        "request waits at most (valen.max_retry_wait_s): that request was not retried, and no "
        "request is sent for 60 s; questions that cannot wait so long go to a person meanwhile, "
        "and then the bot asks Valen again"
    ]
