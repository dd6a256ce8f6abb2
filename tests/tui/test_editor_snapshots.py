"""SVG snapshots of the knowledge-base editor at the app tests' fixed size.

No history and no content gaps are shown: their times are local-time renderings, which differ
between machines. Re-record with `make snapshot-update` after reviewing the report.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.pilot import Pilot

from chatbot.config import Settings
from chatbot.tui import create_app
from tests.tui.conftest import Q1, SIZE, FrozenClock, editor_settings

SnapCompare = Callable[..., bool]


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


def test_editor_with_a_passage_open(
    snap_compare: SnapCompare, settings: Settings, clock: FrozenClock
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        await pilot.press("f2")
        await pilot.app.workers.wait_for_complete()  # The passage list is read in a thread.
        await pilot.pause()

    app = create_app(settings, mode="agent", clock=clock, agent="ana", timings=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_editor_try_it_on_seed_question_one(
    snap_compare: SnapCompare, settings: Settings, clock: FrozenClock
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        await pilot.press("f2")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("ctrl+t")
        pilot.app.post_message(events.Paste(Q1))
        await pilot.pause()
        await pilot.press("enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    app = create_app(settings, mode="agent", clock=clock, agent="ana", timings=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
