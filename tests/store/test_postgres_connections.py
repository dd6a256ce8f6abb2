"""How many PostgreSQL connections each help-desk process holds, and what a full server does.

A tester counted 3-4 connections per process (pg_stat_activity's client ports mapped to pids):
a server's 100 were gone at ~25 browser customers, after which everything failed obscurely.

1. The count per process kind, as README ("Many machines") gives it, measured on a database of
   the test's own: `helpdesk bot` 4, `helpdesk chat` and `agent` 4, `helpdesk serve` 2 for
   itself and 3 per browser session. A customer who repeats a question no longer leaves one more
   held: the check that the earlier answer's passage is unchanged closes its knowledge-base
   connection after reading it (it was kept for the life of the process).
2. A database with no connection to spare (a `CONNECTION LIMIT`, on a private cluster: the
   shared server's superuser is not subject to one). Each process says so in one line naming
   the cause: `helpdesk chat` crashed with a traceback when its change feed was the connection
   refused; a browser customer's session started (and left an empty conversation), then
   crashed, its page saying only that the session ended. It is now refused before it starts,
   its page sent to the "serving as many people as it can" words, which try again by themselves.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest
from aiohttp import ClientSession, WSMsgType
from psycopg import sql

from chatbot.accounts.models import Role
from chatbot.accounts.service import AccountService
from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.dburl import display
from chatbot.engine.models import Answer, Candidate, Decision
from chatbot.knowledge_base.postgres import PostgresPassageStore
from chatbot.store.postgres_users import PostgresUserStore
from chatbot.web.spawn import dies_with_this_process
from tests import postgres_env
from tests.conftest import ROOT, SHIPPED_KB
from tests.pg_cluster import PrivateCluster
from tests.tui.terminal_helpers import after_the_app, run_in_terminal
from tests.web.harness import FAST_HASHER, START_TIMEOUT_S, run_async, server_environment, wait_for

PASSWORD = "correct horse battery"
LISTEN_DESK = "LISTEN helpdesk"
LISTEN_KB = 'LISTEN "helpdesk_kb"'
BUSY = "The help desk is serving as many people as it can."


def with_database(url: str, name: str, *, user: str | None = None) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc if user is None else f"{user}@{parts.netloc.rpartition('@')[2]}"
    return urlunsplit((parts.scheme, netloc, f"/{name}", parts.query, ""))


def database_of(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def backends(admin: str, url: str) -> list[str]:
    """The last statement of each client connected to `url`'s database (a listener's is its
    LISTEN), seen from `admin`'s, which is another database's."""
    with psycopg.connect(admin, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT query FROM pg_stat_activity WHERE datname = %s"
            " AND backend_type = 'client backend'",
            (database_of(url),),
        ).fetchall()
    return [str(query) for (query,) in rows]


def seed(url: str) -> None:
    """The shipped knowledge base in the database, and an agent's account."""
    passages = [stored.passage for stored in _shipped()]
    with PostgresPassageStore.open(url, create=True) as kb:
        kb.import_passages(passages)
    accounts = AccountService(PostgresUserStore.open(url), hasher=FAST_HASHER)
    try:
        accounts.add("ana", role=Role.AGENT, password=PASSWORD)
    finally:
        accounts.close()


def _shipped() -> list[Any]:
    from chatbot.knowledge_base.store import PassageStore

    return PassageStore(SHIPPED_KB).read_all()


@pytest.fixture
def own_database() -> Iterator[str]:
    """A database of the test's own on the shared server, seeded, dropped afterwards."""
    admin = postgres_env.ADMIN_URL
    try:
        conn = psycopg.connect(admin, autocommit=True, connect_timeout=3)
    except psycopg.Error as error:
        message = f"PostgreSQL unreachable at {display(admin)}: {error}".splitlines()[0]
        if postgres_env.REQUIRED:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    name = f"qa_conn_{secrets.token_hex(6)}"
    with conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            url = with_database(admin, name)
            seed(url)
            yield url
        finally:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@dataclass
