"""PostgreSQL URLs that name the wrong database, found by a tester running the desk on PostgreSQL.

1. A `--kb` naming an existing database with no knowledge base in it (a typo) became a new, empty
   one: `ask`, `bot` and the apps made the kb_* tables there and sent every question to a person
   (`no-passages`). Only `kb import` makes a knowledge base now; the rest refuse as `kb list`
   does, one line and exit status 2, before anything starts. The bot's start line names the
   knowledge base it answers from.
2. A URL naming no database (`postgresql://postgres@host:5432/`) reached the one libpq picks by
   the user's name, `postgres`, and the bot made the help desk's tables there. It is refused in
   one line, for `--db` and `--kb`, from the command line, the environment or any settings.
3. `kb import` into the desk's database first (as the docs say), then `doctor`: the kb_* tables
   were "another application's", exit 1. They are the help desk's: a new database, exit 0.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from chatbot.assembly import (
    check_knowledge_base,
    open_accounts,
    open_knowledge_base,
    open_service,
    require_database,
)
from chatbot.config import Settings, load_settings
from chatbot.dburl import display
from chatbot.errors import HelpdeskError
from chatbot.knowledge_base.postgres import PostgresPassageStore
from chatbot.knowledge_base.storage import KnowledgeBaseError
from tests.cli_run import run_cli
from tests.conftest import ROOT, SHIPPED_KB
from tests.helpdesk_processes import START_S, processes, start, stop, until
from tests.kb.backends import pg_url

__all__ = ["pg_url", "processes"]

NAMES_NO_DATABASE = (
    "the URL names no database (PostgreSQL would use the one named as the user): write it as "
    "postgresql://user@host:5432/dbname"
)


def no_knowledge_base(url: str) -> str:
    return (
        f"{display(url)}: no knowledge base there (no kb_* tables); "
        "`helpdesk kb import DIR --kb URL` makes one"
    )


def kb_tables(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
        ).fetchall()
    return [str(name) for (name,) in rows]


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on: a URL naming no database is refused before any
    connection, so none is ever made, whichever database the server would have picked."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def nameless() -> str:
    """A URL with a user, host and port, and no database: `postgres` is the one libpq picks."""
    return f"postgresql://postgres:hunter2@127.0.0.1:{closed_port()}/"


# -- 2. a URL naming no database -------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["postgresql://h:5432/", "postgresql://h:5432", "postgres://u@h/?sslmode=disable",
     "postgresql:///", "postgresql://h/%20"],
)  # fmt: skip
def test_a_url_without_a_database_name_is_a_problem(url: str) -> None:
    from chatbot.dburl import postgres_url_problem

    assert postgres_url_problem(url) == NAMES_NO_DATABASE


@pytest.mark.parametrize(
    "url",
    ["postgresql://h:5432/helpdesk", "postgresql:///helpdesk", "postgres://h/?dbname=helpdesk",
     "postgresql://h/?service=desk"],
)  # fmt: skip
def test_a_url_naming_a_database_is_not(url: str) -> None:
    from chatbot.dburl import postgres_url_problem

    assert postgres_url_problem(url) is None


@pytest.mark.parametrize(
    ("option", "argv"),
    [
        ("--db", ["bot", "--db", "{url}"]),
        ("--db", ["doctor", "--db", "{url}"]),
        ("--db", ["conversations", "list", "--db", "{url}"]),
        ("--db", ["users", "list", "--db", "{url}"]),
        ("--kb", ["ask", "helmet?", "--kb", "{url}"]),
        ("--kb", ["bot", "--db", "{tmp}/desk.sqlite3", "--kb", "{url}"]),
        ("--kb", ["kb", "list", "--kb", "{url}"]),
        ("--kb", ["kb", "import", str(SHIPPED_KB), "--kb", "{url}"]),
        ("--kb", ["--kb", "{url}", "kb", "list"]),
    ],
)
def test_the_command_line_refuses_it_in_one_line(
    option: str,
    argv: list[str],
    nameless: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, *[a.format(url=nameless, tmp=tmp_path) for a in argv])
    assert (code, out) == (2, "")
    assert err == f"helpdesk: error: invalid option {option}: {NAMES_NO_DATABASE}\n"
    assert not (tmp_path / "desk.sqlite3").exists()


@pytest.mark.parametrize(
    ("variable", "setting"), [("HELPDESK_DB", "store.db"), ("HELPDESK_KB", "knowledge_base.path")]
)
def test_the_environment_is_refused_naming_the_variable(
    variable: str,
    setting: str,
    nameless: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(variable, nameless)
    code, out, err = run_cli(capsys, "ask", "helmet?")
    assert (code, out) == (2, "")
    refused = f"invalid setting {setting} from {variable}: {NAMES_NO_DATABASE}"
    assert err == f"helpdesk: error: {refused}\n"


def test_settings_reaching_a_store_another_way_are_refused_too(nameless: str) -> None:
    """A browser session's app reads its settings from the environment without the command
    line's checks; a test's or a script's `Settings` likewise."""
    settings = load_settings(store={"db": nameless})
    for opening in (open_service, require_database, open_accounts):
        with pytest.raises(HelpdeskError) as raised:
            opening(settings)
        assert str(raised.value) == f"store.db: {NAMES_NO_DATABASE}", opening
    with pytest.raises(KnowledgeBaseError) as refused:
        PostgresPassageStore.open(nameless, create=True)  # As `kb import` opens it.
    assert str(refused.value) == f"{display(nameless)}: {NAMES_NO_DATABASE}"
    assert "hunter2" not in str(refused.value)


