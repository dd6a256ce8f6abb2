"""App benchmarks: process start to the first screen, and opening a 1,000-message conversation in
the agent console. Both use the app's public entry points (`create_app`, `open_conversation`),
headless, on the shipped knowledge base with recorded answers.

    python bench/app.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, median  # noqa: E402
from chatbot.assembly import open_service  # noqa: E402
from chatbot.config import load_settings  # noqa: E402
from chatbot.desk.service import DeskService  # noqa: E402

# Runs in a fresh interpreter: builds the app as `helpdesk` does and prints the wall-clock time
# once the first screen is mounted, then exits. Polling each loop turn costs well under 1 ms.
STARTUP_SCRIPT = """
import gc
gc.disable()  # As `helpdesk` does until its first screen (chatbot/cli/app.py).
import asyncio, time
from chatbot.cli.app import build_app
from chatbot.cli.main import build_parser
from textual.widgets import Input

# `helpdesk` with no arguments: its parser and its app (the settings loaded after the first screen).
app = build_app(build_parser("").parse_args([]))

async def first_screen(pilot):
    # A screen a person can use: drawn, with the focus in a text box that takes typing.
    while not (pilot.app.screen.is_mounted and isinstance(pilot.app.focused, Input)):
        await asyncio.sleep(0)
    first = time.time()
    # Then the whole screen: the settings loaded, the desk open, the real panels in place.
    # (Polled every 10 ms, not each loop turn: the panels come after a refresh, and an app
    # never idle never refreshes; polling more often slows the thread loading them.)
    while not pilot.app.screen.query("ChatPanel"):
        await asyncio.sleep(0.01)
    print(first, type(pilot.app.screen).__name__, time.time(), flush=True)
    pilot.app.exit()

app.run(headless=True, auto_pilot=first_screen)
"""

# The floor (issue 13): the smallest Textual app (a Static, an Input and a Footer, as in
# bench/web.py), started, timed and stopped exactly the same way.
BARE_SCRIPT = """
import asyncio, time
from textual.app import App
from textual.widgets import Footer, Input, Static

class Bare(App):
    def compose(self):
        yield Static("Help desk")
        yield Input()
        yield Footer()

async def first_screen(pilot):
    # A screen a person can use: drawn, with the focus in a text box that takes typing.
    while not (pilot.app.screen.is_mounted and isinstance(pilot.app.focused, Input)):
        await asyncio.sleep(0)
    print(time.time(), type(pilot.app.screen).__name__, flush=True)
    pilot.app.exit()

Bare().run(headless=True, auto_pilot=first_screen)
"""


def isolated_environment(directory: Path) -> dict[str, str]:
    """The caller's environment with the user's config and data shut out."""
    env = dict(os.environ)
    for name in ("HELPDESK_KB", "VALEN_BASE_URL", "VALEN_API_KEY", "VALEN_CACHE", "VALEN_REPLAY"):
        env.pop(name, None)
    env["HELPDESK_CONFIG"] = str(directory / "no-config.toml")
    env["HELPDESK_DB"] = str(directory / "helpdesk.sqlite3")
    env["XDG_CONFIG_HOME"] = str(directory / "config")
    env["XDG_DATA_HOME"] = str(directory / "data")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # Timed as installed: pip writes the bytecode of what it installs, as it did for Textual and
    # the floor's other libraries. With PYTHONDONTWRITEBYTECODE set (as in some shells and CI),
    # every timed run of ours compiled each of our modules from source (~50 ms) and the floor's
    # none; the unmeasured first run writes the cache instead.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def startup_once(env: dict[str, str], script: str = STARTUP_SCRIPT) -> float:
    """Seconds from starting `python` to the app's first screen being mounted."""
    return startup_times(env, script)[0]


def startup_times(env: dict[str, str], script: str = STARTUP_SCRIPT) -> list[float]:
    """Seconds from starting `python` to each moment the script printed: the first screen, and
    (ours) the whole screen with its panels."""
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"the app did not start: {done.stderr.strip()[-2000:]}")
    stamps = done.stdout.split()
    return [float(stamps[0]) - started] + [float(stamp) - started for stamp in stamps[2:]]


def measure_startup(quick: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as directory:
        env = isolated_environment(Path(directory))
        startup_once(env)  # Creates the database and warms the OS file cache, like a second run.
        startup_once(env, BARE_SCRIPT)
        # The two take turns, and the ratio is taken pair by pair, so a change in the machine's
        # load during the run touches both sides of each ratio alike.
        runs = [
            (startup_times(env), startup_once(env, BARE_SCRIPT)) for _ in range(3 if quick else 9)
        ]
    pairs = [(ours[0], bare) for ours, bare in runs]
    return {
        "startup_s": round(median([ours for ours, _ in pairs]), 3),
        # Not a goal, shown so the first screen's figure is read honestly: the chat's shell
        # takes typing at once, and the panels (suggestions, the queue) are in place this late.
        "startup_panels_s": round(median([ours[1] for ours, _ in runs]), 3),
        "startup_floor_s": round(median([bare for _, bare in pairs]), 3),
        "startup_ratio": round(median([ours / bare for ours, bare in pairs]), 2),
    }


def long_conversation(desk: DeskService, entries: int) -> int:
    """A claimed conversation `entries` long: the escalation, the claim, questions, replies."""
    conversation = desk.start_conversation().id
    desk.talk_to_person(conversation)
    desk.ask(conversation, "My bike will not unlock at the station.")
    desk.claim(conversation, agent="agent")
    for count in range(len(desk.entries(conversation)), entries):
        if count % 2:
            desk.ask(conversation, f"Message {count}: it still says locked. " * 3)
        else:
            desk.reply(conversation, agent="agent", text=f"Reply {count}: try dock 4. " * 3)
    assert len(desk.entries(conversation)) == entries
    return conversation


async def _open_times(conversation: int, db: Path, runs: int) -> list[float]:
    from chatbot.config import load_settings
    from chatbot.tui import create_app
    from chatbot.tui.widgets.agent_console import AgentConsole
    from chatbot.tui.widgets.transcript import Transcript

    settings = load_settings(store={"db": db})
    app = create_app(settings, mode="agent", agent="agent")
    times: list[float] = []
    async with app.run_test(size=(160, 50)) as pilot:
        await app.services.live.wait_ready()  # Built after the first screen: not while timed.
        await pilot.pause()
        for _ in range(runs):
            started = time.perf_counter()
            view = await app.open_conversation(conversation)
            transcript = view.query_one(Transcript)
            # Opened means the transcript's lines are rendered, not just the widget mounted.
            while not transcript.lines:
                await pilot.pause()
            times.append(time.perf_counter() - started)
            await app.screen.query_one(AgentConsole).close_conversation()
            await pilot.pause()
    return times


def measure_open_conversation(quick: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as directory:
        os.environ["HELPDESK_CONFIG"] = str(Path(directory) / "no-config.toml")
        db = Path(directory) / "helpdesk.sqlite3"
        desk = open_service(load_settings(store={"db": db}))
        try:
            conversation = long_conversation(desk, 1000)
        finally:
            desk.close()
        times = asyncio.run(_open_times(conversation, db, 3 if quick else 9))
    return {"open_1000_message_conversation_s": round(median(times), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    results = {**measure_startup(args.quick), **measure_open_conversation(args.quick)}
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
