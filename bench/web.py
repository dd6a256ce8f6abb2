"""Browser-session benchmarks for `helpdesk serve`: page load to the app's first paint, and the
memory one idle browser session costs, against the floor of the same transport (textual-serve's
own server running the smallest Textual app, an Input and a Footer), measured in the same run.
From the memory figure: how many idle sessions fit on a 24 GiB host next to the server, its
zygote and one bot worker, with 2 GiB kept back for the OS.

    python bench/web.py [--quick]

Memory is PSS (proportional set size: shared pages split between the processes sharing them),
summed over each session's process tree, read once every session has painted and its PSS has
stopped moving.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, median  # noqa: E402

HOST_BYTES = 24 * 1024**3
RESERVED_BYTES = 2 * 1024**3
"""Kept back from the host for the OS, the page cache and SQLite: not for sessions."""
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
]

FLOOR_APP = """
from textual.app import App
from textual.widgets import Footer, Input, Static

class Floor(App[None]):
    def compose(self):
        yield Static("floor")
        yield Input(placeholder="Type your question, press Enter")
        yield Footer()

Floor().run()
"""

FLOOR_SERVER = """
import sys
from textual_serve.server import Server
Server(sys.argv[1], host="127.0.0.1", port=int(sys.argv[2])).serve()
"""


def environment(directory: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HELPDESK_", "VALEN_"))}
    env |= {
        "HOME": str(directory),
        "HELPDESK_CONFIG": str(directory / "no-config.toml"),
        "XDG_CONFIG_HOME": str(directory / "config"),
        "XDG_DATA_HOME": str(directory / "data"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "PYTHONUNBUFFERED": "1",
    }
    return env


def wait_until(condition: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def answers(url: str) -> bool:
    import httpx

    try:
        return httpx.get(url, timeout=2).status_code < 500
    except httpx.HTTPError:
        return False


def tree(pid: int) -> list[int]:
    """`pid` and its live descendants."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    found, frontier = [pid], [pid]
    while frontier:
        parent = frontier.pop()
        kids = [child for child, ppid in parents.items() if ppid == parent]
        found += kids
        frontier += kids
    return found


def pss_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def rss_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def settled_pss(roots: list[int], timeout: float = 60.0) -> list[int]:
    """Each root's tree PSS once two readings half a second apart differ by under 1%."""
    deadline = time.monotonic() + timeout
    previous = [pss_bytes(tree(pid)) for pid in roots]
    while True:
        time.sleep(0.5)
        current = [pss_bytes(tree(pid)) for pid in roots]
        if all(abs(a - b) <= 0.01 * max(a, 1) for a, b in zip(previous, current, strict=True)):
            return current
        if time.monotonic() > deadline:
            return current
        previous = current


def session_roots(server_pid: int, marker: str) -> list[int]:
    """The top process of each browser session under the server."""
    roots = []
    for pid in tree(server_pid)[1:]:
        try:
            line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if marker in line and ppid == server_pid:
            roots.append(pid)
    return roots


def descendants_running(roots: list[int], marker: str) -> list[int]:
    """The processes under `roots` (not themselves) whose command line holds `marker`."""
    found = []
    for pid in (pid for root in roots for pid in tree(root)[1:]):
        try:
            line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in line:
            found.append(pid)
    return found


def browse(
    url: str, server_pid: int, roots: Callable[[], list[int]], sessions: int
) -> dict[str, float]:
    """Open `sessions` browser sessions one after another; first-paint times and idle PSS."""
    from playwright.sync_api import sync_playwright

    from tests.web.harness import chromium as find_chromium

    chromium = find_chromium()  # The tests' browser: chromium-headless-shell, as .ci/run installs.
    paints: list[float] = []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        contexts = []
        try:
            for _ in range(sessions):
                context = browser.new_context(viewport={"width": 1100, "height": 700})
                contexts.append(context)
                page = context.new_page()
                started = time.perf_counter()
                page.goto(url)
                page.wait_for_selector("body.-first-byte", state="attached", timeout=120_000)
                paints.append(time.perf_counter() - started)
            wait_until(lambda: len(roots()) == sessions, 60, "every session's process")
            memory = settled_pss(roots())
            resident = [rss_bytes(tree(pid)) for pid in roots()]
            # Fixed costs: the server and, for ours, the zygote every session is forked from, the
            # process it starts to decide every session's suggested questions, and the bot
            # worker that answers every session's questions.
            fixed = session_roots(server_pid, "chatbot.web.zygote")
            fixed += descendants_running(fixed, "chatbot.engine.suggestions")
            fixed += session_roots(server_pid, "chatbot bot")
            server = pss_bytes([server_pid, *fixed])
        finally:
            for context in contexts:
                context.close()
            browser.close()
    return {
        "first_paint_s": median(paints),
        "session_pss_mb": median([m / 1e6 for m in memory]),
        "session_rss_mb": median([m / 1e6 for m in resident]),
        "server_pss_mb": server / 1e6,
    }


