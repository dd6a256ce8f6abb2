"""The agent's passage picker (Ctrl+O) against the knowledge base's size, beside the editor's
passage search (F2, its search box) over the same passages in the same run: the editor's list is
the known way here to list and search thousands of passages (its opening is the whole editor's,
form and tabs included, so only the keys compare like for like).

The agent console (headless, 120x40, no bot) on a copy of the shipped knowledge base grown to 10,
1,000 and 3,000 passages (`bench/web_kb_size.py`'s made-up words, ~1.5 KB each), one escalated
conversation claimed; then per size, medians over the runs:

- `picker_open_ms_at_N` (and `_cpu_`): Ctrl+O until the picker is up and drawn.
- `picker_key_ms_at_N` (and `_cpu_`, `_max_`, `_max_cpu_`): one key of "passage 42" typed into
  the filter box until the list is narrowed and drawn; the median over the ten keys (`_max_`: the
  slowest). The generated passages are each titled "Bench passage N": the first eight keys match
  all of them (nothing narrows: every row was measured again at each), the last two a few dozen
  (rows never drawn before).
- `editor_open_ms_at_N`, `editor_key_ms_at_N`, ...: the same for F2's editor and its search box.
- `picker_open_ratio_at_N`, `picker_key_ratio_at_N`: the picker's ÷ the editor's, same run.

    python bench/passage_picker.py [--runs N] [--sizes 10,1000,3000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.pilot import Pilot

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine, median  # noqa: E402

SIZES = (10, 1_000, 3_000)
SIZE = (120, 40)
QUERY = "passage 42"
"""Typed a key at a time: "passage" matches every generated passage, "passage 42" a few dozen."""
SHIPPED = 10


def seeded(db: str, kb: Path) -> int:
    """A conversation the bot escalated, two of its candidates judged and one not."""
    from chatbot.assembly import open_service
    from chatbot.config import load_settings
    from chatbot.engine.models import Candidate, Decision
    from chatbot.engine.policy import decide

    desk = open_service(load_settings(store={"db": db}, knowledge_base={"path": kb}))
    try:
        question = "Do I have to wear a helmet, and what if I lose it?"
        conversation = desk.ask(None, question).conversation.id
        [pending] = desk.lease("bot-1", limit=1, lease_s=60)
        retrieved = [
            Candidate(id="helmet", text="…", bm25=6.0, probability=0.55),
            Candidate(id="damage-fee", text="…", bm25=4.0, probability=0.41),
            Candidate(id="late-return", text="…", bm25=3.0, error="replay-miss",
                      error_kind="replay-miss"),
        ]  # fmt: skip
        ranked, answer, reason = decide(retrieved)
        decision = Decision(question=question, answer=answer, reason=reason, candidates=ranked,
                            threshold=0.7)  # fmt: skip
        desk.record_decision("bot-1", pending, decision)
        return conversation
    finally:
        desk.close()


async def until(pilot: Pilot[None], condition: Callable[[], bool], timeout: float = 60.0) -> None:
    """Let the app run until `condition` holds (polled every millisecond)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the app never got there")
        await pilot.pause(0.001)


def key_name(character: str) -> str:
    return "space" if character == " " else character


async def timed(action: Awaitable[None]) -> tuple[float, float]:
    """Wall and CPU milliseconds `action` took."""
    started, cpu = time.perf_counter(), time.process_time()
    await action
    return (time.perf_counter() - started) * 1e3, (time.process_time() - cpu) * 1e3


