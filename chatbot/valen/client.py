"""The HTTP client for Valen: one request per input, over a shared `httpx.AsyncClient`.

Failures are retried the way the Valen docs ask (408, 429, 500, 502, 503 and network failures;
never a request the server called wrong), with capped exponential backoff and jitter, waiting
longer when the server's `retry-after-ms` / `retry-after` asks (never less: a `Retry-After: 0` is
no reason to hammer it), all inside the time budget of one customer question.

Replies are treated as hostile: read with a size cap while they stream (after decompression),
parsed in linear time, and every string in them scrubbed of the key and URL credentials before
it reaches an error message.
"""

from __future__ import annotations

import asyncio
import html
import json
import math
import random
import re
import ssl
import time
import zlib
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol
from urllib.parse import urljoin

import httpx
from pydantic import SecretStr

from chatbot.text import seconds as _s
from chatbot.valen.errors import (
    AuthenticationError,
    BadRequestError,
    BudgetExhaustedError,
    ConnectionBrokenError,
    ErrorReplyError,
    GatewayTimeoutError,
    InvalidResponseError,
    MalformedKeyError,
    NotFoundError,
    RateLimitedError,
    RedirectError,
    ReplyTooLargeError,
    ServerError,
    TLSError,
    TooLargeError,
    UnexpectedStatusError,
    ValenConnectionError,
    ValenError,
    ValenTimeoutError,
)

# The base URLs are defined in the protocol module, which the settings import without httpx.
from chatbot.valen.protocol import DEFAULT_BASE_URL as DEFAULT_BASE_URL
from chatbot.valen.protocol import SYSTEMONE_BASE_URL as SYSTEMONE_BASE_URL
from chatbot.valen.protocol import (
    Dialect,
    JSONError,
    Outcome,
    Question,
    loads,
    parse_answers,
    quote,
    request_body,
    route,
)
from chatbot.valen.redact import Redactor, display_url, endpoint, key_problem, url_secrets

DEFAULT_BUDGET_S = 20.0

# Statuses worth another try: the same request can succeed once the server recovers.
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503})
MAX_MESSAGE_CHARS = 200
MAX_TITLE_CHARS = 80
MAX_DETAIL_ITEMS = 20
# A Valen answer is a few hundred bytes; anything past this (decoded) is not an answer.
MAX_REPLY_BYTES = 1_000_000
# An HTML error page's <title> is looked for in its first this-many characters only.
HTML_SCAN_CHARS = 16_384
# The longest wait a `retry-after` is read as: a longer one, an infinite one (`inf`, `1e400`) or
# a date centuries ahead all read as this, far past any wait honoured, and are said as
# `LONG_WAIT_WORDS`: `Retry-After: 99999999999999999999999` was said as "99999999999999991611392 s",
# while `inf` was read as no Retry-After at all.
MAX_RETRY_AFTER_S = 86_400.0
LONG_WAIT_WORDS = "a day or more"


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
    HTTP date. None when absent or unreadable (`nan` too); never negative, and never more than
    `MAX_RETRY_AFTER_S`, which any longer wait, infinite ones included, reads as."""
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return _bounded_wait(millis / 1000)
    after = headers.get("retry-after")
    if after is None:
        return None
    value = _number(after)
    if value is None:
        try:
            when = parsedate_to_datetime(after)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:  # RFC 9110 dates are GMT; parsedate leaves "-0000" naive.
            when = when.replace(tzinfo=UTC)
        value = (when - (now or datetime.now(UTC))).total_seconds()
    return _bounded_wait(value)


def _number(text: str | None) -> float | None:
    """A header's number (`inf` and `1e400` are infinite, and long waits); None for none, `nan`
    or anything else."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value


def _bounded_wait(seconds: float) -> float:
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


def wait_words(seconds: float) -> str:
    """A wait a server asked for, as messages say it: `50 s`, `0.5 s`, or `LONG_WAIT_WORDS` for
    one of `MAX_RETRY_AFTER_S` (what any longer wait reads as): never a float's stray digits."""
    if seconds >= MAX_RETRY_AFTER_S:
        return LONG_WAIT_WORDS
    return f"{_s(seconds)} s"


