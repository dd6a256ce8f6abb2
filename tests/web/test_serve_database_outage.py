"""`helpdesk serve` on PostgreSQL while its database is out (the server refusing it and ending its
connections, as an outage or a restart does), and right after it is back:

- a sign-in (right or wrong password), and /agent with a valid cookie, answered aiohttp's bare
  "500 Internal Server Error" with a traceback in the log; they now say, in the help desk's
  style and the browser's language, that it cannot reach its database (503, one warning line,
  the password never sent again on reload);
- right after the outage, the first sign-in on each server still failed on the connection the
  database had ended; it now reconnects and succeeds;
- `/healthz` said `{"ok": true}` throughout: a load balancer kept sending people there."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from chatbot.accounts.service import AccountService
from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.errors import HelpdeskError
from chatbot.store.postgres_users import PostgresUserStore
from chatbot.web.cookies import CookieSigner
from tests.web.harness import FAST_HASHER, Served, run_async, wait_for
from tests.web.outage_helpers import PASSWORD, Database, own_database, serve

OUT = "The help desk cannot reach its database just now."
OUT_ZH = "客服中心暂时无法连接数据库。"


@pytest.fixture
def database() -> Iterator[Database]:
    yield from own_database()


@pytest.fixture
def served(tmp_path: Path, database: Database) -> Iterator[Served]:
    server = serve(tmp_path / "site", database)
    yield server
    server.stop()


def client(served: Served, language: str = "en") -> httpx.Client:
    headers = {"Origin": served.url, "Accept-Language": language}
    return httpx.Client(base_url=served.url, headers=headers, timeout=30)


def sign_in(browser: httpx.Client, password: str) -> httpx.Response:
    return browser.post("/signin", data={"name": "ana", "password": password, "next": "/agent"})


def log(served: Served) -> str:
    return "".join(served.output)


def test_signing_in_while_the_database_is_out_says_so_and_never_resends_the_password(
    served: Served, database: Database
) -> None:
    browser = client(served)
    assert sign_in(browser, PASSWORD).headers["location"] == "/agent"  # A valid cookie, kept.
    database.down()
    for password in (PASSWORD, "not the password"):
        answer = sign_in(browser, password)
        # Post/Redirect/Get, as a failed sign-in: reloading the page that says why sends nothing.
        assert answer.status_code == 303, answer.text
        assert "error=unavailable" in answer.headers["location"]
        page = browser.get(answer.headers["location"])
        assert page.status_code == 503, page.text
        assert f"{OUT} Try again in a moment." in page.text
        assert 'name="password"' in page.text and 'value="ana"' in page.text  # The form again.
        assert password not in page.text
    console = browser.get("/agent")  # The cookie is valid; the database cannot say so.
    assert console.status_code == 503, console.text
    assert f"{OUT} This page tries again by itself in a minute." in console.text
    assert console.headers["retry-after"] == "60"
    assert 'http-equiv="refresh" content="60; url=/agent"' in console.text
    chinese = client(served, "zh-CN,zh;q=0.9")
    chinese.cookies = browser.cookies
    assert OUT_ZH in chinese.get("/agent").text
    assert OUT_ZH in chinese.get("/signin?next=%2Fagent&error=unavailable").text
    said = log(served)
    assert "Traceback" not in said and "Error handling request" not in said, said
    assert "Server got itself in trouble" not in said
    # One warning line per request that met the outage, naming what could not be done.
    warnings = [line for line in said.splitlines() if "POST /signin from" in line]
    assert len(warnings) == 2 and all("database unavailable" in w for w in warnings), said

    database.up()
    # The page that said so, reloaded once the database is back, is the plain form (within the
    # second the server keeps its last look at the database).
    back = client(served)
    wait_for(lambda: back.get("/signin?next=%2Fagent&error=unavailable").status_code == 200,
             what="the plain sign-in form", timeout=10)  # fmt: skip
    assert OUT not in back.get("/signin?next=%2Fagent&error=unavailable").text
    assert browser.get("/agent").status_code == 200


def test_the_first_request_after_an_outage_reconnects(served: Served, database: Database) -> None:
    browser = client(served)
    assert sign_in(browser, PASSWORD).headers["location"] == "/agent"
    database.bounce()  # The accounts' connection, open before, is dead now.
    first = sign_in(browser, PASSWORD)
    assert first.status_code == 303 and first.headers["location"] == "/agent", first.text
    database.bounce()
    wrong = sign_in(browser, "not the password")
    assert wrong.status_code == 303 and "error=wrong" in wrong.headers["location"], wrong.text
    database.bounce()
    console = browser.get("/agent")
    assert console.status_code == 200 and "/ws/agent" in console.text, console.text
    said = log(served)
    assert "Traceback" not in said and "terminating connection" not in said, said


def test_healthz_says_when_the_database_cannot_be_reached(
    served: Served, database: Database
) -> None:
    health = httpx.get(served.url + "/healthz", timeout=10)
    assert health.status_code == 200
    assert health.json() == {"ok": True, "closing": False, "sessions": 0, "refused": {}}
    database.down()
    # The server keeps its last look at the database for a second (pages waiting on it ask
    # every few seconds): the outage shows within that.
    wait_for(lambda: httpx.get(served.url + "/healthz", timeout=10).status_code == 503,
             what="/healthz to answer 503", timeout=10)  # fmt: skip
    for _ in range(3):
        started = time.monotonic()
        health = httpx.get(served.url + "/healthz", timeout=10)
        assert time.monotonic() - started < 5
        assert health.status_code == 503, health.text
        body = health.json()
        assert body == {
            "ok": False,
            "closing": False,
            "sessions": 0,
            "refused": {},
            "reason": "database unreachable",
        }
    said = log(served)
    assert said.count("database check: ") == 1 and "Traceback" not in said, said
    assert served.url.split("//")[1] not in body["reason"]  # Details stay in the log.

    database.up()
    wait_for(
        lambda: httpx.get(served.url + "/healthz", timeout=10).status_code == 200,
        what="/healthz to answer 200 again",
        timeout=10,
    )
    wait_for(lambda: "database check: back" in log(served), what="the log to say so", timeout=5)


def test_the_database_check_never_waits_longer_than_its_deadline() -> None:
    """A database that does not answer at all (no refusal either): `/healthz` answers within
    its deadline, and asks no second time while the first question still waits."""
    from chatbot.web.server import DatabaseCheck  # Here: the old code had none.

    async def run() -> None:
        answering = asyncio.Event()
        asked: list[float] = []

        async def probe() -> None:
            asked.append(time.monotonic())
            await answering.wait()

        now = [0.0]  # The check's clock, moved by the test: its answers are kept a second.
        check = DatabaseCheck(probe, timeout_s=0.2, clock=lambda: now[0])
        started = time.monotonic()
        assert await check.trouble() == "no answer in 0.2 s"
        assert time.monotonic() - started < 1.0
        now[0] += 1.1  # The answer kept has gone stale: asked again, not anew.
        assert await check.trouble() == "no answer in 0.2 s"
        assert len(asked) == 1
        answering.set()  # It answers at last, and the probe still waiting ends.
        for _ in range(5):
            await asyncio.sleep(0)
        now[0] += 1.1
        assert await check.trouble() is None  # Asked anew, now the first has ended.
        assert len(asked) == 2

        async def refused() -> None:
            raise HelpdeskError("db: database unavailable")

        assert await DatabaseCheck(refused).trouble() == "db: database unavailable"

    run_async(run())


def test_the_accounts_reconnect_after_the_database_ended_their_connection(
    database: Database,
) -> None:
    service = AccountService(PostgresUserStore.open(database.url), hasher=FAST_HASHER)
    try:
        assert service.sign_in("ana", PASSWORD, address="127.0.0.1").account is not None
        database.bounce()
        assert service.sign_in("ana", PASSWORD, address="127.0.0.1").account is not None
        database.bounce()
        account = service.account("ana")
        assert account is not None and account.name == "ana"
        database.bounce()
        assert service.sign_in("ana", "not the password", address="127.0.0.1").account is None
        database.bounce()
        assert service.session_secret()
        database.down()
        with pytest.raises(HelpdeskError, match="database unavailable"):
            service.sign_in("ana", PASSWORD, address="127.0.0.1")
    finally:
        database.up()
        service.close()


def test_every_other_request_the_outage_reaches_says_so_not_a_bare_500(
    served: Served, database: Database
) -> None:
    """A returning customer's page, a console's websocket opening and the sign-out page each
    answered aiohttp's bare 500, with a traceback in the log."""
    # A customer coming back to their conversation: the cookie names it, signed with the
    # database's own key (as serve signs it).
    desk = open_service(load_settings(store={"db": database.url}))
    try:
        conversation = desk.start_conversation().id
    finally:
        desk.close()
    accounts = AccountService(PostgresUserStore.open(database.url), hasher=FAST_HASHER)
    try:
        signer = CookieSigner(accounts.session_secret(), customer_max_age_s=3600,
                              account_max_age_s=3600)  # fmt: skip
    finally:
        accounts.close()
    customer = client(served)
    customer.cookies.set("helpdesk-chat", signer.customer(conversation))
    assert customer.get("/").status_code == 200
    agent = client(served)
    assert sign_in(agent, PASSWORD).headers["location"] == "/agent"
    database.down()
    page = customer.get("/")
    assert page.status_code == 503, page.text
    assert f"{OUT} This page tries again by itself in a minute." in page.text
    assert 'http-equiv="refresh" content="60; url=/"' in page.text
    handshake = agent.get(
        "/ws/agent",
        headers={
            "Connection": "Upgrade",
            "Upgrade": "websocket",
            "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        },  # fmt: skip
    )
    assert handshake.status_code == 503, handshake.text
    signout = agent.get("/signout")
    assert signout.status_code in (200, 503), signout.text
    said = log(served)
    assert "Traceback" not in said and "Error handling request" not in said, said
    assert "Server got itself in trouble" not in said
    database.up()
