"""The HTTP client for Valen: one request per input, over a shared `httpx.AsyncClient`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import httpx
from pydantic import SecretStr

from chatbot.valen.errors import (
    AuthenticationError,
    BadRequestError,
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


def error_message(response: httpx.Response) -> str:
    """The server's own explanation from any common error shape, kept to one short line."""
    content_type = response.headers.get("content-type", "")
    text = response.text
    if "html" in content_type or text.lstrip()[:15].lower().startswith(("<!doctype", "<html")):
        return f"the server sent an HTML page instead of JSON ({len(text)} bytes)"
    try:
        body: Any = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return " ".join(text.split())[:200] or response.reason_phrase
    message: Any = body
    if isinstance(body, dict):
        message = body.get("error", body.get("detail", body.get("message", body)))
        if isinstance(message, dict):
            message = message.get("message", message)
    if isinstance(message, list):  # FastAPI's validation detail: a list of {loc, msg}.
        message = "; ".join(
            str(item.get("msg", item)) if isinstance(item, dict) else str(item) for item in message
        )
    return " ".join(str(message).split())[:200]


def error_for_status(response: httpx.Response) -> ValenError:
    """Map an error response to the matching `ValenError`."""
    status = response.status_code
    message = error_message(response)
    if status in (400, 422):
        return BadRequestError(message, status=status)
    if status in (401, 403):
        return AuthenticationError(message, status=status)
    if status == 404:
        return NotFoundError(message, status=status)
    if status == 413:
        return TooLargeError(message, status=status)
    if status == 429:
        return RateLimitedError(message, status=status)
    if status == 504:
        return GatewayTimeoutError(message, status=status)
    if status == 408:
        return ValenTimeoutError(message, status=status)
    if status >= 500:
        return ServerError(message, status=status)
    return ValenError(message, status=status)


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
        max_in_flight: int = 8,
    ) -> None:
        self.http = http
        self.base_url = base_url.rstrip("/")
        self.dialect: Dialect = dialect
        self.model = model
        self._api_key = api_key
        self._slots = asyncio.Semaphore(max_in_flight)

    @property
    def url(self) -> str:
        """Where requests go (safe to print: it never holds the key)."""
        return self.base_url + route(self.dialect)

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json"}
        if self._api_key is not None and self._api_key.get_secret_value():
            headers["authorization"] = f"Bearer {self._api_key.get_secret_value()}"
        return headers

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

    async def decide(self, text: str, questions: Sequence[Question]) -> dict[str, Outcome]:
        """Ask `questions` about `text` in one request; one outcome per question name."""
        response = await self.post(text, questions)
        if response.status_code != 200:
            raise error_for_status(response)
        try:
            body = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise InvalidResponseError(error_message(response), status=200) from None
        return parse_answers(body, [q.name for q in questions])