def test_an_app_given_such_settings_refuses_before_it_starts(nameless: str) -> None:
    from chatbot.tui import create_app

    with pytest.raises(HelpdeskError, match="store.db: the URL names no database"):
        create_app(load_settings(store={"db": nameless}), mode="agent", agent="Zed")


# -- 1. a knowledge base that is not there ---------------------------------------------------------


def kb_settings(tmp_path: Path, kb: str) -> Settings:
    return load_settings(store={"db": tmp_path / "desk.sqlite3"}, knowledge_base={"path": kb})


def test_ask_refuses_a_database_with_no_knowledge_base(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "ask", "helmet?", "--kb", pg_url)
    assert (code, out) == (2, "")  # Not "Escalated to a person: no-passages".
    assert err == f"helpdesk: error: {no_knowledge_base(pg_url)}\n"
    assert kb_tables(pg_url) == []


def test_the_bot_refuses_it_before_it_opens_the_desk(pg_url: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "chatbot", "bot", "--db", str(tmp_path / "desk.sqlite3"),
         "--kb", pg_url],
        cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=START_S,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"helpdesk: error: {no_knowledge_base(pg_url)}\n"
    assert kb_tables(pg_url) == []
    assert not (tmp_path / "desk.sqlite3").exists()


def test_serve_refuses_it_before_it_listens(pg_url: str, tmp_path: Path) -> None:
    """Not a server whose every session and bot then refused to start (it used to listen)."""
    done = subprocess.run(
        [sys.executable, "-m", "chatbot", "serve", "--db", str(tmp_path / "desk.sqlite3"),
         "--kb", pg_url, "--port", str(closed_port())],
        cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=START_S,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"helpdesk: error: {no_knowledge_base(pg_url)}\n"
    assert kb_tables(pg_url) == []
    assert not (tmp_path / "desk.sqlite3").exists()


def test_an_app_on_one_mistyped_database_makes_not_even_the_desks_tables(pg_url: str) -> None:
    """`--db` and `--kb` naming the same empty database: the desk was opened (and its tables
    made) before the knowledge base was checked."""
    from chatbot.tui import create_app

    settings = load_settings(store={"db": pg_url}, knowledge_base={"path": pg_url})
    with pytest.raises(KnowledgeBaseError):
        create_app(settings, mode="agent", agent="Zed")
    assert kb_tables(pg_url) == []


@pytest.mark.parametrize(
    "app",
    [{"mode": "agent", "agent": "Zed"}, {"mode": "all"},
     # A browser customer's session, as `chatbot.web.child` prepares it.
     {"mode": "chat", "bot": False, "editor": False}],
)  # fmt: skip
def test_the_apps_refuse_it_before_they_start(
    app: dict[str, object], pg_url: str, tmp_path: Path
) -> None:
    from chatbot.tui import create_app

    settings = kb_settings(tmp_path, pg_url)
    with pytest.raises(KnowledgeBaseError) as raised:
        create_app(settings, **app)  # type: ignore[arg-type]
    assert str(raised.value) == no_knowledge_base(pg_url)
    # What `serve` (and the app, first) checks the knowledge base with.
    with pytest.raises(KnowledgeBaseError):
        check_knowledge_base(settings)
    with pytest.raises(KnowledgeBaseError):
        open_knowledge_base(settings)
    assert kb_tables(pg_url) == []


async def test_the_agent_command_ends_with_the_one_line(pg_url: str, tmp_path: Path) -> None:
    """`helpdesk agent --kb URL --agent Zed` as the command builds it: its settings load once the
    first screen is up, and the refusal ends the app (exit status 2, the line printed)."""
    from chatbot.cli.app import build_app
    from chatbot.cli.main import build_parser
    from tests.tui.helpers import wait_until

    argv = ["agent", "--db", str(tmp_path / "desk.sqlite3"), "--kb", pg_url, "--agent", "Zed"]
    app = build_app(build_parser().parse_args(argv))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.startup_error is not None, timeout=30)
    assert app.return_code == 2
    assert app.startup_error == no_knowledge_base(pg_url)
    assert kb_tables(pg_url) == []


