"""Every way a Valen judgment can fail, as one hierarchy.

Each error carries a short `kind` that is stored with the passage it affected, so an agent can see
why the bot did not judge it. Messages never contain the API key or credentials from the URL: the
client scrubs every string that came from Valen before an error leaves it, and names the URL only
as `redact.display_url` shows it.
"""

from __future__ import annotations


class ValenError(Exception):
    """A judgment that could not be made."""

    kind = "valen-error"
    retryable = False

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        # How many requests were sent for this judgment; the client sets it when it gives up.
        self.attempts = 1
        # How long the server asked us to wait before trying again (429/503), if it said.
        self.wait_s: float | None = None

    @property
    def message(self) -> str:
        """The one-line explanation. Kept as the exception's only argument, so `str()`, `repr()`
        and a traceback all show the message as scrubbed, never as first written."""
        return str(self.args[0]) if self.args else ""

    @message.setter
    def message(self, value: str) -> None:
        self.args = (value,)

    def describe(self, *, attempts: bool = True) -> str:
        """One line for people: the kind, the HTTP status when there was one, the message, and
        how many attempts were made when there was more than one."""
        status = f" (HTTP {self.status})" if self.status is not None else ""
        tries = f" (after {self.attempts} attempts)" if attempts and self.attempts > 1 else ""
        return f"{self.kind}{status}: {self.message}{tries}"


class BadRequestError(ValenError):
    """400/422: the server refused the request as malformed; the same request will fail again."""

    kind = "bad-request"


class AuthenticationError(ValenError):
    """401/403: the API key is missing, wrong or not allowed."""

    kind = "auth"


class MalformedKeyError(ValenError):
    """The configured API key cannot be sent at all (a line break, a non-ASCII letter): no request
    is made, and none is retried."""

    kind = "malformed-key"


class NotFoundError(ValenError):
    """404: wrong base URL or route (often a dialect mismatch)."""

    kind = "not-found"


class TooLargeError(ValenError):
    """413: the question and passage are too long for the server."""

    kind = "too-large"


class RateLimitedError(ValenError):
    """429: too many requests; `wait_s` is how long the server asked us to wait, if it said."""

    kind = "rate-limited"
    retryable = True


class ServerError(ValenError):
    """5xx: the server failed or is busy."""

    kind = "server-error"
    retryable = True


class GatewayTimeoutError(ServerError):
    """504: a gateway gave up waiting; the same input would most likely time out again."""

    kind = "gateway-timeout"
    retryable = False


class ValenConnectionError(ValenError):
    """The server could not be reached at all."""

    kind = "connection"
    retryable = True


class ConnectionBrokenError(ValenConnectionError):
    """The server was reached, but the exchange broke off: it closed or reset the connection
    before its reply was complete, or sent something that is not HTTP. Retried like any
    connection failure; told apart so that nobody is asked whether the server is running."""


class TLSError(ValenError):
    """The TLS handshake failed: the server's certificate is not trusted (self-signed, a private
    CA's, for another name, expired) or the server at that address does not speak TLS at all.
    Not retried: the same handshake fails the same way, and "cannot reach ... (is the server
    running?)" sent people looking for a server that was there all along."""

    kind = "tls"


class RedirectError(ValenError):
    """3xx: the server sent the request elsewhere; redirects are not followed (a POST with the
    key must not go wherever a reply says), so the base URL is what needs changing."""

    kind = "redirect"


class UnexpectedStatusError(ValenError):
    """A status the protocol gives no meaning to (418, 409, 1xx): not an answer, and not one of
    the errors above. Filed under a kind of its own: the base's `valen-error` is the escalation
    reason's name too, so a bot's log read `escalated: valen-error (valen-error ×3)`. Not
    retried, as the protocol retries only the statuses it names."""

    kind = "unexpected-status"


class ValenTimeoutError(ValenError):
    """No answer within the read timeout or the question's time budget."""

    kind = "timeout"
    retryable = True


class BudgetExhaustedError(ValenError):
    """The question's overall time budget ran out before this passage was judged.

    Not retryable by definition: the budget is what bounds the retries.
    """

    kind = "budget"


class InvalidResponseError(ValenError):
    """A reply that is not a valid Valen answer (HTML, non-JSON, bad names or probabilities)."""

    kind = "invalid-response"


class ErrorReplyError(InvalidResponseError):
    """A success status whose body is an error envelope (`{"error": {"message": ...}}`,
    `{"detail": ...}`) instead of an answer: the server's own words say what is wrong (a quota,
    say), so its kind is not `invalid-response`, whose hint asks whether this is a Valen server
    and whether the dialect is right."""

    kind = "error-reply"


class ReplyTooLargeError(InvalidResponseError):
    """A reply over the size cap, left unread past it: the server answered, and kept sending."""


class RefusedError(ValenError):
    """Valen declined to answer the predicate: no judgment, never a probability."""

    kind = "refused"


class ReplayMissError(ValenError):
    """Replay mode has no recorded answer for this question and passage."""

    kind = "replay-miss"
