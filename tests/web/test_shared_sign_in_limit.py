"""Two `helpdesk serve` processes on one database enforce one per-account sign-in limit: six
wrong passwords for ana on one server were refused there, while the right password was accepted
at once on the other (with N servers behind a load balancer, 5×N tries a minute)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.web.conftest import PASSWORD, make_site
from tests.web.harness import Served, start_server


@pytest.fixture
def two_servers(tmp_path: Path) -> Iterator[tuple[Served, Served]]:
    home = tmp_path / "site"
    db, kb = make_site(home)
    started: list[Served] = []
    try:
        for _ in range(2):  # No bots: only sign-in is tried.
            started.append(start_server(home, db=db, kb=kb, extra=["--bots", "0"]))
        yield started[0], started[1]
    finally:
        for served in started:
            served.stop()


def sign_in(served: Served, password: str) -> httpx.Response:
    form = {"name": "ana", "password": password, "next": "/agent"}
    return httpx.post(served.url + "/signin", data=form, headers={"Origin": served.url})


def test_failures_on_one_server_lock_the_account_on_the_other(
    two_servers: tuple[Served, Served],
) -> None:
    first, second = two_servers
    for _ in range(5):
        assert "error=wrong" in sign_in(first, "not the password").headers["location"]
    refused = sign_in(second, PASSWORD)  # A fresh process: its address count is nil.
    assert refused.status_code == 303 and "error=locked" in refused.headers["location"]
    assert "helpdesk-session" not in refused.headers.get("set-cookie", "")
    page = httpx.get(second.url + refused.headers["location"], cookies=refused.cookies)
    assert page.status_code == 429 and 0 < int(page.headers["retry-after"]) <= 60
    assert "Too many failed sign-ins. Try again in " in page.text