class Running:
    """A `helpdesk` process and what it has written so far."""

    process: subprocess.Popen[bytes]
    output: list[str] = field(default_factory=list)

    def said(self, text: str) -> bool:
        return any(text in line for line in list(self.output))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start(home: Path, *argv: str, terminal: bool = False) -> Running:
    """`python -m chatbot ARGV` with an environment of its own; in a terminal (a pty) for the
    apps. Its output is read as it comes, so it never blocks on a full pipe."""
    home.mkdir(parents=True, exist_ok=True)
    environment = server_environment(home) | {"TERM": "xterm-256color"}
    if terminal:
        import pty

        reader, writer = pty.openpty()
        streams: dict[str, Any] = {"stdin": writer, "stdout": writer, "stderr": writer}
    else:
        reader, writer = os.pipe()
        streams = {"stdin": subprocess.DEVNULL, "stdout": writer, "stderr": writer}
    process = subprocess.Popen(
        [sys.executable, "-m", "chatbot", *argv],
        cwd=ROOT, env=environment, start_new_session=True, preexec_fn=dies_with_this_process(),
        **streams,
    )  # fmt: skip
    os.close(writer)
    running = Running(process)

    def read() -> None:
        with open(reader, "rb", buffering=0) as stream:
            while True:
                try:
                    chunk = stream.read(65536)
                except OSError:  # EIO: the terminal's other end closed.
                    return
                if not chunk:
                    return
                running.output.append(chunk.decode("utf-8", "replace"))

    threading.Thread(target=read, daemon=True).start()
    return running


def start_serve(home: Path, url: str) -> tuple[Running, str]:
    """`helpdesk serve` with no bot workers of its own, on any free port; and its address."""
    serve = start(home, "serve", "--port", "0", "--bots", "0", "--db", url, "--kb", url)
    try:
        wait_for(lambda: serve.said("listening on"), timeout=START_TIMEOUT_S, what="serve")
    except AssertionError:
        serve.stop()
        raise
    line = next(line for line in "".join(serve.output).splitlines() if "listening on" in line)
    return serve, line.split("listening on ", 1)[1].strip()


# -- 1. connections per process kind ---------------------------------------------------------------


def test_a_bot_worker_holds_four(own_database: str, tmp_path: Path) -> None:
    """The desk (writes and reads), its change feed (LISTEN helpdesk), the knowledge base, and
    the knowledge base's own listener (LISTEN helpdesk_kb)."""
    admin, url = postgres_env.ADMIN_URL, own_database
    bot = start(tmp_path / "home", "bot", "--db", url, "--kb", url)
    try:
        wait_for(
            lambda: {LISTEN_DESK, LISTEN_KB} <= set(backends(admin, url)),
            timeout=START_TIMEOUT_S, what="the bot's listeners",
        )  # fmt: skip
        assert bot.said("answering questions from")
        queries = backends(admin, url)
        assert len(queries) == 4, queries
        assert queries.count(LISTEN_DESK) == queries.count(LISTEN_KB) == 1
    finally:
        bot.stop()


@pytest.mark.parametrize("mode", ["chat", "agent"])
def test_a_terminal_app_holds_four(own_database: str, tmp_path: Path, mode: str) -> None:
    """`helpdesk chat` and `helpdesk agent` (each with its own bot worker): as a bot worker."""
    admin, url = postgres_env.ADMIN_URL, own_database
    app = start(tmp_path / "home", mode, "--db", url, "--kb", url, terminal=True)
    try:
        wait_for(
            lambda: {LISTEN_DESK, LISTEN_KB} <= set(backends(admin, url)),
            timeout=START_TIMEOUT_S, what="the app's listeners",
        )  # fmt: skip
        assert len(backends(admin, url)) == 4
        assert app.process.poll() is None
    finally:
        app.stop()


def session_url(base: str, area: str) -> str:
    return base.replace("http://", "ws://") + f"/ws/{area}?width=100&height=30"


async def open_session(base: str, area: str, cookies: dict[str, str]) -> tuple[Any, Any]:
    """A browser session's websocket, as the page opens it; (client, websocket)."""
    client = ClientSession(cookies=cookies)
    socket = await client.ws_connect(session_url(base, area), headers={"Origin": base})
    return client, socket


DECIDER = 2
"""The suggestions' decider's connections, once per `serve`: the knowledge base and its listener."""