@dataclass(frozen=True, slots=True)
class Reply:
    """A response as the client read it: status, headers and a body of at most `MAX_REPLY_BYTES`
    once decoded."""

    status: int
    headers: httpx.Headers
    content: bytes

    @property
    def reason(self) -> str:
        return httpx.codes.get_reason_phrase(self.status) or f"HTTP {self.status}"

    @property
    def text(self) -> str:
        """The body as text, in its declared charset (UTF-8 otherwise), never failing."""
        charset = "utf-8"
        for param in self.headers.get("content-type", "").split(";")[1:]:
            name, _, value = param.strip().partition("=")
            if name.lower() == "charset" and value:
                charset = value.strip("\"' ")
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:  # A charset Python does not know.
            return self.content.decode("utf-8", errors="replace")


def _html_title(text: str) -> str | None:
    """The first <title>'s text, found in one pass over the start of the page: a page of 40,000
    unclosed <title> tags costs one scan, not one per tag (a lazy regex would be quadratic)."""
    head = text[:HTML_SCAN_CHARS]
    opening = _TITLE_OPEN.search(head)
    if opening is None:
        return None
    start = head.find(">", opening.end())
    if start < 0:
        return None
    closing = _TITLE_CLOSE.search(head, start)
    if closing is None:
        return None
    return html.unescape(head[start + 1 : closing.start()])


_TITLE_OPEN = re.compile(r"<title", re.IGNORECASE)
_TITLE_CLOSE = re.compile(r"</title", re.IGNORECASE)


_NO_SECRETS = Redactor([])


def error_message(reply: Reply, *, redact: Redactor = _NO_SECRETS) -> str:
    """The server's own explanation from any common error shape, kept to one short line.

    Understands `{"error": {"message": ...}}`, `{"error": "..."}`, `{"detail": "..."}`, FastAPI's
    `{"detail": [{"msg": ...}]}`, plain text, and reports an HTML page as such instead of dumping
    it. `redact` scrubs the key and URL credentials in case the server echoes them.
    """
    content_type = reply.headers.get("content-type", "")
    text = reply.text
    if "html" in content_type or text.lstrip()[:15].lower().startswith(("<!doctype", "<html")):
        title = _html_title(text)
        named = f" ({redact.one_line(title, MAX_TITLE_CHARS)!r})" if title else ""
        return f"the server sent an HTML page{named} instead of JSON, {len(reply.content)} bytes"
    try:
        body: Any = loads(reply.content)
    except JSONError:
        return redact.one_line(text, MAX_MESSAGE_CHARS) or reply.reason
    message: Any = body
    if isinstance(body, dict):
        message = body.get("error", body.get("detail", body.get("message", body)))
        if isinstance(message, dict):
            message = message.get("message", message)
    if isinstance(message, list):  # FastAPI's validation detail: a list of {loc, msg}.
        message = "; ".join(
            _text(item.get("msg", item)) if isinstance(item, dict) else _text(item)
            for item in message[:MAX_DETAIL_ITEMS]
        )
    return redact.one_line(_text(message), MAX_MESSAGE_CHARS) or reply.reason


def _error_envelope(body: dict[str, Any]) -> bool:
    """Whether a reply is an error envelope: `{"error": ...}` (OpenAI's, Ollama's) or
    `{"detail": ...}` (FastAPI's), not empty (`null`, `false`, `""`, `{}`, `[]` say no error)."""
    return any(body.get(name) not in (None, False, "", {}, []) for name in ("error", "detail"))


def _error_type(body: dict[str, Any], redact: Redactor) -> str:
    """` (type 'quota')` when the envelope names its error's type, as OpenAI's does."""
    error = body.get("error")
    kind = error.get("type") if isinstance(error, dict) else None
    return f" (type {quote(kind, redact)})" if isinstance(kind, str) and kind else ""


def _text(value: Any) -> str:
    """A string as itself; a number as written; any structure as compact JSON. JSON, not `str()`:
    the reply was parsed within the recursion limit, so writing it back cannot exceed it."""
    if isinstance(value, str):
        return value
    try:
        # Not cut here: the caller scrubs before it cuts, so no prefix of a secret survives.
        return json.dumps(value, ensure_ascii=False)
    except (ValueError, RecursionError):
        return type(value).__name__


