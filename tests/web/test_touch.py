"""The chat on a phone, with a finger, as a tester used it (390x844, a touch screen):

- a swipe scrolled nothing (a mouse wheel did): a customer could never read back past the
  screen. A vertical swipe now scrolls the conversation under the finger, and clicks nothing;
- after a tap the hover style stayed on what was under the finger (a phone has no pointer to
  move away). The app is now told the pointer left once a tap is over, and a tap on a suggestion
  still asks it, once.

What the app shows is read from the terminal's own screen buffer: the page draws it on a canvas,
and textual-serve keeps its xterm.js terminal to itself, so the page is given a hook (`GRAB`)
that keeps the terminal where a test can read it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, WebSocket

from tests.web.harness import Served, settled, transcript, wait_for

PHONE: ViewportSize = {"width": 390, "height": 844}
"""The tester's phone. At a device scale factor over 1 chromium-headless-shell measures the
terminal in CSS pixels, and the app's screen comes out a fraction of the page: tests use 1."""

GRAB = """(() => {
    const bind = Function.prototype.bind;
    Function.prototype.bind = function (self, ...rest) {
        if (self && self._core && self._addonManager && !window.__terminal) {
            window.__terminal = self;
        }
        return bind.call(this, self, ...rest);
    };
})();"""
"""Keeps textual-serve's xterm.js terminal as `window.__terminal`: its constructor binds each of
its options' getters to the terminal, the one object with both a `_core` and an
`_addonManager`."""

SCREEN = """() => {
    const terminal = window.__terminal;
    const buffer = terminal.buffer.active;
    const rows = [];
    for (let y = 0; y < terminal.rows; y++) {
        const line = buffer.getLine(buffer.viewportY + y);
        let text = "";
        let underlined = 0;
        for (let x = 0; x < terminal.cols; x++) {
            const cell = line.getCell(x);
            text += cell.getChars() || " ";
            if (cell.isUnderline()) underlined++;
        }
        rows.push([text, underlined]);
    }
    return rows;
}"""
"""Each row the terminal shows: its text, and how many of its cells are underlined."""

INTRO = "Hi! Ask anything"
"""The start of the chat's greeting, at the top of the conversation."""

BRAKES = "The bike's brakes were already worn when I took it. Will I have to pay for that?"
"""A suggested question with a recorded answer (the shipped replay cache)."""


@pytest.fixture
def phone(browser: Browser) -> Iterator[BrowserContext]:
    context = browser.new_context(
        viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=1
    )
    yield context
    context.close()


LANGUAGE_HINT = "中 文"
"""The status line's language link (the other language's name, underlined in a browser), as a
row reads: each wide character's second cell blank."""


def screen(page: Page) -> list[tuple[str, int]]:
    return [(text, underlined) for text, underlined in page.evaluate(SCREEN)]


def hovered(page: Page) -> list[str]:
    """The rows with underlined cells, but the language hint's: a link, underlined always."""
    return [row for row, count in screen(page) if count and LANGUAGE_HINT not in row]


def shown(page: Page) -> str:
    """The terminal's text, row under row, each row's spaces kept (a row's words stay apart)."""
    return "\n".join(text for text, _ in screen(page))


def on_screen(page: Page, text: str) -> bool:
    """Whether `text`'s first words are on one row of the terminal."""
    return any(text in row for row, _ in screen(page))


def cell_centre(page: Page, column: int, row: int) -> tuple[float, float]:
    """Where on the page the middle of the terminal's cell (`column`, `row`), from 0, is."""
    box = page.locator("#terminal .xterm-screen").bounding_box()
    assert box is not None
    columns, rows = page.evaluate("[window.__terminal.cols, window.__terminal.rows]")
    return (
        box["x"] + (column + 0.5) * box["width"] / columns,
        box["y"] + (row + 0.5) * box["height"] / rows,
    )


def row_of(page: Page, text: str) -> int:
    return next(y for y, (row, _) in enumerate(screen(page)) if text in row)


