"""The HTTP client for Valen: one request per input, over a shared `httpx.AsyncClient`.

Failures are retried the way the Valen docs ask (408, 429, 500, 502, 503 and network failures;
never a request the server called wrong), with capped exponential backoff and jitter, honouring
the server's `retry-after-ms` / `retry-after`, all inside the time budget of one customer question.
"""

from __future__ import annotations

import asyncio
import html
import json
import math
import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic import SecretStr

from chatbot.valen.errors import (
    AuthenticationError,
    BadRequestError,
    BudgetExhaustedError,
    GatewayTimeoutError,
    InvalidResponseError,
    NotFoundError,
    RateLimitedError,
    ServerError,
    TooLargeError,
    ValenConnectionError,
    ValenError,
    ValenTimeoutError,
)
from chatbot.valen.protocol import Dialect, Outcome, Question, parse_answers, request_body, route

DEFAULT_BASE_URL = "https://api.valen-team.workers.dev/v1"
SYSTEMONE_BASE_URL = "http://127.0.0.1:8795/v1"
DEFAULT_BUDGET_S = 20.0

# Statuses worth another try: the same request can succeed once the server recovers.
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503})
MAX_MESSAGE_CHARS = 200
REDACTED = "[redacted]"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How hard to try one request before the passage counts as not judged."""

    max_attempts: int = 4
    """Requests per passage, the first one included."""
    base_delay_s: float = 0.5
    """Backoff before the first retry; it doubles each time up to `max_delay_s`."""
    max_delay_s: float = 8.0
    """The most our own backoff waits between two attempts."""
    max_wait_s: float = 60.0
    """The longest server-requested wait (`retry-after`) honoured; a longer one gives up at once."""
    retry_gateway_timeout: bool = False
    """Retry 504 too (off: the same input would most likely time out again)."""

    def should_retry(self, error: ValenError) -> bool:
        if isinstance(error, BudgetExhaustedError):
            return False
        if error.status is not None:
            return error.status in RETRY_STATUSES or (
                error.status == 504 and self.retry_gateway_timeout
            )
        return isinstance(error, ValenConnectionError | ValenTimeoutError)

    def backoff_s(self, failures: int, rng: random.Random) -> float:
        """Wait after `failures` failed attempts: capped exponential, with half of it jittered so
        clients that failed together do not retry together."""
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** max(failures - 1, 0))
        return rng.uniform(ceiling / 2, ceiling)


def retry_after_s(headers: httpx.Headers, *, now: datetime | None = None) -> float | None:
    """The wait the server asked for: `retry-after-ms`, else `retry-after` in seconds or as an
    HTTP date. None when absent or unreadable; never negative."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return max(value, 0.0)
    after = headers.get("retry-after")
    if after is None:
        return None
    try:
        value = float(after)
    except ValueError:
        try:
            when = parsedate_to_datetime(after)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # RFC 9110 dates are GMT; parsedate leaves "-0000" naive.
            when = when.replace(tzinfo=UTC)
        value = (when - (now or datetime.now(UTC))).total_seconds()
    return max(value, 0.0) if math.isfinite(value) else None


def _one_line(text: str, secret: str | None) -> str:
    """Whitespace collapsed, the key scrubbed (before cutting, so no prefix of it survives),
    then cut to a length that fits one line."""
    line = " ".join(text.split())
    if secret:
        line = line.replace(secret, REDACTED)
    return line[:MAX_MESSAGE_CHARS]


def _html_title(text: str) -> str | None:
    match = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
    return html.unescape(match.group(1)) if match else None


def error_message(response: httpx.Response, *, secret: str | None = None) -> str:
    """The server's own explanation from any common error shape, kept to one short line.

    Understands `{"error": {"message": ...}}`, `{"error": "..."}`, `{"detail": "..."}`, FastAPI's
    `{"detail": [{"msg": ...}]}`, plain text, and reports an HTML page as such instead of dumping
    it. `secret` (the API key) is scrubbed in case the server echoes it.
    """
    content_type = response.headers.get("content-type", "")
    text = response.text
    if "html" in content_type or text.lstrip()[:15].lower().startswith(("<!doctype", "<html")):
        title = _html_title(text)
        named = f" ({_one_line(title, secret)!r})" if title else ""
        return f"the server sent an HTML page{named} instead of JSON, {len(text)} bytes"
    try:
        body: Any = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return _one_line(text, secret) or response.reason_phrase or f"HTTP {response.status_code}"
    message: Any = body
    if isinstance(body, dict):
        message = body.get("error", body.get("detail", body.get("message", body)))
        if isinstance(message, dict):
            message = message.get("message", message)
    if isinstance(message, list):  # FastAPI's validation detail: a list of {loc, msg}.
        message = "; ".join(
            str(item.get("msg", item)) if isinstance(item, dict) else str(item) for item in message
        )
    return _one_line(str(message), secret) or response.reason_phrase


def error_for_status(response: httpx.Response, *, secret: str | None = None) -> ValenError:
    """Map an error response to the matching `ValenError`."""
    status = response.status_code
    message = error_message(response, secret=secret)
    if status in (400, 422):
        return BadRequestError(message, status=status)
    if status in (401, 403):
        return AuthenticationError(message, status=status)
    if status == 404:
        return NotFoundError(message, status=status)
    if status == 413:
        return TooLargeError(message, status=status)
    error: ValenError
    if status == 429:
        error = RateLimitedError(message, status=status)
    elif status == 504:
        error = GatewayTimeoutError(message, status=status)
    elif status == 408:
        error = ValenTimeoutError(message, status=status)
    elif status >= 500:
        error = ServerError(message, status=status)
    else:
        error = ValenError(message, status=status)
    error.wait_s = retry_after_s(response.headers)
    return error