def redirect_message(reply: Reply, *, redact: Redactor = _NO_SECRETS, url: str = "") -> str:
    """Where a 3xx reply sends the request (its `location`, resolved against `url`, the request's
    own), credentials and query values hidden; and that it is not followed."""
    location = reply.headers.get("location", "").strip()
    if not location:
        return "the server answered with a redirect that names no target (no Location header); "\
               "redirects are not followed"  # fmt: skip
    try:
        target = display_url(urljoin(url, location) if url else location)
    except ValueError:
        target = "(an unreadable URL)"
    shown = redact.one_line(target, MAX_MESSAGE_CHARS)
    return f"the server redirected the request to {shown}; redirects are not followed"


def error_for_status(
    reply: Reply, *, redact: Redactor = _NO_SECRETS, now: datetime | None = None, url: str = ""
) -> ValenError:
    """Map an error response to the matching `ValenError`; `url` is the request's, against which
    a redirect's relative target is read."""
    status = reply.status
    if 300 <= status < 400:
        return RedirectError(redirect_message(reply, redact=redact, url=url), status=status)
    message = error_message(reply, redact=redact)
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
        error = UnexpectedStatusError(message, status=status)
    error.wait_s = retry_after_s(reply.headers, now=now)
    return error


class _TooLarge(Exception):
    pass


