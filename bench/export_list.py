"""`helpdesk conversations export` and `list` (text, `--json`) at 20,000 conversations on SQLite
and PostgreSQL: rows/s and peak RSS of each as a fresh process, output thrown away.

With `--old DIR` (a source tree of the code to compare with, e.g. `git archive REV | tar -x -C
DIR`), the same commands run from it too, against the same databases, and each figure is given
as new ÷ old (rows/s; for memory, old ÷ new). The databases: a tenth of the conversations made
through the desk as the app writes them (`tests/store/helpers.py`'s `fill`: five kinds, notes,
decisions, Chinese text), then copied nine more times with their ids moved. The
PostgreSQL database (`qa_exp_export_list_PID` on `--admin`) is dropped at the end.

    python bench/export_list.py [--conversations N] [--old DIR] [--admin URL]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, use_repo_root  # noqa: E402

use_repo_root()

PEAK = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)\n"
    "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)
COMMANDS = {"export": ["export"], "list": ["list"], "list_json": ["list", "--json"]}
ID_SHIFTS = {
    "conversations": {"id": "c", "question_entry": "e"},
    "entries": {"id": "e", "conversation_id": "c", "decision_id": "d"},
    "decisions": {"id": "d", "conversation_id": "c", "message_id": "e"},
    "questions": {"entry_id": "e", "conversation_id": "c"},
}


def replicate(conn: Any, columns_of: dict[str, list[str]], times: int, mark: str) -> None:
    """Every conversation, entry, decision and question `times` over, ids moved past the last."""
    top = {}
    for key, table in (("c", "conversations"), ("e", "entries"), ("d", "decisions")):
        top[key] = conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0]  # noqa: S608
    for k in range(1, times):
        for table, shifts in ID_SHIFTS.items():
            picked = ", ".join(
                f"{c} + {k * top[shifts[c]]}" if c in shifts else c for c in columns_of[table]
            )
            first = "entry_id" if table == "questions" else "id"
            key = "e" if table == "questions" else table[0]
            conn.execute(
                f"INSERT INTO {table} ({', '.join(columns_of[table])})"  # noqa: S608
                f" SELECT {picked} FROM {table} WHERE {first} <= {mark}",
                (top[key],),
            )


def make_sqlite(path: Path, count: int) -> None:
    import sqlite3

    from tests.backends import Backend
    from tests.store.conftest import FakeClock
    from tests.store.helpers import fill

    clock = FakeClock()
    desk = Backend("sqlite", path).service(clock)
    try:
        fill(desk, count // 10 * 5 // 4, clock)  # One in five is empty, listed nowhere.
    finally:
        desk.close()
    with sqlite3.connect(path) as conn:
        columns = {t: [r[1] for r in conn.execute(f"PRAGMA table_info({t})")] for t in ID_SHIFTS}
        replicate(conn, columns, 10, "?")


def make_postgres(url: str, count: int) -> None:
    import psycopg

    from tests.backends import Backend
    from tests.store.conftest import FakeClock
    from tests.store.helpers import fill

    clock = FakeClock()
    desk = Backend("postgresql", url).service(clock)
    try:
        fill(desk, count // 10 * 5 // 4, clock)
    finally:
        desk.close()
    with psycopg.connect(url) as conn:
        columns = {
            t: [
                r[0]
                for r in conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s"
                    " ORDER BY ordinal_position",
                    (t,),
                )
            ]
            for t in ID_SHIFTS
        }
        replicate(conn, columns, 10, "%s")
        conn.execute("ANALYZE")


def measure(db: str, command: list[str], source: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of `helpdesk conversations COMMAND --db DB` run from the
    source tree `source`, as a fresh process whose output goes nowhere."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["PYTHONPATH"] = str(source)
    helpdesk = [sys.executable, "-c", "from chatbot.cli.main import main; raise SystemExit(main())"]
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *helpdesk, "conversations", *command, "--db", db],
        capture_output=True, text=True, env=env, check=True, cwd=source,
    )  # fmt: skip
    seconds, kib = done.stdout.split()
    return float(seconds), int(kib)


def listed(db: str) -> int:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    out = subprocess.run(
        [sys.executable, "-c", "from chatbot.cli.main import main; raise SystemExit(main())",
         "conversations", "list", "--db", db], capture_output=True, text=True, env=env,
        check=True, cwd=ROOT,
    ).stdout  # fmt: skip
    return len(out.splitlines())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=20_000)
    parser.add_argument("--old", type=Path, help="a source tree of the code to compare with")
    parser.add_argument("--admin", default="postgresql://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    import psycopg

    from tests.backends import database_url

    name = f"qa_exp_export_list_{os.getpid()}"
    results: dict[str, Any] = {"conversations": args.conversations}
    with (
        tempfile.TemporaryDirectory() as folder,
        psycopg.connect(args.admin, autocommit=True) as admin,
    ):
        sqlite = Path(folder) / "helpdesk.sqlite3"
        make_sqlite(sqlite, args.conversations)
        admin.execute(f'CREATE DATABASE "{name}"'.encode())
        try:
            url = database_url(args.admin, name)
            make_postgres(url, args.conversations)
            for backend, db in (("sqlite", str(sqlite)), ("postgresql", url)):
                rows = listed(db)
                results[f"{backend}_listed"] = rows
                for key, command in COMMANDS.items():
                    for label, source in (("", ROOT), ("old_", args.old)):
                        if source is None:
                            continue
                        seconds, kib = measure(db, command, source)
                        results[f"{backend}_{key}_{label}rows_per_s"] = round(rows / seconds)
                        results[f"{backend}_{key}_{label}peak_mb"] = round(kib / 1024, 1)
                    if args.old is not None:
                        new, old = (results[f"{backend}_{key}_{p}rows_per_s"] for p in ("", "old_"))
                        results[f"{backend}_{key}_speedup"] = round(new / old, 2)
                        new, old = (results[f"{backend}_{key}_{p}peak_mb"] for p in ("", "old_"))
                        results[f"{backend}_{key}_memory_ratio"] = round(old / new, 2)
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())
    results["load_average"] = round(os.getloadavg()[0], 2)
    results["at"] = time.strftime("%Y-%m-%d %H:%M")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
