"""Locking out as a denial of service, against two `helpdesk serve` processes on one database.

From one address, five wrong passwords for ana locked ana out for everyone, on both servers, and
refused every other account from that address too: anyone could keep any agent out with five
requests a minute. Now those five lock ana from that address alone, on both servers (the count is
in the database); ana signs in from her own address, and another account from the guesser's
address signs in too. The servers sit behind a proxy (`--trust-proxy-headers`), which names each
client's address in `X-Forwarded-For`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.web.conftest import PASSWORD, make_site
from tests.web.harness import Served, start_server

GUESSER = "198.51.100.7"
ANA_AT_HOME = "203.0.113.5"


@pytest.fixture
def two_servers(tmp_path: Path) -> Iterator[tuple[Served, Served]]:
    home = tmp_path / "site"
    db, kb = make_site(home)
    started: list[Served] = []
    try:
        for _ in range(2):  # No bots: only sign-in is tried.
            extra = ["--bots", "0", "--trust-proxy-headers"]
            started.append(start_server(home, db=db, kb=kb, extra=extra))
        yield started[0], started[1]
    finally:
        for served in started:
            served.stop()


def sign_in(
    served: Served, name: str, password: str, *, address: str, area: str = "agent"
) -> httpx.Response:
    form = {"name": name, "password": password, "next": f"/{area}"}
    headers = {"Origin": served.url, "X-Forwarded-For": address}
    return httpx.post(served.url + "/signin", data=form, headers=headers)


def test_a_guesser_locks_ana_out_of_their_own_address_only(
    two_servers: tuple[Served, Served],
) -> None:
    first, second = two_servers
    for _ in range(5):
        wrong = sign_in(first, "ana", "not the password", address=GUESSER)
        assert "error=wrong" in wrong.headers["location"]
    # The guesser is refused on both servers, the right password unchecked.
    for served in (first, second):
        refused = sign_in(served, "ana", PASSWORD, address=GUESSER)
        assert "error=locked" in refused.headers["location"]
        page = httpx.get(
            served.url + refused.headers["location"],
            cookies=refused.cookies,
            headers={"X-Forwarded-For": GUESSER},
        )
        assert page.status_code == 429 and 0 < int(page.headers["retry-after"]) <= 60
    # Ana, at home, signs in on either server.
    for served in (first, second):
        signed_in = sign_in(served, "ana", PASSWORD, address=ANA_AT_HOME)
        assert signed_in.headers["location"] == "/agent", signed_in.headers["location"]
        assert "helpdesk-session" in signed_in.cookies
    # Another account, from the guesser's own address, signs in too.
    eddie = sign_in(first, "eddie", PASSWORD, address=GUESSER, area="editor")
    assert eddie.headers["location"] == "/editor"
