"""Signed cookies: one naming a customer's conversation, one naming a signed-in account.

A new customer's page gets a customer cookie that names no conversation yet ("new"): the chat's
websocket, if it comes back with it, shows that the browser keeps cookies, and only then is a
conversation started (its cookie set with the websocket's handshake). A page fetched and never
opened, a session refused as it starts, one whose app process fails to start (it is started
once that process says it has) and a browser refusing cookies start none.

itsdangerous (Pallets, pure Python, no other dependency) signs and timestamps a small JSON value
with HMAC; it is all these cookies need, since they hold nothing secret, only nothing forgeable.
aiohttp_session would add server-side storage or a cryptography dependency for no gain here.
Each kind of cookie has its own salt, so one can never stand in for the other.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from itsdangerous import BadSignature, TimestampSigner, URLSafeTimedSerializer

from chatbot.accounts.models import Account

CUSTOMER_SALT = "helpdesk.web.customer"
ACCOUNT_SALT = "helpdesk.web.account"
MAX_COOKIE_CHARS = 512
"""Ours are under 300 characters; longer is not ours and is not worth verifying."""
MAX_TYPED_NAME = 64
"""Characters of a name typed at sign-in kept for the page that says why it failed."""


def typed_name_cookie(name: str) -> str:
    """The name typed at a failed sign-in as a cookie's value: its first `MAX_TYPED_NAME`
    characters, percent-encoded UTF-8. A cookie's value is ASCII: raw UTF-8 (`张三`) in a
    `Set-Cookie` header is refused by HTTP clients (httpx) and by strict proxies. A character
    UTF-8 cannot hold (half of a surrogate pair) is kept as `?`."""
    return quote(name[:MAX_TYPED_NAME], safe="", errors="replace")


def typed_name(value: str | None) -> str:
    """The name a `typed_name_cookie` value holds (bytes that are not UTF-8 as U+FFFD)."""
    return unquote(value or "", errors="replace")[:MAX_TYPED_NAME]


@dataclass(frozen=True)
class AccountClaim:
    """Who a session cookie says signed in, the account's incarnation and session epoch at the
    time, when the sign-in ends (the cookie's age limit: an open console is closed then too), and
    the cookie's digest (`cookie_digest`), under which signing out revokes it."""

    name: str
    epoch: int
    incarnation: str
    until: float
    digest: str

    def holds_for(self, account: Account) -> bool:
        """Whether this cookie still signs in to `account`: signed for this very account, not an
        earlier one of the same name removed since (whose session epoch the new one starts over
        from), and no session of it ended since (a new password, role or display name)."""
        return (
            account.name == self.name
            and bool(account.incarnation)
            and hmac.compare_digest(account.incarnation, self.incarnation)
            and account.session_epoch == self.epoch
        )


def cookie_digest(data: dict[str, Any], signed_at: float) -> str:
    """What the database keeps of a signed-out cookie: a SHA-256 of what it signs (the claim and
    when it was signed), never the cookie itself. Not of the cookie's text: its signature's last
    base64 character has bits no decoder reads, so a copy with another character there is the
    same valid cookie, and would have gone round a revocation of the first."""
    signed = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(f"{signed}\n{signed_at!r}".encode()).hexdigest()


class CookieSigner:
    def __init__(
        self,
        secret: bytes,
        *,
        customer_max_age_s: float,
        account_max_age_s: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        class Signer(TimestampSigner):
            def get_timestamp(self) -> int:
                return int(clock())

        def serializer(salt: str) -> URLSafeTimedSerializer:
            return URLSafeTimedSerializer(secret, salt=salt, signer=Signer)

        self._customer = serializer(CUSTOMER_SALT)
        self._account = serializer(ACCOUNT_SALT)
        self.customer_max_age_s = customer_max_age_s
        self.account_max_age_s = account_max_age_s
        self.clock = clock

    def customer(self, conversation_id: int) -> str:
        return self._customer.dumps({"c": conversation_id})

    def new_customer(self) -> str:
        """A customer cookie for a browser whose conversation is not started yet."""
        return self._customer.dumps({"new": True})

    def read_new_customer(self, value: str | None) -> bool:
        """Whether `value` is a `new_customer` cookie of ours (signed, not too old)."""
        data = _load(self._customer, value, self.customer_max_age_s)
        return data is not None and data.get("new") is True

    def read_customer(self, value: str | None) -> int | None:
        """The conversation a customer cookie names, or None if it is missing, altered or old."""
        data = _load(self._customer, value, self.customer_max_age_s)
        conversation = None if data is None else data.get("c")
        if type(conversation) is not int or conversation <= 0:
            return None
        return conversation

    def account(self, name: str, epoch: int, incarnation: str) -> str:
        """A sign-in cookie for the account `name`, at its session epoch and incarnation now
        (`AccountClaim.holds_for`)."""
        # A nonce of its own: two browsers signing in to one account within a second got the
        # same cookie, and signing one out (revoking its digest) signed out the other too.
        nonce = secrets.token_urlsafe(9)
        return self._account.dumps({"a": name, "e": epoch, "i": incarnation, "n": nonce})

    def read_account(self, value: str | None) -> AccountClaim | None:
        """The claim of a sign-in cookie of ours, not too old; None for anything else, a cookie
        signed before accounts had incarnations too (its browser signs in again)."""
        loaded = _load_stamped(self._account, value, self.account_max_age_s)
        if loaded is None:
            return None
        data, signed_at = loaded
        name, epoch, incarnation = data.get("a"), data.get("e"), data.get("i")
        if not isinstance(name, str) or type(epoch) is not int or not isinstance(incarnation, str):
            return None
        until = signed_at + int(self.account_max_age_s)
        digest = cookie_digest(data, signed_at)
        return AccountClaim(
            name=name, epoch=epoch, incarnation=incarnation, until=until, digest=digest
        )


def _load(serializer: URLSafeTimedSerializer, value: str | None, max_age: float) -> Any:
    loaded = _load_stamped(serializer, value, max_age)
    return None if loaded is None else loaded[0]


def _load_stamped(
    serializer: URLSafeTimedSerializer, value: str | None, max_age: float
) -> tuple[dict[str, Any], float] | None:
    """The cookie's value and when it was signed, if it is ours, well formed and not too old."""
    if not value or len(value) > MAX_COOKIE_CHARS:
        return None
    try:
        data, signed = serializer.loads(value, max_age=int(max_age), return_timestamp=True)
    except (BadSignature, ValueError):  # BadSignature covers expired and malformed too.
        return None
    return (data, signed.timestamp()) if isinstance(data, dict) else None