async def _one_run(db: str, kb: Path, conversation: int) -> dict[str, float]:
    from textual.widgets import Input, OptionList

    from chatbot.config import load_settings
    from chatbot.tui import create_app
    from chatbot.tui.screens.editor import EditorScreen
    from chatbot.tui.screens.passage_picker import PassagePicker
    from tests.conftest import SHIPPED_CACHE

    settings = load_settings(
        store={"db": db},
        knowledge_base={"path": kb},
        valen={"cache": SHIPPED_CACHE, "replay": "on"},
    )
    app = create_app(settings, mode="agent", agent="agent", bot=False, timings=False)
    figures: dict[str, float] = {}
    async with app.run_test(size=SIZE) as pilot:
        await app.services.live.wait_ready()  # Built after the first screen: not timed.
        view = await app.open_conversation(conversation)
        await until(pilot, lambda: view.conversation is not None)
        await pilot.press("ctrl+l")
        await until(pilot, lambda: view.is_mine)
        await pilot.pause(0.2)

        async def open_picker() -> None:
            await pilot.press("ctrl+o")
            await until(pilot, lambda: isinstance(app.screen, PassagePicker))
            await until(
                pilot, lambda: app.screen.query_one("#passages", OptionList).option_count > 0
            )
            await pilot.pause()

        figures["picker_open_ms"], figures["picker_open_cpu_ms"] = await timed(open_picker())
        picker = app.screen
        assert isinstance(picker, PassagePicker)
        keys: list[tuple[float, float]] = []
        for typed in range(1, len(QUERY) + 1):

            async def key(words: str = QUERY[:typed]) -> None:
                await pilot.press(key_name(words[-1]))
                await until(pilot, lambda: picker.words == words)
                await pilot.pause()

            keys.append(await timed(key()))
        assert any(item.passage.title == "Bench passage 42" for item in picker.shown) or (
            len(picker.items) == SHIPPED
        ), "typing lost it"
        figures["picker_key_ms"] = median([wall for wall, _ in keys])
        figures["picker_key_cpu_ms"] = median([cpu for _, cpu in keys])
        figures["picker_key_max_ms"] = max(wall for wall, _ in keys)
        figures["picker_key_max_cpu_ms"] = max(cpu for _, cpu in keys)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PassagePicker))
        await pilot.pause(0.2)

        async def open_editor() -> None:
            await pilot.press("f2")
            await until(pilot, lambda: isinstance(app.screen, EditorScreen))
            await until(pilot, lambda: app.screen.query_one("#passage-options", OptionList)
                        .option_count > 1)  # fmt: skip
            await pilot.pause()

        figures["editor_open_ms"], figures["editor_open_cpu_ms"] = await timed(open_editor())
        search = app.screen.query_one("#passage-search", Input)
        await until(pilot, lambda: app.focused is search)
        await pilot.pause(0.2)
        keys = []
        for typed in range(1, len(QUERY) + 1):

            async def key(words: str = QUERY[:typed]) -> None:
                await pilot.press(key_name(words[-1]))
                await until(pilot, lambda: search.value == words)
                await pilot.pause()

            keys.append(await timed(key()))
        figures["editor_key_ms"] = median([wall for wall, _ in keys])
        figures["editor_key_cpu_ms"] = median([cpu for _, cpu in keys])
        figures["editor_key_max_ms"] = max(wall for wall, _ in keys)
        figures["editor_key_max_cpu_ms"] = max(cpu for _, cpu in keys)
    return figures


def measure(runs: int, sizes: tuple[int, ...]) -> dict[str, object]:
    from bench.web_kb_size import make_knowledge_base

    figures: dict[str, object] = {"runs": runs, "query": QUERY}
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        # No user config, and the app's drafts and data in the temporary folder.
        os.environ["HELPDESK_CONFIG"] = str(folder / "no-config.toml")
        for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            os.environ[name] = str(folder / name.lower())
        for size in sizes:
            here = folder / f"at-{size}"
            here.mkdir()
            kb = make_knowledge_base(here, max(size - SHIPPED, 0))
            db = str(here / "helpdesk.sqlite3")
            conversation = seeded(db, kb)
            results = [asyncio.run(_one_run(db, kb, conversation)) for _ in range(runs)]
            for key in results[0]:
                figures[f"{key}_at_{size}"] = round(median([r[key] for r in results]), 1)
            for what in ("open", "key"):
                # Each run's picker ÷ the same run's editor, then their median.
                ratios = [r[f"picker_{what}_ms"] / r[f"editor_{what}_ms"] for r in results]
                figures[f"picker_{what}_ratio_at_{size}"] = round(median(ratios), 2)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default=",".join(str(size) for size in SIZES))
    args = parser.parse_args()
    sizes = tuple(int(size) for size in args.sizes.split(","))
    print(json.dumps({"machine": machine(), **measure(args.runs, sizes)}, indent=2))


if __name__ == "__main__":
    main()