class ValenClient:
    """Asks Valen typed questions about one input per request.

    The HTTP client is passed in so the app shares one connection pool and tests can point it at a
    loopback server. A semaphore bounds how many requests are in flight across all callers.
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        base_url: str = DEFAULT_BASE_URL,
        dialect: Dialect = "decisions",
        api_key: SecretStr | None = None,
        model: str | None = None,
        max_in_flight: int = 20,
        retry: RetryPolicy | None = None,
        budget_s: float = DEFAULT_BUDGET_S,
        rng: random.Random | None = None,
    ) -> None:
        self.http = http
        self.base_url = base_url.rstrip("/")
        self.dialect: Dialect = dialect
        self.model = model
        self.retry = retry or RetryPolicy()
        self.budget_s = budget_s
        self._api_key = api_key
        self._slots = asyncio.Semaphore(max_in_flight)
        self._rng = rng or random.Random()

    @property
    def url(self) -> str:
        """Where requests go (safe to print: it never holds the key)."""
        return self.base_url + route(self.dialect)

    @property
    def has_key(self) -> bool:
        return self._secret is not None

    @property
    def _secret(self) -> str | None:
        value = self._api_key.get_secret_value() if self._api_key is not None else ""
        return value or None

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json"}
        if self._secret is not None:
            headers["authorization"] = f"Bearer {self._secret}"
        return headers

    def deadline(self) -> float:
        """The monotonic time by which a question starting now must be done with Valen."""
        return time.monotonic() + self.budget_s

    async def post(self, text: str, questions: Sequence[Question]) -> httpx.Response:
        """Send one request and return the raw response, raising only for transport failures."""
        body = request_body(self.dialect, text=text, questions=questions, model=self.model)
        async with self._slots:
            try:
                return await self.http.post(self.url, json=body, headers=self._headers())
            except httpx.TimeoutException as error:
                raise ValenTimeoutError(
                    f"no reply from {self.url}: {type(error).__name__}"
                ) from None
            except httpx.TransportError as error:
                raise ValenConnectionError(
                    f"cannot reach {self.url}: {type(error).__name__}"
                ) from None
            except (httpx.RequestError, httpx.InvalidURL) as error:
                raise ValenError(f"cannot send to {self.url}: {type(error).__name__}") from None

    def read(self, response: httpx.Response, names: Sequence[str]) -> dict[str, Outcome]:
        """One outcome per name from a response, or the error the response stands for."""
        if response.status_code != 200:
            raise error_for_status(response, secret=self._secret)
        try:
            body = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            message = error_message(response, secret=self._secret)
            raise InvalidResponseError(f"reply is not JSON: {message}", status=200) from None
        return parse_answers(body, names)

    async def attempt(self, text: str, questions: Sequence[Question]) -> dict[str, Outcome]:
        """One request, no retries."""
        response = await self.post(text, questions)
        return self.read(response, [q.name for q in questions])

    async def decide(
        self, text: str, questions: Sequence[Question], *, deadline: float | None = None
    ) -> dict[str, Outcome]:
        """Ask `questions` about `text`; one outcome per question name.

        Retries what the policy allows until `deadline` (monotonic; default: this call's own
        budget). Raises the last `ValenError`, with `attempts` set, when it gives up.
        """
        deadline = self.deadline() if deadline is None else deadline
        attempts = 0
        last: ValenError | None = None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._out_of_budget(attempts, last)
            attempts += 1
            try:
                async with asyncio.timeout(remaining):
                    return await self.attempt(text, questions)
            except TimeoutError:
                raise self._out_of_budget(attempts, last) from None
            except ValenError as error:
                error.attempts = attempts
                last = error
                if attempts >= self.retry.max_attempts or not self.retry.should_retry(error):
                    raise
                wait = self._wait_s(error, attempts)
                if time.monotonic() + wait >= deadline:
                    raise self._out_of_budget(attempts, error, next_wait_s=wait) from None
            await asyncio.sleep(wait)

    def _wait_s(self, error: ValenError, failures: int) -> float:
        """How long to wait before the next attempt; raises `error` when the server asked for
        longer than the policy honours (waiting less would only be refused again)."""
        asked = error.wait_s
        if asked is None:
            return self.retry.backoff_s(failures, self._rng)
        if asked > self.retry.max_wait_s:
            error.message = (
                f"{error.message}; the server asked to wait {asked:.0f} s, "
                f"more than the {self.retry.max_wait_s:g} s we wait"
            )
            raise error
        # A little jitter on top, so clients told the same instant do not all come back at once.
        return asked + self._rng.uniform(0, min(asked, self.retry.base_delay_s) / 4)

    def _out_of_budget(
        self, attempts: int, last: ValenError | None, *, next_wait_s: float | None = None
    ) -> BudgetExhaustedError:
        why = f"; last: {last.describe(attempts=False)}" if last is not None else ""
        if next_wait_s is not None:
            why = f"; next try due in {next_wait_s:.1f} s{why}"
        error = BudgetExhaustedError(f"the question's time budget for Valen ran out{why}")
        error.attempts = attempts
        return error