def measure_ours(directory: Path, sessions: int) -> dict[str, float]:
    from tests.conftest import SHIPPED_KB

    kb = directory / "kb"
    shutil.copytree(SHIPPED_KB, kb, ignore=shutil.ignore_patterns(".*"))
    argv = [sys.executable, "-m", "chatbot", "serve", "--port", "0", "--bots", "1"]
    argv += ["--db", str(directory / "helpdesk.sqlite3"), "--kb", str(kb)]
    with serving(argv, environment(directory)) as (process, url, roots):
        return browse(url + "/", process.pid, roots, sessions)


@contextmanager
def serving(
    argv: list[str], env: dict[str, str], cwd: Path | None = None
) -> Iterator[tuple[subprocess.Popen[str], str, Callable[[], list[int]]]]:
    """`helpdesk serve` run as `argv`: its process, its URL once /healthz answers, and the pids
    of the session processes it has said it started so far; stopped on leaving."""
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=cwd
    )
    lines: list[str] = []
    try:
        assert process.stdout is not None
        url = ""
        for line in process.stdout:
            if "listening on " in line:
                url = line.split("listening on ", 1)[1].strip()
                break
        if not url:
            raise RuntimeError("helpdesk serve did not start")
        threading.Thread(target=lambda: lines.extend(process.stdout or []), daemon=True).start()
        wait_until(lambda: answers(url + "/healthz"), 60, "helpdesk serve")

        def roots() -> list[int]:
            # "helpdesk serve: session N started (chat, conversation C, pid P)"
            started = [line for line in list(lines) if " started (" in line]
            return [int(line.rsplit("pid ", 1)[1].rstrip(")\n")) for line in started]

        yield process, url, roots
    finally:
        process.terminate()
        process.wait(60)


def measure_floor(directory: Path, sessions: int) -> dict[str, float]:
    app = directory / "floor_app.py"
    app.write_text(FLOOR_APP)
    port = free_port()
    command = f"{sys.executable} {app}"
    process = subprocess.Popen(
        [sys.executable, "-c", FLOOR_SERVER, command, str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment(directory),
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_until(lambda: answers(url), 60, "the floor server")
        return browse(url, process.pid, lambda: session_roots(process.pid, str(app)), sessions)
    finally:
        process.terminate()
        process.wait(60)


def measure(quick: bool) -> dict[str, float | int]:
    sessions = 3 if quick else 8
    with tempfile.TemporaryDirectory() as ours_dir, tempfile.TemporaryDirectory() as floor_dir:
        ours = measure_ours(Path(ours_dir), sessions)
        floor = measure_floor(Path(floor_dir), sessions)
    per_session = ours["session_pss_mb"] * 1e6
    room = HOST_BYTES - RESERVED_BYTES - ours["server_pss_mb"] * 1e6
    return {
        "web_sessions_measured": sessions,
        "web_first_paint_s": round(ours["first_paint_s"], 3),
        "web_first_paint_floor_s": round(floor["first_paint_s"], 3),
        "web_first_paint_ratio": round(ours["first_paint_s"] / floor["first_paint_s"], 3),
        "web_session_pss_mb": round(ours["session_pss_mb"], 1),
        "web_session_pss_floor_mb": round(floor["session_pss_mb"], 1),
        "web_session_pss_ratio": round(ours["session_pss_mb"] / floor["session_pss_mb"], 3),
        "web_session_rss_mb": round(ours["session_rss_mb"], 1),
        "web_server_pss_mb": round(ours["server_pss_mb"], 1),
        "web_server_pss_floor_mb": round(floor["server_pss_mb"], 1),
        "web_sessions_per_24gib_host": int(room // per_session),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(json.dumps(measure(args.quick), indent=2))


if __name__ == "__main__":
    main()
