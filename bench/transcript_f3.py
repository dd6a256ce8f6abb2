"""F3 in the agent console on a 5,000-message conversation: each press shows the 100
messages before those shown, and should cost the same however many are shown. Headless, 120x40,
the conversation written through the desk (ask, claim, reply) on SQLite or PostgreSQL. For F3
pressed with 100, 1,000 and 3,000 messages shown (`_at_N`), medians over the runs:

- `f3_ms_at_N`: the key until the page is written and drawn (Pilot's own turns included).
- `f3_cpu_ms_at_N`: the process's CPU time over the same span (less moved by the waits).
- `f3_stall_ms_at_N`: the longest the event loop was late for a 10 ms timer during the press:
  what a person sees as a frozen screen.
- `f3_ratio_at_N`, `f3_cpu_ratio_at_N`, `f3_stall_ratio_at_N`: each ÷ the first press's (at 100),
  in the same run.
- `f3_new_lines_at_N`: the transcript's lines the press rendered (not the same lines as before
  it); the page it adds is ~350 of them.
- `f3_page_read_ms_at_N`: the desk reading that page on a connection of its own (the store's
  part, its floor).
- `reply_ms_at_N`, `reply_stall_ms_at_N`: a reply sent with 100 shown (before any F3) and with
  3,100 (after them), until it is drawn at the end.

    python bench/transcript_f3.py [--runs N] [--backend sqlite|postgres] [--messages N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.agent_console import StallMonitor  # noqa: E402
from bench.app import long_conversation  # noqa: E402
from bench.common import machine, median  # noqa: E402
from chatbot.assembly import open_service  # noqa: E402
from chatbot.config import load_settings  # noqa: E402
from chatbot.desk.service import DeskService  # noqa: E402

MESSAGES = 5_000
SIZE = (120, 40)
POINTS = (100, 1_000, 3_000)
"""Messages shown when F3 is pressed."""


async def _one_run(db: str, conversation: int, run: int) -> dict[str, float]:
    from chatbot.tui import create_app
    from chatbot.tui.widgets.transcript import PAGE, Transcript

    settings = load_settings(store={"db": db})
    app = create_app(settings, mode="agent", agent="agent", bot=False)
    other = open_service(settings)
    figures: dict[str, float] = {}
    try:
        async with app.run_test(size=SIZE) as pilot:
            await app.services.live.wait_ready()  # Built after the first screen: not timed.
            view = await app.open_conversation(conversation)
            transcript = view.query_one(Transcript)
            while not (transcript.lines and view.loaded.is_set()):
                await pilot.pause()
            await pilot.pause(0.2)

            async def reply(shown: int) -> None:
                text = f"Reply {run}-{shown}: the dock is free now."
                view.reply_input.value = text
                await pilot.pause()
                monitor, started = StallMonitor(), time.perf_counter()
                monitor.start()
                await pilot.press("enter")
                while not any(line.text.strip() == text for line in transcript.lines[-3:]):
                    await pilot.pause(0.001)
                await pilot.pause()
                figures[f"reply_ms_at_{shown}"] = (time.perf_counter() - started) * 1e3
                figures[f"reply_stall_ms_at_{shown}"] = monitor.stop() * 1e3

            await reply(PAGE)
            view.transcript.focus()
            await pilot.pause()
            shown = PAGE
            while shown <= max(POINTS):
                first = transcript.first_id
                assert first is not None and transcript.hidden
                read_started = time.perf_counter()
                other.page(conversation, before_id=first, limit=PAGE)
                page_read = time.perf_counter() - read_started
                before = transcript.lines[:]  # Kept alive: their ids stay theirs.
                ids = {id(line) for line in before}
                monitor, started, cpu = StallMonitor(), time.perf_counter(), time.process_time()
                monitor.start()
                await pilot.press("f3")
                while transcript.first_id == first:  # (`hidden` stays 1,000 over 1,000.)
                    await pilot.pause(0.001)
                await pilot.pause()
                took, stall = time.perf_counter() - started, monitor.stop()
                cpu = time.process_time() - cpu
                if shown in POINTS:
                    figures[f"f3_ms_at_{shown}"] = took * 1e3
                    figures[f"f3_cpu_ms_at_{shown}"] = cpu * 1e3
                    figures[f"f3_stall_ms_at_{shown}"] = stall * 1e3
                    new = sum(1 for line in transcript.lines if id(line) not in ids)
                    figures[f"f3_new_lines_at_{shown}"] = new
                    figures[f"f3_page_read_ms_at_{shown}"] = page_read * 1e3
                shown += PAGE
            view.reply_input.focus()
            await reply(shown)
    finally:
        other.close()
    for shown in POINTS:
        figures[f"f3_ratio_at_{shown}"] = figures[f"f3_ms_at_{shown}"] / figures["f3_ms_at_100"]
        figures[f"f3_cpu_ratio_at_{shown}"] = (
            figures[f"f3_cpu_ms_at_{shown}"] / figures["f3_cpu_ms_at_100"]
        )
        figures[f"f3_stall_ratio_at_{shown}"] = (
            figures[f"f3_stall_ms_at_{shown}"] / figures["f3_stall_ms_at_100"]
        )
    return figures


@contextmanager
def database(backend: str, folder: Path) -> Iterator[str]:
    if backend == "sqlite":
        yield str(folder / "helpdesk.sqlite3")
        return
    from bench.postgres import fresh_database

    with fresh_database() as url:
        yield url


def measure(runs: int, backend: str, messages: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        # No user config, and the app's drafts and data in the temporary folder.
        os.environ["HELPDESK_CONFIG"] = str(folder / "no-config.toml")
        for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            os.environ[name] = str(folder / name.lower())
        with database(backend, folder) as db:
            desk: DeskService = open_service(load_settings(store={"db": db}))
            try:
                started = time.perf_counter()
                conversation = long_conversation(desk, messages)
                built = time.perf_counter() - started
            finally:
                desk.close()
            results = [asyncio.run(_one_run(db, conversation, run)) for run in range(runs)]
    figures: dict[str, object] = {
        "backend": backend,
        "messages": messages,
        "runs": runs,
        "build_conversation_s": round(built, 1),
    }
    for key in results[0]:
        value = median([result[key] for result in results])
        figures[key] = round(value, 3 if "ratio" in key else 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--messages", type=int, default=MESSAGES)
    args = parser.parse_args()
    figures = measure(args.runs, args.backend, args.messages)
    print(json.dumps({"machine": machine(), **figures}, indent=2))


if __name__ == "__main__":
    main()
