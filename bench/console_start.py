"""The agent console's start on PostgreSQL beside SQLite: `helpdesk agent` from its
process start until its first queue is drawn (the queue table has its rows on screen), on one data
set built the same way on each backend by `bench/pg_scale.py` (of each 60 conversations, 10 wait
in the queue and 50 are resolved), in a temporary PostgreSQL database (dropped at the end) and a
temporary SQLite file.

Each run is a new process, as a person's `helpdesk agent --agent ana` is: the command's own app
(`chatbot.cli.app.build_app`, with its bot worker), headless at a fixed size, under a home of its
own. Printed: the median over `--runs` on each backend and their ratio, and beside them how long
the process took to its first screen (the part no database is read in). Before and after a change
cannot be in one run: run it on each tree, `--code DIR` naming the other one.

    python bench/console_start.py [CONVERSATIONS] [--runs 5] [--code DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from types import ModuleType
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
SIZE = (120, 40)

# The measured process: `helpdesk agent` as the command builds it, timed from the interpreter's
# start (the parent passes its clock reading; both use CLOCK_MONOTONIC) until the queue has rows
# laid out, as `tests/tui/helpers.queue_rows` reads them.
CHILD = """
import time
started = time.monotonic()
import gc, sys
sys.path.insert(0, sys.argv[1])
gc.disable()  # As `helpdesk` does until its first screen (chatbot/cli/app.py).
import asyncio
from chatbot.cli.app import build_app
from chatbot.cli.main import build_parser
from chatbot.tui.widgets.queue_list import QueueTable

args = build_parser("agent").parse_args(["agent", "--db", sys.argv[2], "--agent", "ana"])
app = build_app(args, keep_drafts=True)

def rows():
    tables = app.screen.query(QueueTable)
    if not tables or not tables.first().scrollable_content_region.width:
        return 0
    return tables.first().row_count

async def first_queue(pilot):
    first_screen = time.monotonic()
    while not rows():
        await asyncio.sleep(0.005)
    print(float(sys.argv[3]), started, first_screen, time.monotonic(), rows(), flush=True)
    app.exit()

app.run(headless=True, size=(int(sys.argv[4]), int(sys.argv[5])), auto_pilot=first_queue)
if app.startup_error:
    raise SystemExit(app.startup_error)
"""


def _code_dir(argv: list[str]) -> Path:
    for n, arg in enumerate(argv):
        if arg == "--code" and n + 1 < len(argv):
            return Path(argv[n + 1]).resolve()
        if arg.startswith("--code="):
            return Path(arg.split("=", 1)[1]).resolve()
    return ROOT


def _pg_scale() -> ModuleType:
    """`bench/pg_scale.py` (this tree's), whose builder makes the data set; it imports the
    `chatbot` of `--code` (it reads the same option)."""
    spec = importlib.util.spec_from_file_location("pg_scale", ROOT / "bench" / "pg_scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def once(code: Path, db: str, home: Path) -> tuple[float, float]:
    """One process: seconds to its first screen, and to its first queue drawn."""
    import time

    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
    }
    launched = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(code), db, repr(launched), *map(str, SIZE)],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=120,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode or not lines:
        raise SystemExit(f"the console did not start on {db}:\n{done.stderr[-2000:]}")
    launched_at, _started, first_screen, first_queue, rows = lines[-1].split()
    if int(rows) == 0:
        raise SystemExit("the queue was drawn empty")
    return float(first_screen) - float(launched_at), float(first_queue) - float(launched_at)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("conversations", nargs="?", type=int, default=60_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--code", metavar="DIR", help="measure the `chatbot` of this tree")
    args = parser.parse_args()
    code = _code_dir(sys.argv)
    pg_scale = _pg_scale()
    import psycopg

    print(f"code: {code / 'chatbot'}")
    name = f"helper_pgqueue_start_{uuid.uuid4().hex[:8]}"
    admin = psycopg.connect(pg_scale.ADMIN_URL, autocommit=True)
    admin.execute(f'CREATE DATABASE "{name}"'.encode())
    parts = urlsplit(pg_scale.ADMIN_URL)
    url = urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = str(Path(folder) / "scale.sqlite3")
            _, count = pg_scale.build("postgresql", url, args.conversations)
            pg_scale.build("sqlite", path, args.conversations)
            print(f"{count:,} conversations ({count // 6:,} waiting, the rest resolved);"
                  f" median of {args.runs} runs, each a new process")  # fmt: skip
            times: dict[str, list[tuple[float, float]]] = {"postgresql": [], "sqlite": []}
            for run in range(args.runs):  # Taken in turn, so a busy moment hits both alike.
                for kind, db in (("postgresql", url), ("sqlite", path)):
                    home = Path(folder) / f"home-{kind}-{run}"
                    home.mkdir()
                    times[kind].append(once(code, db, home))
            print(f"{'':<20} {'PostgreSQL':>11} {'SQLite':>9} {'PG/SQLite':>10}")
            for n, what in enumerate(("first screen", "first queue drawn")):
                pg = statistics.median(t[n] for t in times["postgresql"])
                sq = statistics.median(t[n] for t in times["sqlite"])
                print(f"{what:<20} {pg:>9.3f} s {sq:>7.3f} s {pg / sq:>9.2f}x")
            for kind in times:
                runs = ", ".join(f"{t[1]:.2f}" for t in times[kind])
                print(f"  {kind} runs (first queue): {runs}")
    finally:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
        )
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"'.encode())
        admin.close()


if __name__ == "__main__":
    main()
