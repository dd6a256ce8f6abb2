"""The footer at every width from 40 to 140 columns: each key it shows is whole (never cut at
the edge), and Quit is always there. Between 60 and ~75 columns it cut "^q Quit f2 Editor" short,
as it left out Helpful and Not helpful only under a fixed 60 columns.

What the footer would show is asked at every width; it is drawn and read where that changes (and
a column before): a set of keys whole at the narrowest width it is shown is whole at every wider
one, and the footer never shows fewer keys for more room (checked), so drawing the other widths
(about 80 a test, each a whole screen's layout) would find nothing more."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.widgets._footer import FooterKey

from chatbot.tui import HelpDeskApp, Mode
from chatbot.tui.widgets.chat_panel import FEEDBACK_ACTIONS, ChatPanel
from chatbot.tui.widgets.footer import GIVE_WAY_FIRST, Footer
from tests.tui.conftest import MakeApp
from tests.tui.helpers import footer_current, screen_text, wait_until

WIDTHS = range(40, 141)
HEIGHT = 20


def keys(app: HelpDeskApp) -> list[FooterKey]:
    return list(app.screen.query_one(Footer).query(FooterKey))


def label(key: FooterKey) -> str:
    return f"{key.key_display} {key.description}"


async def resized(pilot: Pilot[None], width: int) -> None:
    """The terminal is `width` columns and the footer shows the keys that fit it, painted."""
    await pilot.resize_terminal(width, HEIGHT)
    footer = pilot.app.screen.query_one(Footer)
    await wait_until(pilot, lambda: footer.size.width == width)
    await footer_current(pilot)


def cut_keys(app: HelpDeskApp) -> list[str]:
    """The footer's keys that do not lie whole inside the screen, or lie under the next one (the
    palette's key, docked at the right): measured in cells, so in any language."""
    width = app.size.width
    placed = sorted(keys(app), key=lambda key: key.region.x)
    return [
        label(key)
        for key, after in zip(placed, [*placed[1:], None], strict=True)
        if key.region.x < 0 or key.region.right > (width if after is None else after.region.x)
    ]


def widths_to_draw(app: HelpDeskApp) -> list[int]:
    """The widths where the footer's choice of keys changes, and the column before each, with
    the first and last; and checks at every width that Quit is kept and that more room never
    leaves more out."""
    footer = app.screen.query_one(Footer)
    fits = {width: footer._fit(width) for width in WIDTHS}
    drawn = {WIDTHS[0], WIDTHS[-1]}
    for width in WIDTHS[1:]:
        (left_out, palette), (narrower_left_out, narrower_palette) = fits[width], fits[width - 1]
        assert left_out <= narrower_left_out and palette >= narrower_palette, width
        if (left_out, palette) != (narrower_left_out, narrower_palette):
            drawn |= {width - 1, width}
    for width, (left_out, _) in fits.items():
        assert "quit" not in left_out, width
    return sorted(drawn)


def check_line(app: HelpDeskApp) -> None:
    """The bottom line is the footer's keys, whole, and nothing else (English: the screenshot's
    text is one character a cell)."""
    line = screen_text(app).splitlines()[-1]
    rest = line
    for key in keys(app):
        assert label(key) in rest, (app.size.width, label(key), line)
        rest = rest.replace(label(key), "", 1)
    assert set(rest) <= {" ", "▏"}, (app.size.width, line)


@pytest.mark.parametrize("mode", ["chat", "all"])
async def test_every_key_in_the_footer_is_whole_at_every_width(
    make_app: MakeApp, mode: Mode
) -> None:
    app = make_app(mode)
    async with app.run_test(size=(WIDTHS[0], HEIGHT)) as pilot:
        await wait_until(pilot, lambda: any(k.action == "quit" for k in keys(app)))
        drawn = widths_to_draw(app)
        assert 3 < len(drawn) < len(WIDTHS) / 3, drawn  # Keys do give way, in a few steps.
        for width in drawn:
            await resized(pilot, width)
            assert cut_keys(app) == [], width
            check_line(app)
            assert any(key.description == "Quit" for key in keys(app)), width
        # The whole set where it fits (the palette's key gives way first). The editor is the
        # desk's, not the customer's own app's.
        editor = ["Editor"] if mode == "all" else []
        assert [key.description for key in keys(app)] == [
            "Talk to a person", "Helpful", "Not helpful", "New chat", "Quit", *editor, "palette",
        ]  # fmt: skip
        # At 60 columns, Helpful and Not helpful leave together; the rest is whole.
        await resized(pilot, 60)
        assert [key.description for key in keys(app)] == [
            "Talk to a person", "New chat", "Quit", *editor
        ]  # fmt: skip


async def test_chinese_keys_are_measured_two_cells_a_character(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=(WIDTHS[-1], HEIGHT)) as pilot:
        await wait_until(pilot, lambda: any(k.action == "quit" for k in keys(app)))
        await pilot.press("f9")  # The chat in Chinese: its keys and the app's.
        panel = app.screen.query_one(ChatPanel)
        await wait_until(pilot, lambda: panel.locale == "zh")
        quit_label = next(k.description for k in keys(app) if k.action == "quit")
        assert quit_label != "Quit"
        for width in widths_to_draw(app):
            await resized(pilot, width)
            assert cut_keys(app) == [], width
            assert any(key.action == "quit" for key in keys(app)), width


def test_the_footer_leaves_out_the_chats_feedback_keys_first() -> None:
    assert set(GIVE_WAY_FIRST) == set(FEEDBACK_ACTIONS)
