"""A request `helpdesk serve` cannot read is a plain 400 and at most one line in its log.

aiohttp answered a line or header over its 8,190 bytes, or malformed HTTP, with the parser's
words, which quote the start of the offending line (a session cookie, say), and logged them with
a traceback; a sign-in form it could not read was a 500 and a traceback. Sent here over raw
sockets to a real `helpdesk serve` on 127.0.0.1.
"""

from __future__ import annotations

import socket

import httpx
import pytest

from chatbot.web.server import ACCOUNT_COOKIE, CUSTOMER_COOKIE
from tests.web.harness import Served
from tests.web.log_helpers import HANDSHAKE, logged_since
from tests.web.server_helpers import sign_in


def exchange(served: Served, request: bytes) -> tuple[int, bytes, bytes]:
    """Sends `request` as it is; returns the answer's status, headers and body."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), head, body


def assert_quiet(said: list[str], *secrets: bytes) -> None:
    """At most one line, no traceback, and none of the request's words."""
    text = "".join(said)
    assert len(said) <= 1 and "Traceback" not in text, text
    for secret in secrets:
        assert secret.decode() not in text, text


def assert_plain(status: int, head: bytes, body: bytes, *secrets: bytes) -> None:
    """A 400 (or 431) that says nothing of the request."""
    assert status in (400, 431), head + body
    assert len(body) < 64, body
    for secret in secrets:
        assert secret not in head + body, head + body


def test_an_oversized_cookie_header_is_a_plain_400_naming_no_cookie(served: Served) -> None:
    cookie = sign_in(served, "ana").cookies[ACCOUNT_COOKIE].encode()
    signature = cookie.rsplit(b".", 1)[1]
    start = len(served.output)
    status, head, body = exchange(
        served,
        b"GET /agent HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: "
        + ACCOUNT_COOKIE.encode() + b"=" + cookie + b"; pad=" + b"p" * 9000
        + b"\r\nConnection: close\r\n\r\n",
    )  # fmt: skip
    assert_plain(status, head, body, signature, b"ppp")
    assert_quiet(logged_since(served, start), signature, b"ppp")


def test_an_oversized_address_is_a_plain_400(served: Served) -> None:
    path = b"/" + b"q" * 9000
    start = len(served.output)
    status, head, body = exchange(
        served, b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    assert_plain(status, head, body, b"qqq")
    assert_quiet(logged_since(served, start), b"qqq")


MALFORMED = [
    ("a header with no colon", b"GET / HTTP/1.1\r\nHost: x\r\nsecret header\r\n\r\n",
     b"secret header"),
    ("a Content-Length of 23 digits", b"POST /signin HTTP/1.1\r\nHost: x\r\n"
     b"Content-Length: 99999999999999999999999\r\n\r\n", b"99999999999999999999999"),
    ("a control character in a cookie", b"GET / HTTP/1.1\r\nHost: x\r\n"
     b"Cookie: helpdesk-session=secret\x01cookie\r\n\r\n", b"secret"),
    ("a control character in the address", b"GET /secret\x01path HTTP/1.1\r\nHost: x\r\n\r\n",
     b"secret"),
    ("a method that is no method", b"SECRETMETHOD / HTTP/1.1\r\nHost: x\r\n\r\n",
     b"SECRETMETHOD"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("what", "request_bytes", "quoted"), MALFORMED, ids=[case[0] for case in MALFORMED]
)
def test_malformed_http_is_a_plain_400(
    served: Served, what: str, request_bytes: bytes, quoted: bytes
) -> None:
    start = len(served.output)
    status, head, body = exchange(served, request_bytes)
    assert_plain(status, head, body, quoted)
    assert_quiet(logged_since(served, start), quoted)


MULTIPART = b"multipart/form-data; boundary=x"
FORM = b"application/x-www-form-urlencoded"
UNREADABLE_FORMS = [
    ("a multipart field with no name", MULTIPART, b"--x\r\n", b""),
    ("a multipart form without its boundary", b"multipart/form-data", b"--x\r\n", b""),
    ("a multipart form cut short", MULTIPART,
     b'--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nana', b""),
    ("a charset Python does not know", FORM + b"; charset=no-such-charset",
     b"name=ana&password=pw", b""),
    ("bytes that are not UTF-8", FORM, b"name=\xff\xfe&password=pw", b""),
    ("a gzip body that is not gzip", FORM, b"name=ana", b"Content-Encoding: gzip\r\n"),
    ("a part's header with no colon", MULTIPART, b"--x\r\nsecret line\r\n\r\nana\r\n--x--\r\n",
     b""),
    # aiohttp also warned of it, the header quoted, on serve's output.
    ("a part's Content-Disposition it cannot read", MULTIPART,
     b'--x\r\nContent-Disposition: form-data; name="password"; secret\r\n\r\npw\r\n--x--\r\n',
     b""),
]  # fmt: skip


@pytest.mark.parametrize(
    ("what", "content_type", "body", "extra"),
    UNREADABLE_FORMS,
    ids=[case[0] for case in UNREADABLE_FORMS],
)
def test_an_unreadable_sign_in_form_is_a_400(
    served: Served, what: str, content_type: bytes, body: bytes, extra: bytes
) -> None:
    start = len(served.output)
    status, head, answer = exchange(
        served,
        b"POST /signin HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: " + served.url.encode()
        + b"\r\nContent-Type: " + content_type + b"\r\nContent-Length: %d\r\n" % len(body)
        + extra + b"Connection: close\r\n\r\n" + body,
    )  # fmt: skip
    assert status == 400, head + answer
    assert b"set-cookie" not in head.lower()  # Nobody signed in, nor a name kept.
    assert_quiet(logged_since(served, start), b"secret")


def test_a_plain_get_of_a_websocket_address_starts_nothing(served: Served) -> None:
    # A customer's GET of /ws/chat without the handshake started an app process and a
    # conversation, then failed to answer, a traceback in the log.
    cookie = httpx.get(served.url + "/").cookies[CUSTOMER_COOKIE]
    start = len(served.output)
    sent = {"Origin": served.url, "Cookie": f"{CUSTOMER_COOKIE}={cookie}"}
    for headers in (sent, sent | {k: v for k, v in HANDSHAKE.items() if k != "Upgrade"}):
        response = httpx.get(served.url + "/ws/chat", headers=headers)
        assert response.status_code == 400, response.text
    said = logged_since(served, start)
    assert said == [], said  # No session started (nor ended), nothing failed.
