"""Generated hostile input for the Valen reply parser and the replay-cache loader (issue 9).

Whatever bytes arrive, the client's read path gives one outcome per asked name (a probability in
[0, 1] or a `ValenError`) or raises a `ValenError`, never anything else, and no message it makes
contains the key. Whatever a cache file holds, loading, looking up and recording never raise, and
a file that is not a cache is never overwritten.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from chatbot.valen.cache import CacheEntry, ReplayCache
from chatbot.valen.client import Reply, RetryPolicy, ValenClient
from chatbot.valen.errors import ValenError
from chatbot.valen.protocol import ANSWER_NAME, PREDICATE, Question
from tests.valen_server import Received, ValenTestServer
from tests.valen_server import Reply as ServerReply

KEY = "sk-fuzz-0123456789abcdef"
NAMES = [ANSWER_NAME, "other"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),  # fmt: skip
    max_leaves=12,
)
answer = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["predicate", "noul", "refusal", "choice", KEY]) | json_values,
        "name": st.sampled_from([ANSWER_NAME, "other", "zz", KEY]) | json_values,
        "probability": st.floats() | st.integers() | st.just(KEY) | json_values,
        "noul": st.floats(min_value=0, max_value=1) | json_values,
    },
)
answers = st.lists(answer, max_size=4) | st.dictionaries(
    st.sampled_from([ANSWER_NAME, "other", KEY]), answer, max_size=3
)
error_shapes = st.sampled_from([
    lambda text: {"error": {"message": text}}, lambda text: {"error": text},
    lambda text: {"detail": text}, lambda text: {"detail": [{"msg": text}, text]},
    lambda text: {"message": [text, {"k": text}]},
])  # fmt: skip


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    """Reply bodies: valid-looking answers, error envelopes, any JSON, HTML, or random bytes,
    sometimes with the key spliced in where a careless server would echo it."""
    kind = draw(st.sampled_from(["answers", "error", "json", "html", "bytes", "numbers"]))
    text = draw(st.text(max_size=60)) + (KEY if draw(st.booleans()) else "")
    if kind == "answers":
        body = json.dumps({"answers": draw(answers)}).encode()
    elif kind == "error":
        body = json.dumps(draw(error_shapes)(text)).encode()
    elif kind == "json":
        body = json.dumps(draw(json_values)).encode()
    elif kind == "html":
        tags = draw(
            st.lists(
                st.sampled_from(
                    [
                        "<title>",
                        "</title>",
                        "<TITLE x=1>",
                        "&amp;",
                        text,
                        "<html>",
                        "<!DOCTYPE html>",
                    ]
                ),
                max_size=30,
            )
        )
        body = "".join(tags).encode()  # fmt: skip
    elif kind == "numbers":
        digits = draw(st.integers(min_value=1, max_value=6000))
        depth = draw(st.integers(min_value=0, max_value=3000))
        body = b"[" * depth + b"9" * digits + b"]" * depth
    else:
        body = draw(st.binary(max_size=300))
    if draw(st.booleans()):
        # Truncated somewhere, as a dropped connection leaves it.
        body = body[: draw(st.integers(min_value=0, max_value=len(body)))]
    return body


headers = st.fixed_dictionaries({
    "content-type": st.sampled_from(["application/json", "text/html", "text/plain",
                                     "text/plain; charset=latin-1", "text/html; charset=bogus",
                                     "application/json; charset=utf-16"]),
}, optional={
    "retry-after": st.sampled_from(["1", "-3", "nan", "soon", "Mon, 30 Nov 2026 08:00:42 GMT",
                                    "9" * 400]),
    "retry-after-ms": st.sampled_from(["250", "inf", "x", "1e308"]),
})  # fmt: skip
statuses = st.sampled_from([200, 200, 200, 400, 401, 403, 404, 408, 413, 418, 422, 429, 500,
                            502, 503, 504])  # fmt: skip


def assert_sound(outcomes: dict[str, Any]) -> None:
    assert set(outcomes) == set(NAMES)
    for outcome in outcomes.values():
        if isinstance(outcome, ValenError):
            assert KEY not in outcome.describe() and KEY[:12] not in outcome.describe()
        else:
            assert isinstance(outcome, float) and 0.0 <= outcome <= 1.0


def client_for(http: httpx.AsyncClient, base_url: str = "http://127.0.0.1:9/v1") -> ValenClient:
    return ValenClient(http, base_url=base_url, api_key=SecretStr(KEY),
                       retry=RetryPolicy(max_attempts=1))  # fmt: skip


# One SSL context for every client made here: creating one loads the CA bundle (~20 ms).
SSL = httpx.create_ssl_context()


@pytest.fixture(scope="module")
def offline_client() -> ValenClient:
    return client_for(httpx.AsyncClient(verify=SSL))  # `read` itself never uses the network.


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(status=statuses, head=headers, body=bodies())
def test_the_reply_parser_on_any_bytes(
    status: int, head: dict[str, str], body: bytes, offline_client: ValenClient
) -> None:
    client = offline_client
    try:
        outcomes = client.read(Reply(status, httpx.Headers(head), body), NAMES)
    except ValenError as error:
        assert KEY not in error.describe() and KEY not in repr(error)
        assert "\n" not in error.describe()
    else:
        assert status == 200
        assert_sound(outcomes)


def encoded(body: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        return gzip.compress(body)
    if encoding == "deflate":
        return zlib.compress(body)
    return body


@pytest.fixture(scope="module")
def fuzz_server() -> Iterator[ValenTestServer]:
    server = ValenTestServer(validate=False).start()
    yield server
    server.stop()


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(
    status=statuses,
    head=headers,
    body=bodies(),
    encoding=st.sampled_from(["", "gzip", "deflate", "br", "gzip, gzip", "identity"]),
    mangle=st.booleans(),
    chunked=st.booleans(),
)
def test_the_read_path_over_http_on_any_bytes(
    status: int, head: dict[str, str], body: bytes, encoding: str, mangle: bool, chunked: bool,
    fuzz_server: ValenTestServer,
) -> None:  # fmt: skip
    # Bytes as the server sends them: compressed as declared (or declared and not compressed),
    # with or without a content-length, through the client's streaming, size-capped read.
    payload = body if mangle else encoded(body, encoding)
    extra = {"content-encoding": encoding} if encoding else {}

    def respond(_received: Received, _index: int) -> ServerReply:
        if chunked:
            return ServerReply(status=status, headers={**head, **extra},
                               chunks=lambda: [payload[:7], payload[7:]])  # fmt: skip
        return ServerReply(status=status, raw=payload, headers={**head, **extra})

    fuzz_server.responder = respond

    async def ask() -> dict[str, Any] | ValenError:
        async with httpx.AsyncClient(verify=SSL) as http:
            client = client_for(http, fuzz_server.base_url)
            try:
                return await client.decide("t", [Question(n, PREDICATE) for n in NAMES])
            except ValenError as error:
                return error

    result = asyncio.run(ask())
    if isinstance(result, ValenError):
        assert KEY not in result.describe() and "\n" not in result.describe()
    else:
        assert_sound(result)


cache_documents = st.one_of(
    st.binary(max_size=300),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(st.text(max_size=8), json_values, max_size=3).map(
        lambda entries: json.dumps(
            {"format": "helpdesk-valen-replay/1", "entries": entries}
        ).encode()
    ),  # fmt: skip
    st.builds(
        lambda d, n: b"[" * d + b"1" * n + b"]" * d,
        st.integers(min_value=0, max_value=200_000),
        st.integers(1, 6000),
    ),
)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(content=cache_documents)
def test_the_cache_loader_on_any_file(content: bytes, tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    path.write_bytes(content)
    cache = ReplayCache(path)
    entry = cache.lookup(input="i", instructions=PREDICATE, model=None)
    assert entry is None or entry.probability is None or 0.0 <= entry.probability <= 1.0
    assert len(cache) >= 0
    recorded = cache.record([CacheEntry("i", PREDICATE, None, 0.5)])
    if cache.corrupt is not None:
        assert recorded == 0 and path.read_bytes() == content
    else:
        assert recorded == 1
        assert ReplayCache(path).lookup(input="i", instructions=PREDICATE, model=None) is not None
