"""Ctrl+F showed the first 110 cells of the message found: a match further in (a card's name at
the end of a long reply) was not on screen, nothing said why the conversation was found, and the
words' second line started at the left edge under the conversation's number. A hit now shows its
words from a little before the match, the match marked, every line indented under the number."""

from __future__ import annotations

from rich.console import Console

from chatbot.desk.service import DeskService
from chatbot.tui.screens.find import FindScreen, hit_line, hit_parts
from tests.tui.conftest import MakeApp
from tests.tui.desk_helpers import waiting
from tests.tui.helpers import screen_text, type_text, wait_until

LONG = (
    "Hello, this is Wang from support. We found that your order AB12345 was charged twice on "
    "7 December, 3.50 euros each time; the refund goes back within 3 to 5 working days to "
    "your Visa card. Write to us here if anything else comes up."
)


async def test_a_match_far_into_a_message_is_shown_marked_and_indented(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = waiting(other, LONG)
    app = make_app("agent", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        find = app.screen
        assert isinstance(find, FindScreen)
        await type_text(pilot, "visa")
        results = find.query_one("#find-results")
        # (A search of "v" alone finds it too, shown from its start: the one of "visa" follows.)
        await wait_until(pilot, lambda: "Visa card" in screen_text(app, results))
        rows = screen_text(app, results).splitlines()
        at = next(i for i, row in enumerate(rows) if f"#{conversation}" in row)
        words = [row for row in rows[at + 1 :] if row.strip()][:2]
        assert "Visa card" in " ".join(words), rows
        assert words[0].lstrip().startswith("…"), words  # From a little before the match.
        # Each line of the words sits under the number, indented as the first.
        indent = len(words[0]) - len(words[0].lstrip())
        assert indent >= 2 and all(len(w) - len(w.lstrip()) == indent for w in words), words

    heading, found = hit_parts(find.hits[0], query="VISA")
    marked = [found.plain[span.start : span.end] for span in found.spans if span.style == "reverse"]
    assert marked == ["Visa"]
    assert heading.plain.startswith(f"#{conversation}  ")
    assert hit_parts(find.hits[0], query="hello")[1].plain.startswith("Hello, this is Wang")


def test_a_number_searched_marks_it_in_the_words() -> None:
    """`#12345` finds the conversation, and the number in others' words: marked there."""
    from datetime import UTC, datetime

    from chatbot.desk.models import SearchHit, State

    when = datetime(2026, 1, 5, tzinfo=UTC)
    hit = SearchHit(conversation_id=3, state=State.WAITING, agent=None, entry_id=1,
                    updated_at=when, text="order AB12345 twice")  # fmt: skip
    found = hit_parts(hit, query="#12345")[1]
    assert [found.plain[s.start : s.end] for s in found.spans] == ["12345"]
    console = Console(width=40, record=True, color_system=None)
    console.print(hit_line(hit, query="#12345"))
    assert console.export_text().splitlines()[1].rstrip() == "  order AB12345 twice"


def test_a_number_is_marked_where_it_stands_alone() -> None:
    """`#12` marks the 12 the desk found it by, not the one inside "2012" before it."""
    from datetime import UTC, datetime

    from chatbot.desk.models import SearchHit, State

    when = datetime(2026, 1, 5, tzinfo=UTC)
    hit = SearchHit(conversation_id=3, state=State.WAITING, agent=None, entry_id=1,
                    updated_at=when, text="Since 2012: order 12, 120 km")  # fmt: skip
    found = hit_parts(hit, query="#12")[1]
    assert [(s.start, s.end) for s in found.spans] == [(18, 20)]
    assert found.plain[18:20] == "12"
