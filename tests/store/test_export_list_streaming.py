"""`helpdesk conversations export` reads a page of conversations at a time (their logs and
decisions in a query or two per page, not per conversation), and `list` (text and `--json`)
writes rows as it reads them: the output is what it was, on both backends, and memory does not
grow with the number of conversations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from chatbot.cli.conversations import full_json
from chatbot.cli.main import main
from tests import postgres_env
from tests.backends import Backend
from tests.store.conftest import FakeClock
from tests.store.helpers import fill


def run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    code = main(["conversations", *arguments])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


PAGE = 50
"""The CLI's page in these tests (500 in use): three pages are then 123 conversations, quick to
write on PostgreSQL, where 1,203 took 24 s a test."""


@pytest.fixture(autouse=True)
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    import chatbot.cli.conversations

    monkeypatch.setattr(chatbot.cli.conversations, "PAGE", PAGE)


@pytest.fixture
def filled(backend: Backend, clock: FakeClock) -> str:
    """123 conversations (more than two of the CLI's pages, `PAGE`), on either backend."""
    desk = backend.service(clock)
    try:
        fill(desk, 123, clock)
    finally:
        desk.close()
    return str(backend.location)


def test_export_is_show_json_of_each_conversation(
    backend: Backend, filled: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Byte for byte what the per-conversation path gives: `show --json`'s object on one line."""
    code, out, _ = run(capsys, "export", "--db", filled)
    assert code == 0
    code, listed, _ = run(capsys, "list", "--db", filled, "--json")
    ids = [item["id"] for item in json.loads(listed)]
    assert len(ids) == 123 - 24  # The empty ones are left out.
    # The per-conversation path `show --json` takes: its log and decisions read one by one.
    desk = backend.service()
    try:
        expected = [
            json.dumps(full_json(desk, desk.conversation(id_)), ensure_ascii=False) + "\n"
            for id_ in ids
        ]
    finally:
        desk.close()
    _, shown, _ = run(capsys, "show", str(ids[-1]), "--db", filled, "--json")
    assert expected[-1] == json.dumps(json.loads(shown), ensure_ascii=False) + "\n"
    assert out == "".join(expected)
    # Notes, ratings, decisions and Chinese text are all there, and kept literal.
    lines = [json.loads(line) for line in out.splitlines()]
    assert any(c["notes"] for c in lines) and any(c["decisions"] for c in lines)
    assert "我的押金" in out and "[b]finance[/b]" in out

    code, waiting, _ = run(capsys, "export", "--db", filled, "--state", "waiting")
    assert code == 0
    waiting_ids = {c["id"] for c in lines if c["state"] == "waiting"}
    assert waiting == "".join(e for e, i in zip(expected, ids, strict=True) if i in waiting_ids)


def test_list_json_is_one_indented_array(filled: str, capsys: pytest.CaptureFixture[str]) -> None:
    """What `json.dumps(every conversation, indent=2)` printed before, written a row at a time."""
    code, out, _ = run(capsys, "list", "--db", filled, "--json")
    assert code == 0
    listed = json.loads(out)
    assert out == json.dumps(listed, indent=2) + "\n"
    assert "\\u674e\\u5a1c" in out  # 李娜, escaped as before.
    _, out, _ = run(capsys, "list", "--db", filled, "--json", "--state", "claimed", "--limit", "2")
    assert out == json.dumps(json.loads(out), indent=2) + "\n" and len(json.loads(out)) == 2
    _, out, _ = run(capsys, "list", "--db", filled, "--json", "--state", "bot", "--limit", "1")
    assert out == json.dumps(json.loads(out), indent=2) + "\n"


@pytest.fixture
def small(tmp_path: Path, clock: FakeClock) -> str:
    path = tmp_path / "helpdesk.sqlite3"
    desk = Backend("sqlite", path).service(clock)
    try:
        fill(desk, 8, clock)
    finally:
        desk.close()
    return str(path)


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)  # Round trips: its cost.
def test_export_reads_a_page_in_a_few_round_trips(
    backend: Backend, filled: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """On PostgreSQL each read outside a transaction is one transaction of its own, so the
    server's count of them is the export's round trips: a handful per page of 500, where reading
    each conversation's log and decisions apart took three or more per conversation."""
    assert backend.name == "postgresql"
    import psycopg

    name = filled.rsplit("/", 1)[1]

    def transactions() -> int:
        with psycopg.connect(postgres_env.ADMIN_URL, autocommit=True) as admin:
            # Wait for every session on the database to end: a backend reports its counts as
            # it exits.
            while admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (name,)
            ).fetchone() != (0,):
                admin.execute("SELECT pg_sleep(0.01)")
            row = admin.execute(
                "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s",
                (name,),
            ).fetchone()
            assert row is not None
            return int(row[0])

    before = transactions()
    code, out, _ = run(capsys, "export", "--db", filled)
    assert code == 0 and len(out.splitlines()) == 99
    spent = transactions() - before
    assert spent < 40, spent  # 2 pages of 50; was over 300.


# What the code before streaming printed for `small` (generated with it, kept as printed).
PIPED = """\
     1  bot       -             -               2026-01-05 09:37 UTC
     2  waiting   -             low-score       2026-01-05 10:14 UTC
     3  claimed   bartholomew-the-night-shift-lead  customer-asked  2026-01-05 10:51 UTC
     4  waiting   -             low-score       2026-01-05 11:28 UTC
     6  bot       -             -               2026-01-05 12:42 UTC
     7  waiting   -             low-score       2026-01-05 13:19 UTC
     8  resolved  李娜            customer-asked  2026-01-05 13:56 UTC
"""
WIDE = """\
id  state     agent                             reason          last change (UTC)
 1  bot       -                                 -               2026-01-05 09:37 UTC
 2  waiting   -                                 low-score       2026-01-05 10:14 UTC
 3  claimed   bartholomew-the-night-shift-lead  customer-asked  2026-01-05 10:51 UTC
 4  waiting   -                                 low-score       2026-01-05 11:28 UTC
 6  bot       -                                 -               2026-01-05 12:42 UTC
 7  waiting   -                                 low-score       2026-01-05 13:19 UTC
 8  resolved  李娜                              customer-asked  2026-01-05 13:56 UTC
"""
WRAPPED = """\
id  state     agent                             reason
    last change (UTC)
 1  bot       -                                 -
    2026-01-05 09:37 UTC
 2  waiting   -                                 low-score
    2026-01-05 10:14 UTC
 3  claimed   bartholomew-the-night-shift-lead  customer-asked
    2026-01-05 10:51 UTC
 4  waiting   -                                 low-score
    2026-01-05 11:28 UTC
 6  bot       -                                 -
    2026-01-05 12:42 UTC
 7  waiting   -                                 low-score
    2026-01-05 13:19 UTC
 8  resolved  李娜                              customer-asked
    2026-01-05 13:56 UTC
"""
NARROW = """\
id  state    agent        reason
    last change (UTC)
 1  bot      -            -
    2026-01-05 09:37 UTC
 2  waiting  -            low-score
    2026-01-05 10:14 UTC
 3  claimed  bartholome…  customer-asked
    2026-01-05 10:51 UTC
"""
RESOLVED = """\
id  state     agent  reason
    last change (UTC)
 8  resolved  李娜   customer-asked
    2026-01-05 13:56 UTC
"""
JSON_CLAIMED = """\
[
  {
    "id": 3,
    "state": "claimed",
    "agent": "bartholomew-the-night-shift-lead",
    "reason": "customer-asked",
    "top_probability": null,
    "pending_questions": 0,
    "created_at": "2026-01-05T10:51:03+00:00",
    "updated_at": "2026-01-05T10:51:03+00:00",
    "waiting_since": "2026-01-05T10:51:03+00:00",
    "claimed_at": "2026-01-05T10:51:03+00:00",
    "locale": null
  }
]
"""


def test_list_text_is_as_it_was(
    small: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Piped, on a wide terminal, on one too narrow for the time: the columns of what is listed
    (with `--limit` or `--state`, only those rows), as before rows were streamed."""
    monkeypatch.delenv("COLUMNS", raising=False)
    assert run(capsys, "list", "--db", small) == (0, PIPED, "7 conversations\n")
    code, out, _ = run(capsys, "list", "--db", small, "--json", "--state", "claimed")
    assert (code, out) == (0, JSON_CLAIMED)
    monkeypatch.setenv("COLUMNS", "120")
    assert run(capsys, "list", "--db", small) == (0, WIDE, "7 conversations\n")
    monkeypatch.setenv("COLUMNS", "80")
    assert run(capsys, "list", "--db", small) == (0, WRAPPED, "7 conversations\n")
    monkeypatch.setenv("COLUMNS", "40")
    assert run(capsys, "list", "--db", small, "--limit", "3") == (0, NARROW, "3 conversations\n")
    code, out, err = run(capsys, "list", "--db", small, "--state", "resolved")
    assert (code, out, err) == (0, RESOLVED, "1 conversation\n")


def copies(path: Path, times: int) -> None:
    """The database `times` over: every conversation, entry, question and decision copied with
    its ids moved past the last ones (what `fill` makes, without making it all again)."""
    import sqlite3

    with sqlite3.connect(path) as db:
        c, e, d = (db.execute(f"SELECT max({key}) FROM {table}").fetchone()[0]  # noqa: S608
                   for key, table in (("id", "conversations"), ("id", "entries"),
                                      ("id", "decisions")))  # fmt: skip
        for k in range(1, times):
            db.execute(
                "INSERT INTO conversations SELECT id + :c, state, agent, reason, top_probability,"
                " waiting_since, created_at, updated_at, claimed_at, question_entry + :e"
                " FROM conversations WHERE id <= :c0",
                {"c": k * c, "e": k * e, "c0": c},
            )
            db.execute(
                "INSERT INTO entries SELECT id + :e, conversation_id + :c, author, event, text,"
                " text_digest, agent, passage_id, passage_title, decision_id + :d, feedback,"
                " params, created_at, revision FROM entries WHERE id <= :e0",
                {"c": k * c, "e": k * e, "d": k * d, "e0": e},
            )
            db.execute(
                "INSERT INTO decisions SELECT id + :d, conversation_id + :c, message_id + :e,"
                " worker, answer_id, reason, top_probability, latency_ms, body, created_at"
                " FROM decisions WHERE id <= :d0",
                {"c": k * c, "e": k * e, "d": k * d, "d0": d},
            )
            db.execute(
                "INSERT INTO questions SELECT entry_id + :e, conversation_id + :c, lease_owner,"
                " lease_until, attempts FROM questions WHERE entry_id <= :e0",
                {"c": k * c, "e": k * e, "e0": e},
            )


PEAK = textwrap.dedent("""\
    import resource, subprocess, sys
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
""")
"""Runs a command, its output thrown away, and prints its peak RSS (KiB): a process of its own
whose only child is the command, so nothing else the tests ran counts."""
PEAK_ON_A_TERMINAL = textwrap.dedent("""\
    import os, pty, resource, subprocess, sys, threading
    controller, terminal = pty.openpty()
    def drain():
        try:
            while os.read(controller, 65536):
                pass
        except OSError:  # EIO: the command's side is closed.
            pass
    threading.Thread(target=drain, daemon=True).start()
    subprocess.run(sys.argv[1:], stdout=terminal, check=True)
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
""")
"""`PEAK` with the command's output on a pseudo-terminal (read and thrown away): a pipe gets the
plain layout whatever `COLUMNS` says, so the terminal's table is measured only on a terminal."""


def peak_kib(db: Path, *arguments: str, columns: str | None = None) -> int:
    """The command's peak RSS; with `columns`, run on a terminal that wide."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns  # The terminal's width, to the command.
    peak = PEAK if columns is None else PEAK_ON_A_TERMINAL
    helpdesk = [sys.executable, "-c", "from chatbot.cli.main import main; raise SystemExit(main())"]
    done = subprocess.run(
        [sys.executable, "-c", peak, *helpdesk, "conversations", *arguments, "--db", str(db)],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    return int(done.stdout)


@pytest.fixture(scope="module")
def sizes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """2,000 listed conversations and 20,000 (ten copies), built once for the four commands
    measured below (they run on one worker: `xdist_group`)."""
    folder = tmp_path_factory.mktemp("sizes")
    small, large = folder / "small.sqlite3", folder / "large.sqlite3"
    clock = FakeClock()
    desk = Backend("sqlite", small).service(clock)
    try:
        fill(desk, 2500, clock)  # 2,000 listed: one in five is empty.
    finally:
        desk.close()
    large.write_bytes(small.read_bytes())
    copies(large, 10)
    listed = subprocess.run(
        [sys.executable, "-c", "from chatbot.cli.main import main; raise SystemExit(main())",
         "conversations", "list", "--db", str(large)], capture_output=True, text=True, check=True,
        env={k: v for k, v in os.environ.items() if k != "COLUMNS"},
    ).stdout  # fmt: skip
    assert len(listed.splitlines()) == 20_000
    return small, large


@pytest.mark.xdist_group("export-memory")
@pytest.mark.parametrize(
    ("arguments", "columns"),
    [(("list",), None), (("list",), "100"), (("list", "--json"), None), (("export",), None)],
    ids=["list", "list-terminal", "list-json", "export"],
)
def test_memory_does_not_grow_with_the_conversations(
    sizes: tuple[Path, Path], arguments: tuple[str, ...], columns: str | None
) -> None:
    """2,000 conversations and 20,000: the same peak, within a few MB (all 20,000 held at once
    was ~5 KB each, ~90 MB more, for `list --json`; ~45 MB more for `list`)."""
    peaks = [peak_kib(db, *arguments, columns=columns) for db in sizes]
    assert peaks[1] - peaks[0] < 8 * 1024, peaks
