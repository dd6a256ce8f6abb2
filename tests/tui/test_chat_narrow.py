"""On a narrow screen (a phone's browser) the chat's footer shows every key that fits, measured
in the chat's language. Chinese labels are short: all five of the chat's keys take 47 columns
(four of 9 cells, `^y 有帮助`, Quit's 7, a blank between each; the customer's app offers no
editor), so from 47 columns Helpful and Not helpful show, where a fixed 60-column rule used to
leave them out; below, they give way first.
In English at 50 columns the keys that show are whole, Quit among them."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets._footer import FooterKey

from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.chat_panel import FEEDBACK_ACTIONS, ChatPanel
from chatbot.tui.widgets.footer import Footer
from tests.tui.conftest import MakeApp
from tests.tui.helpers import footer_current, screen_text, wait_until

HEIGHT = 20
ALL_FIVE_IN_CHINESE = 47


def keys(app: HelpDeskApp) -> list[FooterKey]:
    return list(app.screen.query_one(Footer).query(FooterKey))


def whole(app: HelpDeskApp) -> bool:
    """Every key lies inside the screen, none under the next (measured in cells)."""
    placed = sorted(keys(app), key=lambda key: key.region.x)
    ends = [key.region.x for key in placed[1:]] + [app.size.width]
    return all(
        0 <= key.region.x and key.region.right <= end for key, end in zip(placed, ends, strict=True)
    )


async def resized(pilot: Pilot[None], width: int) -> None:
    """The terminal is `width` columns and the footer shows the keys that fit it, painted."""
    await pilot.resize_terminal(width, HEIGHT)
    footer = pilot.app.screen.query_one(Footer)
    await wait_until(pilot, lambda: footer.size.width == width)
    await footer_current(pilot)


async def test_the_chinese_chat_offers_helpful_and_not_helpful_wherever_they_fit(
    make_app: MakeApp,
) -> None:
    app = make_app("chat")
    async with app.run_test(size=(44, HEIGHT)) as pilot:
        panel = app.screen.query_one(ChatPanel)
        await wait_until(pilot, lambda: any(key.action == "quit" for key in keys(app)))
        await pilot.press("f9")  # The chat in Chinese: its keys and the app's.
        await wait_until(pilot, lambda: panel.locale == "zh")
        for width in range(44, 53):
            await resized(pilot, width)
            shown = {key.action: key.description for key in keys(app)}
            fits = width >= ALL_FIVE_IN_CHINESE
            assert all((action in shown) is fits for action in FEEDBACK_ACTIONS), (width, shown)
            assert "quit" in shown and whole(app), width
            # Drawn whole: each label is on the bottom line (a Chinese character takes two cells,
            # which the screenshot's text does not show as two characters).
            line = "".join(screen_text(app).splitlines()[-1].split())
            assert all("".join(label.split()) in line for label in shown.values()), (width, line)


async def test_at_50_columns_the_english_footer_is_whole(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=(50, HEIGHT)) as pilot:
        await wait_until(pilot, lambda: any(key.action == "quit" for key in keys(app)))
        await footer_current(pilot)
        assert whole(app)
        line = screen_text(app).splitlines()[-1]
        rest = line
        for key in keys(app):
            label = f"{key.key_display} {key.description}"
            assert label in rest, line
            rest = rest.replace(label, "", 1)
        assert set(rest) <= {" ", "▏"}, line  # Nothing cut: only whole labels on the line.
        assert "^q Quit" in line
