"""Keys typed on the queue in one burst (`tmux send-keys C-u "helmet strap"`): the letters open
a search with them, and the keys that edit text (Ctrl+U, Backspace, Ctrl+W, …) act on the
search's words in the order they were typed; before any letter, with no words to edit, they do
nothing. None of them eats a letter typed after it."""

from __future__ import annotations

import pytest

from chatbot.desk.service import DeskService
from chatbot.tui.screens.find import FindScreen
from chatbot.tui.widgets.queue_list import QueueTable
from tests.tui.conftest import MakeApp
from tests.tui.desk_helpers import waiting
from tests.tui.helpers import burst, queue_rows, wait_until


@pytest.mark.parametrize(
    ("keys", "words"),
    [
        (("ctrl+u", *"helmet strap"), "helmet strap"),
        (("backspace", "ctrl+w", *"Can I"), "Can I"),
        ((*"helmez", "backspace", *"t oops", "ctrl+w", *"strap"), "helmet strap"),
        ((*"gone", "ctrl+u", *"helmet"), "helmet"),
    ],
    ids=["ctrl-u-first", "editing-keys-first", "backspace-and-ctrl-w-between", "ctrl-u-between"],
)
@pytest.mark.parametrize("mode", ["agent", "all"])
async def test_editing_keys_typed_on_the_queue_in_a_burst_act_in_turn(
    make_app: MakeApp, other: DeskService, mode: str, keys: tuple[str, ...], words: str
) -> None:
    """Left to their bindings, the editing keys ran once they had passed every widget up to the
    app, where the focus was by then: the search box the first letter had opened. Ctrl+U typed
    before `helmet strap` took out the `h`, and a Backspace typed between letters took out a
    later one."""
    app = make_app(mode, bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        waiting(other)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        table = app.screen.query_one(QueueTable)
        table.focus()
        await wait_until(pilot, lambda: app.focused is table)
        await burst(pilot, *keys)
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        search = app.screen
        assert isinstance(search, FindScreen)
        field = search.query_one("#find-input")
        await wait_until(pilot, lambda: app.focused is field)
        await pilot.pause()
        assert field.value == words  # type: ignore[attr-defined]
