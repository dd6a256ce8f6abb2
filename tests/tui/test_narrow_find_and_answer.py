"""A tester's findings at 60x20:

- `helpdesk agent`, Ctrl+F: the results had two rows of a dialog with empty rows below them, so
  each hit showed its number and one line of its words (a long note's cut after "SECRETNOTE"),
  the words running up against the scrollbar. The dialog now takes the small screen and gives
  its rows to the results, the words a column clear of the scrollbar.
- `helpdesk`, the chat beside the queue: under a bot answer "Not helpful" was cut ("Helpful
  Not"), and the source's passage id was folded mid-word ("(card-charged-twic" then "e)"). The
  buttons now go one under the other where they do not fit side by side, and the id breaks only
  after its own hyphens."""

from __future__ import annotations

from textual.widgets import Button, OptionList

from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.find import FindScreen
from chatbot.tui.widgets.message_bubble import MessageBubble, id_kept_whole
from tests.tui.conftest import Q1, MakeApp
from tests.tui.desk_helpers import waiting
from tests.tui.helpers import ask, chat_panel_ready, screen_text, steady, type_text, wait_until

SMALL = (60, 20)
NOTE = (
    "SECRETNOTE refund approved, see https://billing.example.com/refunds/2026/12/07/"
    "ride-884213-second-charge-reversal-confirmed-by-finance"
)
"""A note long enough to wrap, with a link too long for a line: folded, it fills each line to
its last cell, up to the scrollbar when nothing keeps the two apart."""


async def test_find_at_60x20_shows_each_hits_words_clear_of_the_scrollbar(
    make_app: MakeApp, other: DeskService
) -> None:
    for _ in range(3):
        conversation = waiting(other)
        other.claim(conversation, agent="tom")
        other.add_note(conversation, agent="Tom", text=NOTE)
    app = make_app("agent", bot=False)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        find = app.screen
        await type_text(pilot, "secretnote")
        await wait_until(pilot, lambda: "3 found" in screen_text(app))
        results = find.query_one("#find-results", OptionList)
        await pilot.press("down")  # The list focused, its first hit highlighted.
        await wait_until(pilot, lambda: results.has_focus)
        await steady(pilot)
        rows = screen_text(app, results).splitlines()
        # The newest hit whole: its number, then its words on the lines under it, the note's
        # heading, the match and what follows it.
        assert rows[0].lstrip().startswith("#3 "), rows
        words = " ".join(row.strip() for row in rows[1:5])
        heading = "Note from Tom, for agents only: SECRETNOTE refund approved, see"
        assert words.startswith(heading), rows
        assert "https://billing.example.com/refunds" in words.replace(" ", ""), rows
        # The next hit's number below it: the dialog gives the results its rows.
        assert any(row.lstrip().startswith("#2 ") for row in rows[5:]), rows
        assert clear_of_the_scrollbar(app, results), rows
        # The status under the results is on screen.
        assert "3 found. Enter opens" in screen_text(app)
        # At 80x24 too, where the link's folded lines are in sight with the old margins.
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: results.size.width > 50)
        await steady(pilot)
        assert clear_of_the_scrollbar(app, results), screen_text(app, results)


def clear_of_the_scrollbar(app: HelpDeskApp, results: OptionList) -> bool:
    """Every line of words stops a column short of the scrollbar (the list's last two
    columns)."""
    assert results.show_vertical_scrollbar
    width = results.content_region.width
    rows = screen_text(app, results).splitlines()
    return all(len(row) < width - 2 or row[width - 3] == " " for row in rows)


async def test_an_answer_at_60x20_beside_the_queue_has_whole_buttons_and_source_id(
    make_app: MakeApp,
) -> None:
    app = make_app("all")
    async with app.run_test(size=SMALL) as pilot:
        panel = await chat_panel_ready(pilot)
        await ask(pilot, Q1)
        answer = panel.query(MessageBubble).last()
        await wait_until(pilot, lambda: bool(answer.query("#not-helpful")))
        await steady(pilot)
        # Each button inside the answer, its label whole on screen.
        inside = answer.content_region
        for button in answer.query(Button):
            assert inside.contains_region(button.region), (button.id, button.region, inside)
        shown = screen_text(app, answer).splitlines()
        assert any(row.strip() == "Helpful" for row in shown), shown
        assert any(row.strip() == "Not helpful" for row in shown), shown
        # The id breaks only after a hyphen of its own, never inside a word.
        drawn = screen_text(app, answer.query_one(".bubble-source")).splitlines()
        source = [row.strip() for row in drawn]
        at = next(i for i, row in enumerate(source) if row.startswith("(card"))
        assert "".join(source[at:]) == "(card-charged-twice)", source
        assert all(row.endswith("-") for row in source[at:-1]), source


def test_a_passage_id_wider_than_its_line_breaks_after_its_hyphens() -> None:
    line = "Source: Charged twice for one ride (card-charged-twice)"
    assert id_kept_whole(line, "card-charged-twice", 30) == line  # It fits a line of its own.
    assert id_kept_whole(line, "card-charged-twice", 18) == (
        "Source: Charged twice for one ride (card-charged-\ntwice)"
    )
    assert id_kept_whole(line, "card-charged-twice", 8) == (
        "Source: Charged twice for one ride (card-\ncharged-\ntwice)"
    )
    # After a Chinese label (a word of its own for each character), the id alone is the word.
    assert id_kept_whole("来源：card-charged-twice", "card-charged-twice", 10) == (
        "来源：card-\ncharged-\ntwice"
    )
