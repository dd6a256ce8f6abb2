"""A test run killed before its end (a timeout, Ctrl+C twice) left its PostgreSQL template and
test databases behind, a pair per worker, run after run: the next run drops those whose process
is gone, and leaves alone those of a run still going."""

from __future__ import annotations

import subprocess
import sys

from tests.backends import postgres_server


def names() -> set[str]:
    server = postgres_server()
    rows = server._conn.execute("SELECT datname FROM pg_database").fetchall()
    return {name for (name,) in rows}


def test_a_killed_runs_databases_are_dropped_and_a_running_ones_kept() -> None:
    server = postgres_server()
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    running = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                               stdin=subprocess.PIPE)  # fmt: skip
    orphans = [f"helpdesk_tmpl_{ended}_0rphan00", f"helpdesk_test_{ended}_0rphan0000"]
    kept = [f"helpdesk_tmpl_{running.pid}_runn1ng0", f"helpdesk_test_{running.pid}_runn1ng000"]
    try:
        for name in [*orphans, *kept]:
            server._conn.execute(f'CREATE DATABASE "{name}"'.encode())
        assert set(orphans) <= names()
        server.drop_orphans()
        assert not set(orphans) & names()
        assert set(kept) <= names()  # Its process still runs: its tests may be using them.
        assert server.template in names()  # This run's own, made by this process.
    finally:
        running.kill()
        running.wait()
        for name in [*orphans, *kept]:
            server._conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())
