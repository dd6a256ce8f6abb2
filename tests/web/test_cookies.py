"""Signed cookies: what they name, and everything that makes them worthless."""

from __future__ import annotations

import base64
import json

from chatbot.web.cookies import CookieSigner


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def signer(clock: Clock, secret: bytes = b"k" * 32) -> CookieSigner:
    return CookieSigner(secret, customer_max_age_s=3600, account_max_age_s=600, clock=clock)


def test_a_customer_cookie_names_its_conversation_until_it_expires() -> None:
    clock = Clock()
    cookies = signer(clock)
    value = cookies.customer(42)
    assert cookies.read_customer(value) == 42
    clock.now += 3600
    assert cookies.read_customer(value) == 42
    clock.now += 1.5
    assert cookies.read_customer(value) is None


def test_an_account_cookie_names_its_account_and_epoch_until_it_expires() -> None:
    clock = Clock()
    cookies = signer(clock)
    value = cookies.account("ana", 3, "first")
    claim = cookies.read_account(value)
    assert claim is not None
    assert (claim.name, claim.epoch, claim.incarnation) == ("ana", 3, "first")
    clock.now += 601
    assert cookies.read_account(value) is None


def test_altered_foreign_or_swapped_cookies_are_worthless() -> None:
    clock = Clock()
    cookies = signer(clock)
    value = cookies.customer(42)
    payload, stamp, signature = value.split(".")
    other = base64.urlsafe_b64encode(json.dumps({"c": 7}).encode()).rstrip(b"=").decode()
    assert cookies.read_customer(f"{other}.{stamp}.{signature}") is None
    assert cookies.read_customer(value[:-1] + ("A" if value[-1] != "A" else "B")) is None
    assert signer(clock, secret=b"x" * 32).read_customer(value) is None  # Another server's key.
    # One kind never stands in for the other (each has its own salt).
    assert cookies.read_account(value) is None
    assert cookies.read_customer(cookies.account("ana", 0, "first")) is None
    for junk in (None, "", "...", "a" * 600, "not.a.cookie"):
        assert cookies.read_customer(junk) is None and cookies.read_account(junk) is None


def test_a_cookie_holding_something_else_is_refused() -> None:
    from itsdangerous import URLSafeTimedSerializer

    from chatbot.web.cookies import CUSTOMER_SALT

    raw = URLSafeTimedSerializer(b"k" * 32, salt=CUSTOMER_SALT)
    cookies = CookieSigner(b"k" * 32, customer_max_age_s=3600, account_max_age_s=600)
    for data in ({"c": "42"}, {"c": True}, {"c": -1}, {"c": 0}, [42], {"x": 1}):
        assert cookies.read_customer(raw.dumps(data)) is None, data
    assert cookies.read_customer(raw.dumps({"c": 42})) == 42