class BoundedDecoder:
    """Decodes a body as it streams in (identity, gzip or deflate), refusing to hold more than
    `limit` decoded bytes: zlib is asked for at most what is left, so a 1 MB gzip bomb that would
    inflate to 1 GiB costs about `limit` bytes of memory, never the whole."""

    def __init__(self, content_encoding: str, *, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.parts: list[bytes] = []
        codings = [c.strip().lower() for c in content_encoding.split(",")]
        codings = [c for c in codings if c and c != "identity"]
        self.coding = codings[0] if len(codings) == 1 else ""
        self._started = False
        self._inflate: Any = None
        if not codings:
            return
        if len(codings) > 1 or self.coding not in ("gzip", "x-gzip", "deflate"):
            raise InvalidResponseError(
                f"the reply's content-encoding {quote(content_encoding)} is not one this client "
                "reads (gzip, deflate)"
            )
        self._inflate = zlib.decompressobj(
            zlib.MAX_WBITS | 16 if self.coding != "deflate" else zlib.MAX_WBITS
        )

    def feed(self, data: bytes) -> None:
        if self._inflate is None:
            self._keep(data)
            return
        first, self._started = not self._started, True
        try:
            self._feed_inflate(data)
        except zlib.error:
            if not (first and self.coding == "deflate"):
                raise InvalidResponseError(f"the reply is not valid {self.coding} data") from None
            # Some servers send raw deflate without the zlib header, as httpx also accepts.
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
            try:
                self._feed_inflate(data)
            except zlib.error:
                raise InvalidResponseError("the reply is not valid deflate data") from None

    def _feed_inflate(self, data: bytes) -> None:
        while data:
            self._keep(self._inflate.decompress(data, self.limit - self.size + 1))
            data = self._inflate.unconsumed_tail

    def finish(self) -> bytes:
        if self._inflate is not None:
            try:
                self._keep(self._inflate.flush())
            except zlib.error:
                raise InvalidResponseError(f"the reply is not valid {self.coding} data") from None
        return b"".join(self.parts)

    def _keep(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.limit:
            raise _TooLarge
        if data:
            self.parts.append(data)


async def read_reply(response: httpx.Response, *, limit: int = MAX_REPLY_BYTES) -> Reply:
    """Read a streamed response into a `Reply`, counting decoded bytes as they arrive; a body over
    `limit` (declared or actual) is an `InvalidResponseError` and is not read further."""
    status = response.status_code
    too_large = ReplyTooLargeError(f"the reply is larger than {limit:,} bytes", status=status)
    declared = response.headers.get("content-length", "").strip()
    encoding = response.headers.get("content-encoding", "")
    # The declared length is only the decoded size when nothing is compressed.
    if declared.isdigit() and not encoding and len(declared) <= 20 and int(declared) > limit:
        raise too_large
    decoder = BoundedDecoder(encoding, limit=limit)
    try:
        async for chunk in response.aiter_raw():
            decoder.feed(chunk)
        content = decoder.finish()
    except _TooLarge:
        raise too_large from None
    except InvalidResponseError as error:
        error.status = status
        raise
    return Reply(status, response.headers, content)


# httpcore's words when the server closes the connection early, before any reply or in the middle
# of its body (the aiohttp transport uses them too): the server was reached.
_HTTPCORE_CLOSED = ("Server disconnected", "peer closed connection")


def _broke_off(error: httpx.TransportError, *, answered: int | None = None) -> str | None:
    """How an exchange with a server that was reached broke off, for "the server at URL ...";
    None for a failure that may mean the server was never reached (refused, DNS, TLS).
    `answered` is the status when the break came in the body: the status did arrive, so the
    words must not suggest no reply came at all."""
    if isinstance(error, httpx.RemoteProtocolError):
        if str(error).startswith(_HTTPCORE_CLOSED):
            if answered is not None:
                return (
                    f"answered {answered} but closed the connection before the reply was complete"
                )
            return "closed the connection before answering completely"
        if answered is not None:
            return f"answered {answered} but then sent a body that is not valid HTTP"
        return "sent a reply that is not valid HTTP"
    if isinstance(error, httpx.ReadError | httpx.WriteError):
        if answered is not None:
            return f"answered {answered} but reset the connection before the reply was complete"
        return "reset the connection before answering completely"
    if answered is not None:  # Whatever failed, the server was reached: it answered.
        return f"answered {answered} but the connection failed before the reply was complete"
    return None


# OpenSSL's reasons when what answered a TLS client hello does not speak TLS (most often plain
# HTTP: an https:// base URL for an http:// server).
_NOT_TLS = frozenset({"WRONG_VERSION_NUMBER", "UNKNOWN_PROTOCOL", "RECORD_LAYER_FAILURE",
                      "PACKET_LENGTH_TOO_LONG", "HTTP_REQUEST"})  # fmt: skip
# X509 verify codes for a chain that ends at a certificate nobody here trusts: self-signed, or
# signed by a CA not in the bundle (a private one).
_UNTRUSTED = frozenset({2, 18, 19, 20, 21})
_NAME_MISMATCH = frozenset({62, 64})  # The certificate is for another host name or IP address.
# The SSL errors that are a connection closed or failing mid-handshake, not a verdict of TLS:
# retried as any connection failure is.
_NOT_A_TLS_VERDICT = (ssl.SSLEOFError, ssl.SSLZeroReturnError, ssl.SSLSyscallError)


def _tls_failure(error: BaseException) -> str | None:
    """Why the TLS handshake failed, when `error` came of a TLS verdict: the certificate not
    trusted, or no TLS at that address; None otherwise. Both httpcore and the aiohttp transport
    keep the `ssl` error as the cause of their `ConnectError`; the deepest one is read (aiohttp's
    own certificate error is an `ssl.CertificateError` too, without OpenSSL's words)."""
    found: ssl.SSLError | None = None
    cause: BaseException | None = error
    for _ in range(8):  # A chain is a few links long; a cycle must not loop.
        if cause is None:
            break
        if isinstance(cause, ssl.SSLError):
            found = cause
        cause = cause.__cause__ or cause.__context__
    if found is None or isinstance(found, _NOT_A_TLS_VERDICT):
        return None
    if isinstance(found, ssl.SSLCertVerificationError):
        said = str(getattr(found, "verify_message", "") or "certificate verify failed")
        code = getattr(found, "verify_code", None)
        if code in _UNTRUSTED:
            return (
                f"the server's certificate is not trusted ({said.rstrip('.')}); if a private CA "
                "signed it, set SSL_CERT_FILE to a file holding that CA's certificate (PEM)"
            )
        if code in _NAME_MISMATCH:
            return (
                f"the server's certificate is for another name ({said.rstrip('.')}); use the "
                "name it was issued for in the base URL"
            )
        return f"the server's certificate was refused ({said.rstrip('.')})"
    reason = str(getattr(found, "reason", None) or type(found).__name__)
    if reason in _NOT_TLS:
        return (
            f"the server at that address does not speak TLS ({reason}); if it serves plain "
            "HTTP, use an http:// base URL"
        )
    return f"the TLS handshake failed ({reason})"


class Clock(Protocol):
    """Where the client reads the time and waits: the system's by default, a fake in tests so a
    retry-after of seconds, or a budget running out, costs none."""

    def monotonic(self) -> float: ...

    def now(self) -> datetime: ...

    async def sleep(self, seconds: float) -> None: ...

    def timeout(self, seconds: float) -> AbstractAsyncContextManager[object]:
        """Raises `TimeoutError` out of its block once `seconds` have passed on this clock."""
        ...


class SystemClock:
    """The real time: `time.monotonic`, the UTC wall clock, asyncio's `sleep` and `timeout`."""

    def monotonic(self) -> float:
        return time.monotonic()

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def timeout(self, seconds: float) -> AbstractAsyncContextManager[object]:
        return asyncio.timeout(seconds)


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
        max_in_flight: int = 256,
        retry: RetryPolicy | None = None,
        budget_s: float = DEFAULT_BUDGET_S,
        rng: random.Random | None = None,
        clock: Clock | None = None,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        self.http = http
        self.dialect: Dialect = dialect
        self.model = model
        self.retry = retry or RetryPolicy()
        self.budget_s = budget_s
        self.clock: Clock = clock or SystemClock()
        self.max_reply_bytes = max_reply_bytes
        self._slots = asyncio.Semaphore(max_in_flight)
        self._paused_until = 0.0
        """A 429's wait holds every request of this client (every question of a bot worker), not
        only the one refused: the others would only be refused too."""
        self._paused_by: ValenError | None = None
        """The error whose wait `_paused_until` is, as it first read: a request that cannot wait
        that long fails as that error's kind, never as a spent budget."""
        self.longest_refused_wait_s: float | None = None
        """The longest wait a 429 asked for that was more than `retry.max_wait_s` (None: none
        yet): that request was not retried, and the others were held for `max_wait_s` only."""
        self._rng = rng or random.Random()
        self._endpoint = endpoint(base_url, route(dialect))
        key = api_key.get_secret_value() if api_key is not None else ""
        # Safe to print: credentials in the URL (user, password, query, the key) replaced.
        self.base_url = display_url(base_url.rstrip("/"), key=key)
        self.url = display_url(self._endpoint, key=key)
        self.has_key = bool(key)
        problem = key_problem(key) if key else None
        self.key_problem = f"the API key is malformed: {problem}" if problem else None
        self._redact = Redactor([key, *url_secrets(base_url)] if key else url_secrets(base_url))
        # Built once, as httpx's own types: parsing the URL and headers again for every request
        # cost ~40 us of the ~450 us of CPU a request takes (bench/concurrent_questions.py).
        headers = {"content-type": "application/json", "accept": "application/json",
                   "accept-encoding": "gzip, deflate"}  # fmt: skip
        if key and problem is None:
            headers["authorization"] = f"Bearer {key}"
        self._headers = httpx.Headers(headers)
        self._target: httpx.URL | str = self._endpoint
        try:
            self._target = httpx.URL(self._endpoint)
        except httpx.InvalidURL:
            pass  # Sent as it is, so that sending it fails as a `ValenError` like any other.

    def scrub(self, text: str) -> str:
        """`text` with the key and URL credentials replaced, for strings from anywhere."""
        return self._redact(text)

    def deadline(self) -> float:
        """The monotonic time by which a question starting now must be done with Valen."""
        return self.clock.monotonic() + self.budget_s

    async def post(self, text: str, questions: Sequence[Question]) -> Reply:
        """Send one request and return the reply, read within the size cap; raises a scrubbed
        `ValenError` for a transport failure, a malformed key or an oversize reply."""
        if self.key_problem is not None:
            raise MalformedKeyError(self.key_problem)
        body = request_body(self.dialect, text=text, questions=questions, model=self.model)
        content = json.dumps(body, ensure_ascii=False).encode()
        async with self._slots:
            answered: int | None = None  # The status, once the headers are in.
            try:
                request = self.http.build_request(
                    "POST", self._target, content=content, headers=self._headers
                )
                response = await self.http.send(request, stream=True)
                answered = response.status_code
                try:
                    return await read_reply(response, limit=self.max_reply_bytes)
                finally:
                    await response.aclose()
            except ValenError as error:  # Oversize or undecodable: it may quote the reply.
                raise self._scrubbed(error) from None
            except httpx.TimeoutException as error:
                if answered is not None:  # The headers came; the body stalled.
                    raise ValenTimeoutError(
                        f"the server at {self.url} answered {answered} but the rest of its reply "
                        f"did not come in time: {type(error).__name__}"
                    ) from None
                raise ValenTimeoutError(
                    f"no reply from {self.url}: {type(error).__name__}"
                ) from None
            except httpx.TransportError as error:
                if answered is None and (tls := _tls_failure(error)) is not None:
                    # Not "cannot reach ... is the server running?": it is, and the same
                    # handshake would fail the same way, so it is not retried either.
                    raise TLSError(f"the TLS handshake with {self.url} failed: {tls}") from None
                if (broke_off := _broke_off(error, answered=answered)) is not None:
                    raise ConnectionBrokenError(
                        f"the server at {self.url} {broke_off}: {type(error).__name__}"
                    ) from None
                raise ValenConnectionError(
                    f"cannot reach {self.url}: {type(error).__name__}"
                ) from None
            except (httpx.HTTPError, httpx.InvalidURL) as error:
                raise ValenError(f"cannot send to {self.url}: {type(error).__name__}") from None

    def read(self, reply: Reply, names: Sequence[str]) -> dict[str, Outcome]:
        """One outcome per name from a reply, or the error the reply stands for. Every error,
        raised or returned, is scrubbed of the key and URL credentials."""
        status = reply.status
        try:
            # Any success status: a 201 carrying a valid answer was refused as `valen-error`, the
            # name of an escalation reason, though the protocol asks only for the answer.
            if not 200 <= status < 300:
                raise error_for_status(
                    reply, redact=self._redact, now=self.clock.now(), url=self._endpoint
                )
            if status == 204:  # "No Content" by definition: said so, not "valen-error".
                raise InvalidResponseError(
                    "empty reply: 204 No Content, where an answer was expected", status=status
                )
            if not reply.content.strip():
                # Said as what it is: "reply is not JSON (malformed JSON at line 1 column 1): OK"
                # quoted the status line as if it were the reply.
                raise InvalidResponseError("the reply is empty: no body at all", status=status)
            try:
                body = loads(reply.content)
            except JSONError as problem:
                message = error_message(reply, redact=self._redact)
                raise InvalidResponseError(
                    f"reply is not JSON ({problem}): {message}", status=status
                ) from None
            if not isinstance(body, dict):  # `[]` was "reply has no 'answers'", as if it might.
                raise InvalidResponseError(
                    f"reply is not a JSON object: {quote(body, self._redact)}", status=status
                )
            if body.get("answers") is None and _error_envelope(body):
                # Said as the server's error, as for any other status: "reply has no 'answers'
                # (is this a Valen server, and is --dialect right?)" hid "quota exceeded".
                raise ErrorReplyError(
                    f"the server answered {status} with an error instead of an answer: "
                    f"{error_message(reply, redact=self._redact)}{_error_type(body, self._redact)}",
                    status=status,
                )
            outcomes = parse_answers(body, names, clean=self._redact)
        except ValenError as error:
            raise self._scrubbed(error) from None
        for outcome in outcomes.values():
            if isinstance(outcome, ValenError):
                self._scrubbed(outcome)
        return outcomes

    def _scrubbed(self, error: ValenError) -> ValenError:
        error.message = self._redact(error.message)
        return error

    @property
    def paused_for(self) -> float:
        """Seconds left of the wait a rate limit imposed on every request (0: none)."""
        return max(0.0, self._paused_until - self.clock.monotonic())

    async def attempt(self, text: str, questions: Sequence[Question]) -> dict[str, Outcome]:
        """One request, no retries."""
        reply = await self.post(text, questions)
        return self.read(reply, [q.name for q in questions])

    async def decide(
        self, text: str, questions: Sequence[Question], *, deadline: float | None = None
    ) -> dict[str, Outcome]:
        """Ask `questions` about `text`; one outcome per question name.

        Retries what the policy allows until `deadline` (monotonic, on this client's clock;
        default: this call's own budget). Raises the last `ValenError`, with `attempts` set and
        its message scrubbed, when it gives up.
        """
        deadline = self.deadline() if deadline is None else deadline
        attempts = 0
        last: ValenError | None = None
        # A new request waits out a rate limit another one met (a retry waits its own).
        if (pause := self.paused_for) > 0:
            if self.clock.monotonic() + pause >= deadline:
                raise self._paused_past_deadline(pause, deadline)
            await self.clock.sleep(pause)
        while True:
            remaining = deadline - self.clock.monotonic()
            if remaining <= 0:
                raise self._out_of_budget(attempts, last)
            attempts += 1
            try:
                async with self.clock.timeout(remaining):
                    return await self.attempt(text, questions)
            except TimeoutError:
                raise self._out_of_budget(attempts, last) from None
            except ValenError as error:
                self._scrubbed(error)
                error.attempts = attempts
                last = error
                if isinstance(error, RateLimitedError) and error.wait_s:
                    # Held no longer than the policy waits: a one-off `Retry-After: 3600` kept
                    # every later question of a bot from Valen for the hour, unsent.
                    until = self.clock.monotonic() + min(error.wait_s, self.retry.max_wait_s)
                    if until > self._paused_until:
                        self._paused_until = until
                        self._paused_by = _copy(error)
                    if error.wait_s > max(self.retry.max_wait_s, self.longest_refused_wait_s or 0):
                        self.longest_refused_wait_s = error.wait_s
                if attempts >= self.retry.max_attempts or not self.retry.should_retry(error):
                    raise
                wait, least = self._wait_s(error, attempts)
                left = deadline - self.clock.monotonic()
                if error.wait_s is not None and error.wait_s >= left:
                    # Valen's wait, not our budget, is what stops it: the kind stays the reply's.
                    error.message = (
                        f"{error.message}; Valen asked to wait {wait_words(error.wait_s)}, longer "
                        f"than the question's time budget allows ({_s(left)} s left)"
                    )
                    raise
                if wait >= left:
                    wait = least  # No jitter rather than a wait past the deadline.
                if wait >= left:
                    raise self._out_of_budget(attempts, error, next_wait_s=wait) from None
            await self.clock.sleep(wait)

    def _wait_s(self, error: ValenError, failures: int) -> tuple[float, float]:
        """How long to wait before the next attempt, and the least that wait may be cut to when
        it would pass the deadline: our own backoff, or the server's wait when it is longer.
        Raises `error` when the server asked for longer than the policy honours (waiting less
        would only be refused again).

        Our backoff is the floor: a server's `Retry-After: 0`, a date in the past or a negative
        `retry-after-ms` had every attempt sent at once, four in a tenth of a second."""
        own = self.retry.backoff_s(failures, self._rng)
        asked = error.wait_s
        if asked is None:
            return own, own
        if asked > self.retry.max_wait_s:
            error.message = (
                f"{error.message}; the server asked to wait {wait_words(asked)}, "
                f"more than the {_s(self.retry.max_wait_s)} s we wait"
            )
            raise error
        # A little jitter on top, so clients told the same instant do not all come back at once.
        jitter = self._rng.uniform(0, min(asked, self.retry.base_delay_s) / 4)
        return max(own, asked + jitter), max(own, asked)

    def _paused_past_deadline(self, pause: float, deadline: float) -> ValenError:
        """The error for a request not sent because the wait another request was asked for
        outlasts this one's deadline: of that request's kind and status, saying so."""
        cause = self._paused_by or RateLimitedError("", status=429)
        asked = wait_words(cause.wait_s) if cause.wait_s is not None else "a while"
        if cause.wait_s is not None and cause.wait_s > self.retry.max_wait_s:
            asked += f", of which requests wait {_s(self.retry.max_wait_s)} s at most"
        left = _s(max(deadline - self.clock.monotonic(), 0.0))
        said = f"; it said: {cause.message}" if cause.message else ""
        error = _copy(cause)
        error.message = (
            f"not sent: Valen asked to wait {asked} ({_s(pause)} s of it still to go), longer "
            f"than the question's time budget allows ({left} s left){said}"
        )
        error.attempts = 0
        return error

    def _out_of_budget(
        self, attempts: int, last: ValenError | None, *, next_wait_s: float | None = None
    ) -> BudgetExhaustedError:
        why = f"; last: {last.describe(attempts=False)}" if last is not None else ""
        if next_wait_s is not None:
            why = f"; next try due in {next_wait_s:.1f} s{why}"
        error = BudgetExhaustedError(f"the question's time budget for Valen ran out{why}")
        error.attempts = attempts
        return error


def _copy(error: ValenError) -> ValenError:
    """A new error of `error`'s class, status, message and wait, not yet raised."""
    copy = type(error)(error.message, status=error.status)
    copy.wait_s = error.wait_s
    return copy