def test_serve_holds_two_and_three_per_browser_session(own_database: str, tmp_path: Path) -> None:
    """`serve` itself: accounts and the customers' conversations. Each browser session: the desk,
    its change feed and the knowledge base (no listener of its own: it polls the stamp), a
    customer's as an agent's. Once per `serve`, with the first session, the suggestions' decider
    (replay mode): the knowledge base and its listener."""
    admin, url = postgres_env.ADMIN_URL, own_database
    serve, base = start_serve(tmp_path / "home", url)
    try:
        assert len(backends(admin, url)) == 2

        async def sessions() -> None:
            customer = {"helpdesk-chat": httpx.get(base + "/").cookies["helpdesk-chat"]}
            signed = httpx.post(
                base + "/signin",
                data={"name": "ana", "password": PASSWORD, "next": "/agent"},
                headers={"Origin": base},
            )
            agent = {"helpdesk-session": signed.cookies["helpdesk-session"]}
            opened = [await open_session(base, "chat", customer)]
            try:
                await asyncio.to_thread(
                    wait_for, lambda: serve.said("session 1 started (chat"),
                    timeout=START_TIMEOUT_S, what="the customer's session",
                )  # fmt: skip
                await asyncio.to_thread(
                    wait_for, lambda: len(backends(admin, url)) >= 2 + 3 + DECIDER,
                    timeout=START_TIMEOUT_S, what="the suggestions' decider",
                )  # fmt: skip
                assert len(backends(admin, url)) == 2 + 3 + DECIDER
                assert backends(admin, url).count(LISTEN_DESK) == 1
                opened.append(await open_session(base, "agent", agent))
                await asyncio.to_thread(
                    wait_for, lambda: len(backends(admin, url)) >= 2 + 3 + 3 + DECIDER,
                    timeout=START_TIMEOUT_S, what="the agent's session",
                )  # fmt: skip
                # Its app draws once everything it keeps is open (a session prepares first).
                async with asyncio.timeout(START_TIMEOUT_S):
                    while (await opened[-1][1].receive()).type != WSMsgType.BINARY:
                        pass
                queries = backends(admin, url)
                assert len(queries) == 2 + 3 + 3 + DECIDER, queries
                # The one knowledge-base listener is the decider's: sessions poll the stamp.
                assert queries.count(LISTEN_DESK) == 2 and queries.count(LISTEN_KB) == 1
            finally:
                for client, socket in opened:
                    await socket.close()
                    await client.close()

        run_async(sessions())
        # The decider stays while `serve` runs: it serves the next customer's session too.
        wait_for(
            lambda: len(backends(admin, url)) == 2 + DECIDER,
            what="the sessions' connections closed",
        )
    finally:
        serve.stop()


def test_a_repeated_question_leaves_no_knowledge_base_connection_open(own_database: str) -> None:
    """A customer asks again what the bot answered: the desk reads the answer's passage to see
    it is unchanged (it is: a person is offered instead of the same answer). That read's
    connection was kept for the rest of the process, one more for every customer's session that
    ever repeated a question; now only the desk's own stays."""
    admin, url = postgres_env.ADMIN_URL, own_database
    with PostgresPassageStore.open(url) as kb:
        helmet = kb.get("helmet").passage
    question = "Do I have to wear a helmet?"
    answer = Answer(id=helmet.id, title=helmet.title, text=helmet.text, probability=0.9)
    decision = Decision(
        question=question, answer=answer, reason=None, threshold=0.7, latency_ms=1.0,
        candidates=(Candidate(id=helmet.id, title=helmet.title, text=helmet.text, bm25=3.0,
                              probability=0.9),),
    )  # fmt: skip
    desk = open_service(load_settings(store={"db": url}, knowledge_base={"path": url}))
    try:
        asked = desk.ask(None, question)
        [leased] = desk.lease("worker", limit=1, lease_s=30)
        desk.record_decision("worker", leased, decision)
        again = desk.ask(asked.conversation.id, question)
        assert not again.message.pending  # The passage was read, and found unchanged.
        assert len(backends(admin, url)) == 1  # The desk's own.
    finally:
        desk.close()


# -- 2. a database with no connection to spare -----------------------------------------------------


@pytest.fixture(scope="module")
def cluster() -> Iterator[PrivateCluster]:
    private = PrivateCluster()
    with psycopg.connect(private.url, autocommit=True) as conn:
        conn.execute("CREATE ROLE desk LOGIN")  # Not a superuser: CONNECTION LIMIT applies.
    yield private
    private.close()


