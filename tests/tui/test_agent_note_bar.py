"""Every row of an internal note in the agent's transcript begins with its bar, the rows a long
line wraps to as well: at 100 columns a note's wrapped second row lost the `▌` that marks what
only agents see, and read as part of the conversation."""

from __future__ import annotations

import pytest

from chatbot.desk.service import DeskService
from chatbot.tui.widgets.transcript import Transcript
from tests.tui.conftest import MakeApp
from tests.tui.helpers import screen_text, wait_until

NOTE = (
    "Refund approved by finance for the double charge on ride 4471; do not promise the customer "
    "a date before Friday, and check the ledger first."
)
AFTER = "Second paragraph: the dog owner has written three times already, be kind."


SCROLLBAR = " ▁▂▃▄▅▆▇█"
"""The transcript's scrollbar, drawn at the right of a row once the log overflows."""


def note_rows(rows: list[str]) -> list[str]:
    """The note's rows as drawn (heading first), without the scrollbar; the rows around it have
    no bar."""
    rows = [row.rstrip(SCROLLBAR) for row in rows]
    first = next(n for n, row in enumerate(rows) if "Note from ben" in row)
    end = rows.index("", first)
    assert not any("▌" in row for row in rows[:first] + rows[end:])
    return rows[first:end]


@pytest.mark.parametrize("size", [(100, 30), (80, 24)])
async def test_each_wrapped_row_of_a_note_keeps_its_bar(
    make_app: MakeApp, other: DeskService, size: tuple[int, int]
) -> None:
    conversation = other.start_conversation().id
    other.talk_to_person(conversation)
    other.ask(conversation, "My dog chewed the saddle. Who pays?")
    other.add_note(conversation, agent="ben", text=f"{NOTE}\n{AFTER}")
    other.ask(conversation, "Hello?")
    app = make_app("agent", bot=False)
    async with app.run_test(size=size) as pilot:
        view = await app.open_conversation(conversation)
        transcript = view.query_one(Transcript)
        await wait_until(pilot, lambda: "Hello?" in screen_text(app, transcript))
        note = note_rows(screen_text(app, transcript).splitlines())
        # Both lines wrap: a heading and more than two rows.
        assert len(note) > 3, note
        assert all(row.startswith("▌ ") for row in note), note
        assert " ".join(row.removeprefix("▌ ") for row in note[1:]) == f"{NOTE} {AFTER}"

        # Wrapped again to a new width, as the terminal is resized.
        await pilot.resize_terminal(50, size[1])
        await wait_until(pilot, lambda: len(note_rows(screen_text(app, transcript).splitlines()))
                         > len(note))  # fmt: skip
        narrower = note_rows(screen_text(app, transcript).splitlines())
        assert all(row.startswith("▌ ") for row in narrower), narrower
