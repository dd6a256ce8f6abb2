"""What only PostgreSQL has: its URL and password, its schema version, a server that goes away.

The contract (`test_contract.py`) runs on PostgreSQL through `tests/backends.py`; these tests add
the server's own faults. Restarts happen on a private cluster (`tests/pg_cluster.py`), never on
the shared server.
"""

from __future__ import annotations

import multiprocessing
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import psycopg
import pytest
from textual.widgets import Input, Static

from chatbot.config import load_settings
from chatbot.dburl import display, redact
from chatbot.desk.models import State
from chatbot.store.interface import StoreError
from chatbot.store.postgres import PostgresStore
from chatbot.store.postgres_schema import MIGRATIONS
from chatbot.tui import create_app
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests import racers
from tests.backends import database_url, postgres_server
from tests.conftest import ROOT
from tests.pg_cluster import PrivateCluster
from tests.store.opening import open_at_once
from tests.tui.conftest import Q1, SIZE
from tests.tui.helpers import wait_until

SECRET = "s3cr%40t-pw"  # URL-encoded "s3cr@t-pw".


def test_a_url_is_shown_without_its_password() -> None:
    url = f"postgresql://ana:{SECRET}@db.example:5432/helpdesk?sslmode=require"
    assert display(url) == "postgresql://ana@db.example:5432/helpdesk?sslmode=require"
    assert display("postgresql://h/db?password=pw&x=1") == "postgresql://h/db?password=***&x=1"
    assert display("/var/lib/helpdesk.sqlite3") == "/var/lib/helpdesk.sqlite3"
    text = f"could not connect to {url}: password s3cr@t-pw rejected ({SECRET})"
    scrubbed = redact(text, url)
    assert "s3cr" not in scrubbed and "postgresql://ana@db.example:5432/helpdesk" in scrubbed


