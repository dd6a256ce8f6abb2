"""The page around the app, as a tester used it: a paste larger than a websocket message, the
keyboard once a session has ended, keys typed and text pasted while the page still says
"connecting…", and a click on the strip the terminal's whole rows leave below it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, WebSocket

from tests.web.conftest import VIEWPORT
from tests.web.harness import Served, settled, transcript, wait_for

WEBSOCKET_LIMIT = 64 * 1024
"""The server's cap on one websocket message (`chatbot.web.server.MAX_WS_MESSAGE_BYTES`)."""

PIECE = 8192
"""The longest piece of a paste the page sends (assets/paste.js)."""
PASTE_START = "\x1b[200~"

TEXTAREA = "document.activeElement.classList.contains('xterm-helper-textarea')"
"""Whether xterm.js's input, through which every key reaches the app, has the keyboard."""


@pytest.fixture
def customer(browser: Browser) -> Iterator[BrowserContext]:
    context = browser.new_context(viewport=VIEWPORT)
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    yield context
    context.close()


def new_chat(served: Served, page: Page) -> int:
    """Open the customer chat in `page`; the conversation its session holds."""
    before = {session.conversation for session in served.sessions()}
    page.goto(served.url + "/")
    [conversation] = wait_for(
        lambda: [s.conversation for s in served.sessions() if s.conversation not in before],
        what="the customer's session",
    )
    assert conversation is not None
    return conversation


def asked(served: Served, page: Page, conversation: int, question: str) -> None:
    """Wait until `question` is in the conversation; fail at once if the session ends first."""

    def stored() -> bool:
        assert "-closed" not in page.evaluate("document.body.className"), "the session ended"
        return any(text == question for _, text, _ in transcript(served.db, conversation))

    wait_for(stored, what=f"{question!r} in the store")


def test_a_paste_over_the_websocket_limit_keeps_the_session(
    customer: BrowserContext, served: Served
) -> None:
    """70 KB pasted into the question box ended the session at once ("This session has ended"):
    xterm.js sent it as one websocket message, over the server's 64 KiB cap, and the server
    closed the socket. The page now sends a long paste in pieces: the box gets all of it, refuses
    it on Enter as too long, and the session goes on."""
    page = customer.new_page()
    sent: list[int] = []

    def watch(socket: WebSocket) -> None:
        socket.on("framesent", lambda payload: sent.append(len(str(payload).encode())))

    page.on("websocket", watch)
    conversation = new_chat(served, page)
    page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
    settled(page)
    # Over 64 KiB in UTF-8, an emoji where the first piece ends.
    pasted = "x" * (PIECE - len(PASTE_START) - 1) + "\N{GRINNING FACE} and words " * 5_000
    page.evaluate("text => navigator.clipboard.writeText(text)", pasted)
    page.keyboard.press("Control+v")
    page.keyboard.press("Enter")  # Over the question's limit: refused, and the box keeps it.
    # Once the refusal is shown: a binding (Ctrl+U) runs behind a send in progress, after the
    # keys typed meanwhile, and would take them too.
    settled(page)
    page.keyboard.press("Control+u")  # The box emptied.
    settled(page)
    question = "Typed after a very long paste: is my ride paid?"
    page.keyboard.type(question)
    page.keyboard.press("Enter")
    asked(served, page, conversation, question)
    assert [text for author, text, _ in transcript(served.db, conversation)] == [question]
    assert sum(sent) > len(pasted.encode()) and max(sent) < WEBSOCKET_LIMIT


def test_start_again_has_the_keyboard_once_the_session_ends(
    customer: BrowserContext, served: Served
) -> None:
    """After Ctrl+Q (or the server stopping) the page says the session ended and offers "Start
    again", but the keyboard stayed in xterm.js's hidden input, which keeps Tab for the terminal:
    no key reached the link. The link now takes the keyboard, and the dead terminal none."""
    page = customer.new_page()
    new_chat(served, page)
    page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
    settled(page)
    page.keyboard.press("Control+q")
    page.wait_for_selector("body.-closed", state="attached", timeout=30_000)
    on_start_again = "document.activeElement.matches('.closed-dialog a')"
    wait_for(lambda: page.evaluate(on_start_again), what="the keyboard on Start again", timeout=10)
    # Tab goes round the page's one control, through the page itself (no browser around it
    # here), never into the terminal nor to textual-serve's hidden "Start" button.
    for _ in range(4):
        page.keyboard.press("Tab")
        assert page.evaluate(f"{on_start_again} || document.activeElement === document.body")
    assert page.evaluate(on_start_again)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)


