"""The name typed at a failed sign-in went into its cookie as typed.

After a failed sign-in as `张三` the response held `Set-Cookie: helpdesk-signin-name="张三"` in raw
UTF-8 (and U+FFFD's bytes for a name that was not UTF-8): a cookie's value is ASCII, and httpx
(as strict proxies may) refused the header. The value is now percent-encoded, and decoded where
the sign-in page reads it: the page still shows the name as typed, escaped."""

from __future__ import annotations

import html
from collections.abc import Iterator

import httpx
import pytest

from tests.web.conftest import make_site
from tests.web.harness import Served, start_server

TYPED_NAME_COOKIE = "helpdesk-signin-name"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("serve")
    db, kb = make_site(home)
    server = start_server(home, db=db, kb=kb, extra=["--bots", "0"])
    yield server
    server.stop()


def fail_to_sign_in(served: Served, body: bytes) -> tuple[list[bytes], str]:
    """Posts the sign-in form's raw body (a wrong password), as a browser keeping cookies would;
    returns the Set-Cookie headers of the answer, as sent, and the page it leads to."""
    with httpx.Client(base_url=served.url) as browser:
        response = browser.post(
            "/signin",
            content=body,
            headers={
                "Origin": served.url,
                "Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
            },
        )
        assert response.status_code == 303
        raw = [value for key, value in response.headers.raw if key.lower() == b"set-cookie"]
        page = browser.get(response.headers["location"])
    assert page.status_code == 401
    return raw, page.text


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ("name=%E5%BC%A0%E4%B8%89&password=wrong+password&next=%2Fagent", "张三"),
        ("name=%FF%FEbob&password=wrong+password&next=%2Fagent", "\ufffd\ufffdbob"),
        (
            "name=%22a%3Bb%2C+c%5C%3Cscript%3E%25&password=wrong+password&next=%2Fagent",
            '"a;b, c\\<script>%',
        ),
    ],
    ids=["chinese", "not-utf8", "quotes-and-markup"],
)
def test_the_typed_name_goes_in_its_cookie_encoded_and_comes_back_as_typed(
    served: Served, body: str, shown: str
) -> None:
    headers, page = fail_to_sign_in(served, body.encode())
    [cookie] = [value for value in headers if value.startswith(TYPED_NAME_COOKIE.encode())]
    assert cookie.isascii(), cookie
    value = cookie.split(b";")[0].split(b"=", 1)[1]
    assert value and b'"' not in value and b"\\" not in value, cookie  # No quoting needed.
    assert f'value="{html.escape(shown)}"' in page
    assert "<script>" not in page
    assert "Wrong name or password." in page


def test_a_long_name_is_kept_to_64_characters(served: Served) -> None:
    _, page = fail_to_sign_in(served, ("name=" + "%E5%BC%A0" * 100 + "&password=x").encode())
    assert 'value="' + "张" * 64 + '"' in page
