"""The wire: both dialects' requests, reply validation, error bodies, and the retry rules."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from chatbot.valen.client import (
    Reply,
    RetryPolicy,
    ValenClient,
    error_for_status,
    error_message,
    retry_after_s,
)
from chatbot.valen.errors import (
    AuthenticationError,
    BadRequestError,
    BudgetExhaustedError,
    GatewayTimeoutError,
    InvalidResponseError,
    NotFoundError,
    RateLimitedError,
    RefusedError,
    ServerError,
    TooLargeError,
    UnexpectedStatusError,
    ValenConnectionError,
    ValenError,
    ValenTimeoutError,
)
from chatbot.valen.protocol import PREDICATE, Dialect, Question, parse_answers, request_body
from chatbot.valen.redact import Redactor
from tests.valen_server import Reply as ServerReply
from tests.valen_server import ValenTestServer, constant, fixed

QUESTIONS = [Question("a", "Is it A?"), Question("b", "Is it B?"), Question("c", "Is it C?")]


# --- requests in both dialects -------------------------------------------------------------


@pytest.mark.parametrize("model", [None, "valen-preview"])
@pytest.mark.parametrize("dialect", ["decisions", "systemone"])
async def test_both_dialects_round_trip_through_a_strict_server(
    dialect: Dialect, model: str | None, valen_server: ValenTestServer
) -> None:
    valen_server.responder = constant(0.73)
    async with httpx.AsyncClient() as http:
        client = ValenClient(http, base_url=valen_server.base_url + "/", dialect=dialect,
                             model=model)  # fmt: skip
        outcomes = await client.decide("Customer question: q\n\nHelp-center passage: p", QUESTIONS)
    assert outcomes == {"a": 0.73, "b": 0.73, "c": 0.73}
    [request] = valen_server.received
    assert request.path == f"/v1/{dialect}"
    assert request.headers["content-type"] == "application/json"
    body = request.body
    assert ("model" in body) == (model is not None)
    if dialect == "systemone":
        assert body["state"] == "Customer question: q\n\nHelp-center passage: p"
        assert body["questions"] == {
            q.name: {"type": "noul", "instructions": q.instructions} for q in QUESTIONS
        }
    else:
        assert body["input"] == "Customer question: q\n\nHelp-center passage: p"
        assert body["questions"] == [
            {"type": "predicate", "name": q.name, "instructions": q.instructions} for q in QUESTIONS
        ]


def test_systemone_body_has_no_model_and_no_criteria_unless_configured() -> None:
    body = request_body("systemone", text="t", questions=[Question("answers", PREDICATE)],
                        model=None)  # fmt: skip
    noul = {"type": "noul", "instructions": PREDICATE}
    assert body == {"state": "t", "questions": {"answers": noul}}


# --- reply validation --------------------------------------------------------------------


def listed(*answers: dict[str, Any]) -> dict[str, Any]:
    return {"answers": list(answers)}


def test_list_and_map_and_both_probability_fields_normalise_the_same() -> None:
    names = ["a", "b"]
    as_list = listed({"type": "predicate", "name": "b", "probability": 0.2},
                     {"type": "predicate", "name": "a", "probability": 1})  # fmt: skip
    as_map = {"answers": {"a": {"type": "noul", "noul": 1.0}, "b": {"type": "noul", "noul": 0.2}}}
    assert parse_answers(as_list, names) == parse_answers(as_map, names) == {"a": 1.0, "b": 0.2}


def test_a_refusal_among_normal_answers_marks_only_its_own_name() -> None:
    body = listed({"type": "predicate", "name": "a", "probability": 0.8},
                  {"type": "refusal", "name": "b", "probability": 0.5},
                  {"type": "predicate", "name": "c", "probability": 0.3})  # fmt: skip
    outcomes = parse_answers(body, ["a", "b", "c"])
    assert outcomes["a"] == 0.8 and outcomes["c"] == 0.3
    assert isinstance(outcomes["b"], RefusedError)  # Never its 0.5.


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ({"type": "predicate", "probability": math.nan}, "not a probability"),
        ({"type": "predicate", "probability": math.inf}, "not a probability"),
        ({"type": "predicate", "probability": 1.0001}, "not a probability"),
        ({"type": "predicate", "probability": -0.1}, "not a probability"),
        ({"type": "predicate", "probability": "0.9"}, "not a number"),
        ({"type": "predicate", "probability": True}, "not a number"),
        ({"type": "predicate", "probability": None}, "no 'probability'"),
        ({"type": "predicate"}, "no 'probability'"),
        ({"type": "noul", "noul": [0.9]}, "not a number"),
        ({"type": "choice", "probability": 0.9}, "type 'choice'"),
        ({"type": "unsupported", "question_type": "noul"}, "type 'unsupported'"),
        ({"type": [], "probability": 0.9}, "type a list"),  # Found by the fuzz test.
    ],
)
def test_a_bad_answer_marks_that_name_invalid_and_keeps_the_others(
    answer: dict[str, Any], says: str
) -> None:
    body = listed({"name": "a", **answer}, {"type": "predicate", "name": "b", "probability": 0.4})
    outcomes = parse_answers(body, ["a", "b"])
    assert isinstance(outcomes["a"], InvalidResponseError) and says in outcomes["a"].message
    assert outcomes["b"] == 0.4


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"model": "x"}, "no 'answers'"),
        ([], "no 'answers'"),
        ({"answers": "yes"}, "neither a list nor an object"),
        (listed({"type": "predicate", "probability": 0.9}), "no name"),
        (listed({"type": "predicate", "name": "zz", "probability": 0.9}), "unknown name"),
    ],
)
def test_a_bad_reply_as_a_whole_raises(body: Any, says: str) -> None:
    with pytest.raises(InvalidResponseError, match=says):
        parse_answers(body, ["a"])


def test_missing_and_duplicated_names_are_invalid() -> None:
    body = listed({"type": "predicate", "name": "a", "probability": 0.9},
                  {"type": "predicate", "name": "a", "probability": 0.1})  # fmt: skip
    outcomes = parse_answers(body, ["a", "b"])
    assert isinstance(outcomes["a"], InvalidResponseError) and "duplicate" in outcomes["a"].message
    assert isinstance(outcomes["b"], InvalidResponseError) and "no answer" in outcomes["b"].message


# --- error bodies ---------------------------------------------------------------------------


def response(status: int, content: bytes | str = b"", content_type: str = "application/json",
             **headers: str) -> Reply:  # fmt: skip
    data = content.encode() if isinstance(content, str) else content
    return Reply(status, httpx.Headers({"content-type": content_type, **headers}), data)


@pytest.mark.parametrize(
    ("content", "content_type", "message"),
    [
        ('{"error": {"message": "bad input", "type": "x"}}', "application/json", "bad input"),
        ('{"error": "model not loaded"}', "application/json", "model not loaded"),
        ('{"detail": "state is empty"}', "application/json", "state is empty"),
        ('{"detail": [{"loc": ["body"], "msg": "A"}, {"msg": "B"}]}', "application/json", "A; B"),
        ('{"message": "plain message"}', "application/json", "plain message"),
        ("upstream\nconnect error", "text/plain", "upstream connect error"),
        ("<html><head><title>502 Bad &amp; Gateway</title></head><body>" + "x" * 500,
         "text/html", "the server sent an HTML page ('502 Bad & Gateway') instead of JSON"),
        ("<!DOCTYPE html><p>no title</p>", "application/octet-stream",
         "the server sent an HTML page instead of JSON, 30 bytes"),
        ("", "application/json", "Service Unavailable"),
    ],
)  # fmt: skip
def test_error_bodies_in_every_shape(content: str, content_type: str, message: str) -> None:
    got = error_message(response(503, content, content_type))
    assert got.startswith(message), got
    assert "\n" not in got and "<" not in got and len(got) <= 200


def test_a_long_body_is_cut_after_the_key_is_scrubbed() -> None:
    secret = "fake-key-" + "abcdefghijklmnopqrstuvwxyz012345"  # Not shaped like a real key.
    text = "x" * 180 + secret  # The cut at 200 would otherwise leave the key's first 20 chars.
    got = error_message(response(500, text, "text/plain"), redact=Redactor([secret]))
    assert got == "x" * 180 + "[redacted]"


@pytest.mark.parametrize(
    ("status", "error_type"),
    [(400, BadRequestError), (422, BadRequestError), (401, AuthenticationError),
     (403, AuthenticationError), (404, NotFoundError), (413, TooLargeError),
     (429, RateLimitedError), (408, ValenTimeoutError), (500, ServerError), (502, ServerError),
     (503, ServerError), (504, GatewayTimeoutError), (418, UnexpectedStatusError)],
)  # fmt: skip
def test_statuses_map_to_the_hierarchy(status: int, error_type: type[ValenError]) -> None:
    error = error_for_status(response(status, '{"error": "x"}'))
    assert type(error) is error_type and error.status == status


# --- retry rules ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "retried"),
    [(408, True), (429, True), (500, True), (502, True), (503, True), (504, False),
     (400, False), (401, False), (403, False), (404, False), (413, False), (422, False),
     (501, False)],
)  # fmt: skip
def test_which_statuses_are_retried(status: int, retried: bool) -> None:
    assert RetryPolicy().should_retry(error_for_status(response(status))) is retried


def test_504_is_retried_only_when_asked() -> None:
    error = error_for_status(response(504))
    assert RetryPolicy(retry_gateway_timeout=True).should_retry(error)


def test_network_failures_are_retried_and_the_rest_are_not() -> None:
    policy = RetryPolicy()
    assert policy.should_retry(ValenConnectionError("refused"))
    assert policy.should_retry(ValenTimeoutError("read timeout"))
    assert not policy.should_retry(InvalidResponseError("html"))
    assert not policy.should_retry(RefusedError("no"))
    assert not policy.should_retry(BudgetExhaustedError("out of time"))


NOW = datetime(2026, 11, 30, 8, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "30"}, 0.25),  # The precise one wins.
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after": format_datetime(NOW + timedelta(seconds=42), usegmt=True)}, 42.0),
        ({"retry-after": "Mon, 30 Nov 2026 08:00:42 GMT"}, 42.0),
        ({"retry-after": format_datetime(NOW - timedelta(seconds=5), usegmt=True)}, 0.0),
        ({"retry-after": "-3"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after-ms": "nan", "retry-after": "2"}, 2.0),
        ({}, None),
    ],
)
def test_retry_after_in_every_form(headers: dict[str, str], wait: float | None) -> None:
    assert retry_after_s(httpx.Headers(headers), now=NOW) == wait


def test_backoff_is_exponential_capped_and_jittered() -> None:
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=8.0)
    rng = random.Random(7)
    for failures, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 8.0), (9, 8.0)]:
        waits = [policy.backoff_s(failures, rng) for _ in range(50)]
        assert all(ceiling / 2 <= w <= ceiling for w in waits)
        assert len(set(waits)) == 50  # Jittered: clients that failed together spread out.


async def test_a_wait_above_the_cap_is_not_retried(valen_server: ValenTestServer) -> None:
    valen_server.responder = fixed(ServerReply(429, {"error": "later"}, {"retry-after": "61"}))
    async with httpx.AsyncClient() as http:
        client = ValenClient(http, base_url=valen_server.base_url, retry=RetryPolicy())
        with pytest.raises(RateLimitedError) as caught:
            await client.decide("t", [Question("answers", PREDICATE)])
    assert caught.value.wait_s == 61.0 and caught.value.attempts == 1
    assert "asked to wait 61 s, more than the 60 s we wait" in caught.value.describe()
    assert len(valen_server.received) == 1