def test_a_server_that_refuses_is_one_line_exit_2_without_the_password() -> None:
    url = f"postgresql://ana:{SECRET}@127.0.0.1:1/helpdesk"
    done = subprocess.run(
        [sys.executable, "-m", "chatbot", "conversations", "list", "--db", url],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert "postgresql://ana@127.0.0.1:1/helpdesk: database unavailable" in done.stderr
    assert "s3cr" not in done.stderr


@pytest.fixture
def fresh_url() -> Iterator[str]:
    """A database of its own, created and dropped here (tests below change its schema)."""
    server = postgres_server()
    url = server.create()
    yield url
    server.drop(url)


def test_a_newer_schema_is_refused_with_one_line(fresh_url: str) -> None:
    PostgresStore.open(fresh_url).close()
    with psycopg.connect(fresh_url, autocommit=True) as conn:
        conn.execute("UPDATE schema_versions SET version = 99 WHERE component = 'conversations'")
    with pytest.raises(StoreError) as refused:
        PostgresStore.open(fresh_url)
    message = str(refused.value)
    assert "\n" not in message
    assert message.endswith("database schema version 99 is newer than this helpdesk understands"
                            f" ({len(MIGRATIONS)}); upgrade helpdesk")  # fmt: skip


@pytest.fixture
def empty_url() -> Iterator[str]:
    """A database of its own with no schema at all: not copied from the migrated template."""
    server = postgres_server()
    url = server.create(migrated=False)
    yield url
    server.drop(url)


def test_processes_starting_at_once_migrate_once(empty_url: str) -> None:
    context = racers.context()
    barrier = context.Barrier(4)
    opened: multiprocessing.Queue[tuple[float, int, float]] = context.Queue()
    processes = [racers.start(open_at_once, empty_url, barrier, opened) for _ in range(4)]
    for process in processes:
        process.join(timeout=60)
    assert [process.exitcode for process in processes] == [0] * 4  # None failed to set up.
    spans = [opened.get(timeout=5) for _ in processes]
    assert [version for _, version, _ in spans] == [len(MIGRATIONS)] * 4
    # They raced: all four had begun opening (and so migrating) before any was done.
    assert max(began for began, _, _ in spans) < min(done for _, _, done in spans), spans
    with psycopg.connect(empty_url) as conn:
        versions = conn.execute("SELECT version FROM schema_versions").fetchall()
        assert versions == [(len(MIGRATIONS),)]


# -- a server restart -----------------------------------------------------------------------------


ON_THE_CLUSTER = pytest.mark.xdist_group("pg-cluster")
"""For the tests that use the cluster: under pytest-xdist they all run on one worker, so the
cluster is made once (initdb and a start: ~0.7 CPU-s), not on each worker that gets one of them.
One at a time, too, as they stop and start it."""


@pytest.fixture(scope="module")
def cluster() -> Iterator[PrivateCluster]:
    private = PrivateCluster()
    yield private
    private.close()


@pytest.fixture
def cluster_db(cluster: PrivateCluster) -> Iterator[str]:
    if not _up(cluster.url):
        cluster.start()
    name = f"restart_{time.monotonic_ns()}"
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"'.encode())
    yield database_url(cluster.url, name)
    if not _up(cluster.url):
        cluster.start()


def _up(url: str) -> bool:
    try:
        psycopg.connect(url, connect_timeout=2).close()
    except psycopg.OperationalError:
        return False
    return True


@ON_THE_CLUSTER
def test_a_restart_fails_writes_loudly_then_recovers_by_itself(
    cluster: PrivateCluster, cluster_db: str
) -> None:
    store = PostgresStore.open(cluster_db)
    other = PostgresStore.open(cluster_db)
    feed = store.open_feed()
    try:
        acknowledged = store.create_conversation()
        assert feed.wait(5.0) is True

        cluster.stop()
        with pytest.raises(StoreError, match="database unavailable|cannot write"):
            store.create_conversation()  # Reported, not dropped...
        with pytest.raises(StoreError):
            store.conversation(acknowledged.id)
        with pytest.raises(StoreError):
            feed.wait(0.5)

        cluster.start()
        # ...and the same store objects carry on: no reopening by the caller.
        assert store.conversation(acknowledged.id).state is State.BOT  # Nothing acknowledged lost.
        assert feed.wait(5.0) is True  # A change may have been missed while away: say so.
        assert feed.wait(0.0) is False
        made = other.create_conversation()  # Its connection died too: one was made again.
        assert feed.wait(5.0) is True
        assert [c.id for c in store.conversations()] == [acknowledged.id, made.id]
    finally:
        feed.close()
        store.close()
        other.close()


@ON_THE_CLUSTER
async def test_the_chat_says_the_database_is_away_keeps_the_question_and_recovers(
    cluster: PrivateCluster, cluster_db: str
) -> None:
    settings = load_settings(store={"db": cluster_db})
    app = create_app(settings, mode="chat", timings=False, bot=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.screen.query_one(ChatPanel)
        field = app.screen.query_one("#question", Input)
        cluster.stop()
        field.focus()
        field.value = Q1
        await pilot.press("enter")
        error = app.screen.query_one("#chat-error", Static)
        await wait_until(pilot, lambda: bool(error.display))
        # In the customer's words: the database's address and the driver's are the operator's.
        assert "The help desk cannot be reached just now" in str(error.render())
        assert "127.0.0.1" not in str(error.render())
        assert field.value == Q1  # What the customer typed is kept for another try.

        cluster.start()
        await pilot.press("enter")
        await wait_until(pilot, lambda: panel.conversation_id is not None)
        assert not error.display and field.value == ""
    store = PostgresStore.open(cluster_db)
    try:
        [conversation] = store.conversations()
        assert [e.text for e in store.entries(conversation.id)] == [Q1]  # type: ignore[union-attr]
    finally:
        store.close()


# -- accounts (`helpdesk serve`) in the same database ----------------------------------------------


def test_accounts_live_in_the_postgres_database_too(fresh_url: str) -> None:
    from argon2 import PasswordHasher

    from chatbot.accounts.models import Role
    from chatbot.accounts.service import AccountService
    from chatbot.assembly import open_accounts
    from chatbot.store.postgres_users import PostgresUserStore
    from chatbot.store.users import AccountExists, AccountNotFound

    fast = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    service = AccountService(PostgresUserStore.open(fresh_url), hasher=fast)
    service.add("ana", role=Role.AGENT, password="correct horse", display_name="Ana P.")
    with pytest.raises(AccountExists):
        service.store.add_account(name="ana", display_name="A", role=Role.AGENT, password_hash="x")
    assert service.authenticate("ana", "correct horse") is not None
    assert service.authenticate("ana", "wrong") is None
    before = service.store.get_account("ana")
    assert before is not None and before.password_hash.startswith("$argon2id$")
    service.set_password("ana", "battery staple")
    after = service.store.get_account("ana")
    assert after is not None and after.account.session_epoch == before.account.session_epoch + 1

    through_settings = open_accounts(load_settings(store={"db": fresh_url}))
    assert [a.name for a in through_settings.store.accounts()] == ["ana"]
    secret = through_settings.store.session_secret()
    assert len(secret) == 32 and service.store.session_secret() == secret  # One for every host.
    service.remove("ana")
    with pytest.raises(AccountNotFound):
        service.remove("ana")
    service.store.close()
    through_settings.store.close()


@ON_THE_CLUSTER
def test_a_bot_worker_rides_out_a_restart(cluster: PrivateCluster, cluster_db: str) -> None:
    """It says the database is away, and answers again once it is back, without a restart."""
    from chatbot.assembly import open_service

    log = cluster.folder / f"bot-{time.monotonic_ns()}.log"
    with log.open("wb") as stderr:
        bot = subprocess.Popen([sys.executable, "-m", "chatbot", "bot", "--db", cluster_db],
                               cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr)  # fmt: skip
    try:
        _until(lambda: "answering questions" in log.read_text())
        cluster.stop()
        _until(lambda: "database" in log.read_text().partition("\n")[2])
        away = log.read_text().partition("\n")[2]
        assert "lost the database" in away or "database unavailable" in away, away
        cluster.start()
        desk = open_service(load_settings(store={"db": cluster_db}))
        try:
            asked = desk.ask(None, Q1)
            _until(lambda: desk.conversation(asked.conversation.id).pending == 0)
            [decided] = desk.decisions(asked.conversation.id)
            assert decided.decision.answer is not None
        finally:
            desk.close()
        bot.send_signal(signal.SIGTERM)
        assert bot.wait(timeout=60) == 0
    finally:
        if bot.poll() is None:
            bot.kill()
            bot.wait(timeout=60)


def _until(condition: Callable[[], object], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(0.05)