@pytest.fixture
def limited(cluster: PrivateCluster) -> Iterator[str]:
    """A seeded database on the private cluster, owned by a role a CONNECTION LIMIT applies to;
    its URL (as that role)."""
    name = f"qa_conn_{secrets.token_hex(6)}"
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {} OWNER desk").format(sql.Identifier(name)))
    url = with_database(cluster.url, name, user="desk")
    seed(url)
    yield url
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def limit(cluster: PrivateCluster, url: str, connections: int) -> None:
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("ALTER DATABASE {} CONNECTION LIMIT {}").format(
                sql.Identifier(database_of(url)), sql.Literal(connections)
            )
        )


def full(url: str) -> str:
    return f"helpdesk: error: {display(url)}: no connection to spare ("


def test_a_bot_says_the_database_has_no_connection_to_spare(
    cluster: PrivateCluster, limited: str, tmp_path: Path
) -> None:
    """Its desk's connection refused: one line naming the cause and what to do (it said
    "database unavailable", as for a server that is down)."""
    limit(cluster, limited, 0)
    bot = start(tmp_path / "home", "bot", "--db", limited, "--kb", str(SHIPPED_KB))
    assert bot.process.wait(timeout=START_TIMEOUT_S) == 2
    wait_for(lambda: bot.said("\n"), what="its line")
    [line] = "".join(bot.output).splitlines()
    assert line.startswith(full(limited)), line
    assert 'too many connections for database "' in line
    assert line.endswith("run fewer, or raise the server's max_connections or the database's"
                         " CONNECTION LIMIT")  # fmt: skip


def test_a_terminal_chat_refused_its_change_feed_says_so_in_one_line(
    cluster: PrivateCluster, limited: str, tmp_path: Path
) -> None:
    """One connection left: the desk opens, its change feed is refused. The app crashed with a
    traceback (the feed was opened inside the running app); it ends with one line."""
    limit(cluster, limited, 1)
    environment = server_environment(tmp_path) | {"TERM": "xterm-256color"}
    code, output = run_in_terminal(
        ["chat", "--db", limited, "--kb", str(SHIPPED_KB), "--no-bot"], environment
    )
    said = after_the_app(output).strip()
    assert code == 2, said
    assert "Traceback" not in output
    assert said.startswith(full(limited)), said


def test_serve_sends_a_browser_to_the_busy_page_when_the_database_is_full(
    cluster: PrivateCluster, limited: str, tmp_path: Path
) -> None:
    """`serve` holds 2 of the 4 connections the database allows; a customer's session needs 3.
    Its process took 2 (desk, knowledge base), said it had started, and its conversation was
    started; then its change feed was refused inside the app: a traceback in serve's log, an
    empty conversation, and a page that said only that the session ended. Now every connection
    is opened before it says it started: it is refused first, leaves no conversation, serve
    logs one line, and the page goes to the busy words, which try again by themselves."""
    url = limited
    serve, base = start_serve(tmp_path / "home", url)
    try:
        limit(cluster, url, 4)

        async def customer() -> list[str]:
            cookies = {"helpdesk-chat": httpx.get(base + "/").cookies["helpdesk-chat"]}
            client, socket = await open_session(base, "chat", cookies)
            told = []
            try:
                async with asyncio.timeout(START_TIMEOUT_S):
                    async for message in socket:
                        if message.type == WSMsgType.TEXT:
                            told.append(message.data)
            finally:
                await socket.close()
                await client.close()
            return told

        told = run_async(customer())
        assert told == ['["open_url", {"url": "/unavailable?why=busy&page=%2F", "new_tab": false}]']
        page = httpx.get(base + "/unavailable?why=busy&page=%2F")
        assert page.status_code == 503 and BUSY in page.text
        assert httpx.get(base + "/healthz").json()["refused"] == {"database_full": 1}
        with psycopg.connect(with_database(cluster.url, database_of(url))) as conn:
            assert conn.execute("SELECT count(*) FROM conversations").fetchone() == (0,)
        wait_for(lambda: serve.said("session 1 ended"), what="the session's end")
        log = "".join(serve.output)
        assert "Traceback" not in log and "session 1 started" not in log
        [failed] = [line for line in log.splitlines() if "failed to start" in line]
        assert "session 1 (pid " in failed and ": no connection to spare (" in failed
    finally:
        serve.stop()