# Holds every message the server sends the page until `__releaseServer()`: the page stays on
# "connecting…" for as long as the test needs, as on a slow start, while the app runs.
HOLD_THE_SERVER = """(() => {
    let holding = true;
    const held = [];
    window.__releaseServer = () => {
        holding = false;
        held.splice(0).forEach(([listener, event]) => listener.call(event.target, event));
    };
    const add = WebSocket.prototype.addEventListener;
    WebSocket.prototype.addEventListener = function (type, listener, options) {
        if (type === "message") {
            const heard = listener;
            listener = function (event) {
                if (holding) held.push([heard, event]);
                else heard.call(this, event);
            };
        }
        return add.call(this, type, listener, options);
    };
})();"""


def test_keys_typed_while_the_page_connects_reach_the_app_in_order(
    customer: BrowserContext, served: Served
) -> None:
    """Typing at once on a page still saying "connecting…" lost the first keys: the page gave
    the terminal the keyboard only once the app had drawn, and keys before went to the page's
    body. The terminal has the keyboard from the start now, and what it sends before the app
    has drawn waits for it, then goes in order."""
    page = customer.new_page()
    page.add_init_script(HOLD_THE_SERVER)
    conversation = new_chat(served, page)
    question = "Typed while connecting: can I rent two bikes?"
    page.keyboard.type(question, delay=20)
    page.keyboard.press("Enter")
    assert "-first-byte" not in page.evaluate("document.body.className")  # Still connecting.
    page.evaluate("window.__releaseServer()")
    asked(served, page, conversation, question)
    assert [text for author, text, _ in transcript(served.db, conversation)][0] == question


@pytest.mark.parametrize("viewport", [(800, 600), (390, 844)])
def test_a_click_beside_the_terminals_rows_keeps_the_keyboard_in_it(
    browser: Browser, served: Served, viewport: tuple[int, int]
) -> None:
    """The terminal has whole rows: a strip of the window below them (12 px at 800x600) is the
    page's. A click there took the keyboard from the app, which drew itself inactive, and what
    was typed next went nowhere. The keyboard now stays with the terminal."""
    width, height = viewport
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        conversation = new_chat(served, page)
        page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
        settled(page)
        rows = page.locator(".xterm-screen").bounding_box()
        assert rows is not None
        below = rows["y"] + rows["height"]
        assert height - below >= 2, "no strip below the rows at this size"
        page.mouse.click(width / 2, (below + height) / 2)
        assert page.evaluate(TEXTAREA), "the click took the keyboard from the terminal"
        # Nothing below the terminal either (textual-serve's hidden "Start" button showed there).
        assert page.evaluate("document.documentElement.scrollHeight") == height
        question = "Typed after a click below the terminal: where is my receipt?"
        page.keyboard.type(question)
        page.keyboard.press("Enter")
        asked(served, page, conversation, question)
    finally:
        context.close()


PASTE_EVENT = """text => {
    const input = document.querySelector("#terminal .xterm-helper-textarea");
    const data = new DataTransfer();
    data.setData("text/plain", text);
    input.dispatchEvent(
        new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true })
    );
}"""
"""A paste into the terminal's input, as the browser makes it on Ctrl+V."""


def questions(served: Served, conversation: int) -> list[str]:
    return [text for author, text, _ in transcript(served.db, conversation) if author == "customer"]


def test_a_paste_while_the_page_connects_reaches_the_app_as_one_paste(
    customer: BrowserContext, served: Served
) -> None:
    """A 20-line email pasted while the page said "connecting…" stored 19 questions: the app had
    not yet turned on bracketed paste when xterm.js took the paste, so each line break went as
    Enter. The page now holds the paste's text and gives it to the app as one paste once it has
    drawn, in order with the keys typed around it."""
    page = customer.new_page()
    page.add_init_script(HOLD_THE_SERVER)
    conversation = new_chat(served, page)
    page.keyboard.type("Before: ")
    page.evaluate(PASTE_EVENT, "\n".join(f"line {i} of my email" for i in range(20)))
    page.keyboard.type(" after.")
    page.keyboard.press("Enter")
    assert "-first-byte" not in page.evaluate("document.body.className")  # Still connecting.
    page.evaluate("window.__releaseServer()")

    def sent() -> list[str]:
        assert "-closed" not in page.evaluate("document.body.className"), "the session ended"
        return [text for text in questions(served, conversation) if "after." in text]

    wait_for(sent, what="the question ending with the paste", timeout=60)
    asked_ = questions(served, conversation)
    assert len(asked_) == 1, f"the paste went as {len(asked_)} questions: {asked_[:3]}"
    [question] = asked_
    assert question.startswith("Before: line 0 of my email")
    assert "line 19 of my email after." in question
