"""Signing out with two `helpdesk serve` processes on one database, as behind a load
balancer: an agent signed in on server S1 opened a second tab that landed on S2 (the same cookie),
and signed out there. S2's tab ended, but S1's console went on working as the agent (a reply was
sent from it 23 s later), and the signed-out cookie stayed good on S1 until it ran out (12 h),
a copy of it on both servers. Sign-out now ends that browser's consoles on every server within
`web.session_check_s`, and the cookie is refused everywhere; the same account signed in on
another computer is not signed out."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from chatbot.web.cookies import CookieSigner
from chatbot.web.server import ACCOUNT_COOKIE
from tests.web.conftest import PASSWORD, make_site
from tests.web.harness import Served, run_async, start_server, wait_for
from tests.web.server_helpers import close_reason, first_output

CHECK_S = 0.2
"""`web.session_check_s`: the other server's console ends within this of the sign-out."""


@pytest.fixture
def two_servers(tmp_path: Path) -> Iterator[tuple[Served, Served]]:
    home = tmp_path / "site"
    db, kb = make_site(home)
    started: list[Served] = []
    environment = {"HELPDESK_WEB__SESSION_CHECK_S": str(CHECK_S)}
    try:
        for _ in range(2):  # No bots: no customer comes.
            started.append(
                start_server(home, db=db, kb=kb, extra=["--bots", "0"], environment=environment)
            )
        yield started[0], started[1]
    finally:
        for served in started:
            served.stop()


def agent_sessions(served: Served) -> int:
    return sum(1 for session in served.sessions() if session.account == "ana")


async def sign_in(http: aiohttp.ClientSession, served: Served) -> str:
    """A browser signing in as ana on `served`: its sign-in cookie."""
    form = {"name": "ana", "password": PASSWORD, "next": "/agent"}
    async with http.post(
        served.url + "/signin", data=form, headers={"Origin": served.url}, allow_redirects=False
    ) as response:
        assert response.status == 303, await response.text()
        return response.cookies[ACCOUNT_COOKIE].value


def with_cookie(served: Served, cookie: str) -> dict[str, str]:
    return {"Origin": served.url, "Cookie": f"{ACCOUNT_COOKIE}={cookie}"}


async def console(
    http: aiohttp.ClientSession, served: Served, cookie: str
) -> aiohttp.ClientWebSocketResponse:
    """An agent console tab of the browser holding `cookie`, on `served`, once it has drawn."""
    ws = await http.ws_connect(
        served.url.replace("http", "ws", 1) + "/ws/agent?width=80&height=24",
        headers=with_cookie(served, cookie),
    )
    await first_output(ws)
    return ws


async def opens_the_console(http: aiohttp.ClientSession, served: Served, cookie: str) -> bool:
    """Whether `/agent` on `served` is the console for this cookie (not the sign-in form)."""
    async with http.get(served.url + "/agent", headers=with_cookie(served, cookie)) as page:
        text = await page.text()
    assert page.status == 200, text
    return 'id="password"' not in text


async def handshake(http: aiohttp.ClientSession, served: Served, cookie: str) -> int:
    """The status of an agent websocket's handshake with this cookie on `served`."""
    try:
        ws = await http.ws_connect(
            served.url.replace("http", "ws", 1) + "/ws/agent", headers=with_cookie(served, cookie)
        )
    except aiohttp.WSServerHandshakeError as error:
        return error.status
    await ws.close()
    return 101


async def still_open(ws: aiohttp.ClientWebSocketResponse) -> bool:
    """Whether the console answers a ping (its app's output read past on the way)."""
    await ws.send_json(["ping", "still there?"])
    while True:
        message = await ws.receive(timeout=30)
        if message.type != aiohttp.WSMsgType.TEXT:
            if message.type == aiohttp.WSMsgType.BINARY:
                continue
            return False  # Closed.
        if message.json() == ["pong", "still there?"]:
            return True


async def sign_out_on_one_server(first: Served, second: Served) -> dict[str, object]:
    seen: dict[str, object] = {}
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
        browser = await sign_in(http, first)
        laptop = await sign_in(http, first)  # The same account, on another computer.
        tab_one = await console(http, first, browser)  # S1 /agent
        tab_two = await console(http, second, browser)  # S2 /agent, by the shared cookie
        elsewhere = await console(http, first, laptop)
        try:
            async with http.post(
                second.url + "/signout", headers=with_cookie(second, browser), allow_redirects=False
            ) as response:
                seen["sign-out"] = response.status
                seen["cookie cleared"] = response.cookies[ACCOUNT_COOKIE].value == ""
            seen["S2 tab"] = await asyncio.wait_for(close_reason(tab_two), 30)
            seen["S1 tab"] = await asyncio.wait_for(close_reason(tab_one), 30)
            # Its session gone, the round that closed it has looked at the laptop's console too.
            wait_for(lambda: agent_sessions(first) == 1, what="S1's tab's session to end")
            seen["other computer's console open"] = await still_open(elsewhere)
            seen["signed-out cookie opens the console"] = [
                await opens_the_console(http, served, browser) for served in (first, second)
            ]
            seen["signed-out cookie's handshakes"] = [
                await handshake(http, served, browser) for served in (first, second)
            ]
            seen["other computer's cookie opens the console"] = [
                await opens_the_console(http, served, laptop) for served in (first, second)
            ]
        finally:
            for ws in (tab_one, tab_two, elsewhere):
                await ws.close()
    return seen


def test_signing_out_on_one_server_ends_the_browsers_consoles_on_the_other(
    two_servers: tuple[Served, Served],
) -> None:
    first, second = two_servers
    seen = run_async(sign_out_on_one_server(first, second))
    assert seen == {
        "sign-out": 303,
        "cookie cleared": True,
        "S2 tab": "signed out",
        "S1 tab": "signed out",  # Was still open, and working, for as long as it was used.
        "other computer's console open": True,
        "signed-out cookie opens the console": [False, False],  # A copy replayed: refused.
        "signed-out cookie's handshakes": [403, 403],
        "other computer's cookie opens the console": [True, True],
    }


def test_two_sign_ins_in_one_second_get_cookies_of_their_own() -> None:
    """Signing one browser out revokes its cookie's digest: another browser signed in to the same
    account in the same second had byte for byte the same cookie, and would be signed out too."""
    signer = CookieSigner(b"k" * 32, customer_max_age_s=60, account_max_age_s=60, clock=lambda: 1e9)
    first, second = signer.account("ana", 0, "first"), signer.account("ana", 0, "first")
    assert first != second
    claims = [signer.read_account(value) for value in (first, second)]
    assert [(claim.name, claim.epoch) for claim in claims if claim] == [("ana", 0), ("ana", 0)]
    assert len({claim.digest for claim in claims if claim}) == 2


def test_a_copy_of_a_cookie_with_its_signature_respelled_has_the_same_digest() -> None:
    """The signature's last base64 character has bits no decoder reads: a copy with another
    character there is the same valid cookie. Revoked by a digest of the cookie's text, that copy
    went on signing in."""
    signer = CookieSigner(b"k" * 32, customer_max_age_s=60, account_max_age_s=60, clock=lambda: 1e9)
    cookie = signer.account("ana", 0, "first")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(cookie[-1])
    respelled = [cookie[:-1] + alphabet[(last & ~3) | bits] for bits in range(4)]
    claims = [signer.read_account(value) for value in respelled]
    assert len(set(respelled)) == 4 and all(claims)  # Four spellings, each read as valid.
    assert {claim.digest for claim in claims if claim} == {claims[0].digest}  # type: ignore[union-attr]