def open_chat(served: Served, page: Page) -> tuple[int, list[str]]:
    """Open the customer chat in `page`, drawn; the conversation its session holds, and a list
    that gets the text of every message the page sends the app from now on."""
    sent: list[str] = []

    def watch(socket: WebSocket) -> None:
        socket.on("framesent", lambda payload: sent.append(str(payload)))

    page.on("websocket", watch)
    page.add_init_script(GRAB)
    before = {session.conversation for session in served.sessions()}
    page.goto(served.url + "/")
    [conversation] = wait_for(
        lambda: [s.conversation for s in served.sessions() if s.conversation not in before],
        what="the customer's session",
    )
    assert conversation is not None
    page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
    settled(page)
    return conversation, sent


def customer_questions(served: Served, conversation: int) -> list[str]:
    return [text for author, text, _ in transcript(served.db, conversation) if author == "customer"]


def answered(served: Served, conversation: int) -> bool:
    return any(author == "bot" for author, _, _ in transcript(served.db, conversation))


def swipe(page: Page, start: tuple[float, float], down_by: float) -> None:
    """A finger down at `start`, moved `down_by` pixels (up if negative) in 20 steps, lifted:
    the browser's own touch events, as a phone's screen sends them."""
    cdp = page.context.new_cdp_session(page)
    x, y = start
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for step in range(1, 21):
        point = {"x": x, "y": y + down_by * step / 20}
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    cdp.detach()


def pressed(frames: list[str]) -> list[str]:
    """The mouse presses among the messages sent (SGR reports of a button down: `ESC[<0;x;yM`)."""
    return [frame for frame in frames if "\\u001b[<0;" in frame and frame.endswith('M"]')]


def test_a_swipe_scrolls_the_conversation_and_clicks_nothing(
    phone: BrowserContext, served: Served
) -> None:
    """Once answered, the conversation no longer fits: the greeting has gone off the top. A
    swipe down starting on a suggested question brings it back, and does not ask the question;
    a swipe up takes the conversation back down."""
    page = phone.new_page()
    conversation, sent = open_chat(served, page)
    page.keyboard.type(BRAKES)  # The page gives the terminal the keyboard from the start.
    page.keyboard.press("Enter")
    wait_for(lambda: answered(served, conversation), what="the bot's answer in the store")
    settled(page)
    assert not on_screen(page, INTRO), shown(page)
    assert on_screen(page, "Helpful"), shown(page)

    before = len(sent)
    start = cell_centre(page, 10, row_of(page, "I was charged twice"))
    swipe(page, start, down_by=300)
    wait_for(lambda: on_screen(page, INTRO), what="the greeting scrolled into view", timeout=15)
    settled(page)
    assert not on_screen(page, "Helpful"), shown(page)
    assert pressed(sent[before:]) == [], "the swipe clicked"
    assert customer_questions(served, conversation) == [BRAKES]

    swipe(page, cell_centre(page, 10, 20), down_by=-300)
    wait_for(lambda: on_screen(page, "Helpful"), what="the answer scrolled back", timeout=15)
    assert not on_screen(page, INTRO), shown(page)
    settled(page)
    assert customer_questions(served, conversation) == [BRAKES]


def test_a_tap_asks_a_suggestion_once_and_leaves_no_hover(
    phone: BrowserContext, served: Served
) -> None:
    """A tap is still a click: the suggested question is asked, once. Asking it scrolls the
    conversation, and the suggestion that then lay under the finger kept its hover underline;
    once the tap is over, nothing on the screen is underlined."""
    page = phone.new_page()
    conversation, sent = open_chat(served, page)
    assert hovered(page) == [], shown(page)
    page.touchscreen.tap(*cell_centre(page, 8, row_of(page, "The bike's brakes")))
    wait_for(lambda: answered(served, conversation), what="the bot's answer in the store")
    settled(page)
    assert customer_questions(served, conversation) == [BRAKES]
    assert len(pressed(sent)) == 1
    underlined = hovered(page)
    assert underlined == [], "hover left on:\n" + "\n".join(underlined)

    # A mouse keeps its hover: only a touch's pointer leaves.
    page.mouse.move(*cell_centre(page, 8, row_of(page, "I was charged twice")))
    wait_for(lambda: bool(hovered(page)), what="the mouse's hover")
    settled(page)
    assert hovered(page)[0].strip() == "• I was charged twice for the"