def test_kb_import_makes_it_and_then_everything_uses_it(
    pg_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    processes: list[subprocess.Popen[bytes]],
) -> None:
    code, _, err = run_cli(capsys, "kb", "import", str(SHIPPED_KB), "--kb", pg_url)
    assert code == 0, err
    settings = kb_settings(tmp_path, pg_url)
    check_knowledge_base(settings)
    code, out, _ = run_cli(capsys, "ask", "Do you lend helmets?", "--kb", pg_url, "--json")
    assert code == 0 and json.loads(out)["candidates"]
    # The bot's start line names the knowledge base as well as the database.
    log = tmp_path / "bot.log"
    desk = tmp_path / "desk.sqlite3"
    bot = start(processes, log, "bot", "--db", str(desk), "--kb", pg_url, env={})
    until(lambda: "answering questions" in log.read_text())
    assert stop(bot) == 0
    [line] = [line for line in log.read_text().splitlines() if "answering questions" in line]
    assert f": answering questions from {desk} with the knowledge base {display(pg_url)} (" in line


# -- 3. doctor on a database holding the knowledge base alone --------------------------------------


@pytest.fixture
def imported(pg_url: str, capsys: pytest.CaptureFixture[str]) -> Iterator[str]:
    """The README's order: the knowledge base imported into the desk's database, nothing run."""
    code, _, err = run_cli(capsys, "kb", "import", str(SHIPPED_KB), "--kb", pg_url)
    assert code == 0, err
    yield pg_url


def schema_line(out: str) -> str:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("schema"))
    rest = [line for line in lines[start + 1 :] if line.startswith(" ")]
    return " ".join(" ".join([lines[start], *rest]).split())


def test_doctor_takes_the_knowledge_base_for_the_help_desks_own(
    imported: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = kb_tables(imported)
    assert before == ["kb_history", "kb_meta", "kb_passages", "kb_synonyms"]
    code, out, err = run_cli(capsys, "doctor", "--db", imported)
    assert (code, err) == (0, "")
    assert schema_line(out) == (
        "schema none yet: only the knowledge base's tables (kb_*) there; the app, `helpdesk bot`"
        " or `helpdesk serve` makes the help desk's on first start (doctor makes none)"
    )
    assert out.splitlines()[-1] == "bots      no question waits for a bot"
    code, out, err = run_cli(capsys, "doctor", "--db", imported, "--json")
    report = json.loads(out)
    assert (code, err) == (0, "")
    assert report["schema_version"] == 0 and report["knowledge_base"] is True
    assert "other_tables" not in report and report["waiting_for_a_bot"] == 0
    assert kb_tables(imported) == before  # Doctor made nothing.


def test_other_tables_beside_the_knowledge_base_are_a_shared_database(
    imported: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with psycopg.connect(imported, autocommit=True) as conn:
        conn.execute("CREATE TABLE orders (id integer)")
    code, out, err = run_cli(capsys, "doctor", "--db", imported)
    assert (code, err) == (0, "")
    assert schema_line(out).startswith("schema none yet: only the knowledge base's tables")


def test_a_database_of_other_tables_alone_is_still_asked_about(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE kb_passages (id integer)")  # Someone else's, of that name.
    code, _, err = run_cli(capsys, "doctor", "--db", pg_url)
    assert code == 1
    assert err.startswith(f"helpdesk: error: {display(pg_url)} holds 1 table (kb_passages)")
