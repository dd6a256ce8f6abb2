"""When Pilot may read the app: after every key it sends, and in every `pause()`.

Textual's Pilot decides that an app has finished handling a key by sleeping in 20 ms slices until
the process used almost no CPU during one: at least 20 ms per pause and 40 ms per key, with
nothing to do in most of it (run alone, a UI test spent about half its time asleep).

The wait here sleeps in 5 ms slices, with the same idle share (under 5% CPU in the slice). And a
screen with a layout, scroll or repaint still to do is drawn at once, as Pilot's `pause()` does
after its wait, then given one more slice: its refresh timer would do it up to a frame (1/60 s)
later, after a 5 ms wait had ended, and a snapshot caught a scrollbar drawn for the log's size
before the rating prompt shrank it. Once only: a spinner asks for a frame every few, and would
hold the wait to its limit. A caller that asks for a minimum wait (`wait_for_idle()` with no
argument) keeps Textual's 20 ms.
"""

from __future__ import annotations

import asyncio
from time import monotonic, process_time
from typing import TYPE_CHECKING

import textual._wait
import textual.app
import textual.pilot
from textual._context import active_app

if TYPE_CHECKING:
    from textual.screen import Screen

SLICE = 0.005
FRAME = 0.02  # Textual's slice, kept as the least wait where a caller asks for one.
IDLE_CPU = SLICE / 20  # The share Textual uses: under 5% of the slice.


def _frame_pending(screen: Screen[object]) -> bool:
    """Whether the screen has a layout, scroll or repaint to do, or callbacks waiting for one:
    its refresh timer would do them up to a frame (1/60 s) later."""
    return bool(
        screen._layout_required
        or screen._scroll_required
        or screen._repaint_required
        or screen._dirty_widgets
        or screen._callbacks
    )


async def wait_for_idle(min_sleep: float = FRAME, max_sleep: float = 1.0) -> None:
    """Textual's `wait_for_idle`, in finer slices, drawing a frame the screen has pending."""
    app = active_app.get(None)
    drawn = False
    start = monotonic()
    while True:
        cpu = process_time()
        await asyncio.sleep(SLICE)
        used = process_time() - cpu
        elapsed = monotonic() - start
        if elapsed >= max_sleep:
            return
        if elapsed <= min_sleep or used >= IDLE_CPU:
            continue
        if app is None:
            return
        if not drawn and _frame_pending(app.screen):
            drawn = True
            app.screen._on_timer_update()  # Then a slice for what the frame set off.
            continue
        return


def install() -> None:
    """Replace Textual's wait where Pilot and the app's key sender call it (each imported the
    name, so each module's binding is replaced). Textual is pinned, so these names hold."""
    for module in (textual._wait, textual.app, textual.pilot):
        assert callable(getattr(module, "wait_for_idle", None)), module.__name__
        module.wait_for_idle = wait_for_idle  # type: ignore[attr-defined]
