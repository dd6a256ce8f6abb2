"""After `serve` restarted (SIGTERM, then started again), every page said "This session has
ended. The help desk is restarting: try again in a minute." and stayed so: a customer waiting for
an agent who did not click "Start again" never saw the reply. A page ended by a restart now
starts again by itself once the server answers (`assets/closed.js`, as "Start again" does,
putting back what the customer had typed and not sent); a page ended for another reason (here,
signed out) waits for its user."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser, Request, expect

from chatbot.assembly import open_service
from chatbot.config import load_settings
from tests.web.conftest import PASSWORD, VIEWPORT, make_site
from tests.web.harness import (
    INPUT_FROM_BOTTOM_PX,
    conversation_state,
    start_server,
    wait_for,
)
from tests.web.helpers import conversations_opened, on_the_sign_in_form, open_chat, sign_in

DRAFT = "my bike is 4417"
"""Typed, not sent, before the restart."""
REPLY = "Your bike 4417 is unlocked now"
"""What the agent writes while the customer's page says the session has ended."""
AGENT = "Ana P."
RESTARTING = "The help desk is restarting: this page starts again by itself once it is back."
SIGNED_OUT = "You were signed out: sign in again to go on."

RECORD_OUTPUT = """(() => {
    const Native = window.WebSocket;
    const decoder = new TextDecoder();
    window.appOutput = "";
    function Recorded(url, protocols) {
        const socket = protocols === undefined ? new Native(url) : new Native(url, protocols);
        socket.addEventListener("message", (event) => {
            if (event.data instanceof ArrayBuffer) {
                window.appOutput += decoder.decode(new Uint8Array(event.data), { stream: true });
            }
        });
        return socket;
    }
    Recorded.prototype = Native.prototype;
    for (const name of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) Recorded[name] = Native[name];
    window.WebSocket = Recorded;
})();"""
"""Keeps what the page's app drew (the terminal's bytes, which its canvas shows) for the test to
read, from each page load on."""

SHOWS = r"""(words) => {
    const text = window.appOutput.replace(/\x1b\[[0-?]*[ -\/]*[@-~]/g, "");
    return words.every((word) => text.includes(word));
}"""
"""Whether the app has drawn every one of `words` (its colours and cursor moves left out)."""


def test_a_page_ended_by_a_restart_starts_again_by_itself_and_a_signed_out_one_does_not(
    browser: Browser, tmp_path: Path, artifacts: Path
) -> None:
    home = tmp_path / "site"
    db, kb = make_site(home)
    state = {"XDG_STATE_HOME": str(home / "state")}  # Where sessions keep unsent text.
    served = start_server(home, db=db, kb=kb, environment=state)
    customer_context = browser.new_context(viewport=VIEWPORT)
    customer_context.add_init_script(RECORD_OUTPUT)
    agent_context = browser.new_context(viewport=VIEWPORT)
    try:
        # A customer asks for a person, with words typed and not sent.
        customer = open_chat(customer_context, served)
        [conversation] = wait_for(lambda: conversations_opened(served), what="the chat")
        box = customer.locator("#terminal").bounding_box()
        assert box is not None
        customer.mouse.click(box["x"] + 200, box["y"] + box["height"] - INPUT_FROM_BOTTOM_PX)
        customer.keyboard.type(DRAFT)
        customer.keyboard.press("Control+t")  # After the draft: once it lands, all of it is in.
        wait_for(
            lambda: conversation_state(db, conversation)[0] == "waiting",
            what="the customer waiting for a person",
        )

        # An agent's console, ended by signing out in another tab.
        signed_out = agent_context.new_page()
        asked: list[str] = []

        def healthz(request: Request) -> None:
            if request.url.endswith("/healthz"):
                asked.append(request.url)

        signed_out.on("request", healthz)
        assert sign_in(signed_out, served, "agent", "ana", PASSWORD) == 200
        signed_out.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
        other_tab = agent_context.new_page()
        other_tab.goto(served.url + "/signout")
        with other_tab.expect_navigation():
            other_tab.click("button[type=submit]")
        other_tab.close()
        signed_out.wait_for_selector("body.-closed", state="attached", timeout=30_000)
        expect(signed_out.locator(".closed-dialog .why")).to_have_text(SIGNED_OUT)

        # The restart: SIGTERM, and the agent replies while serve is down.
        port = served.port
        assert served.stop() == 0
        customer.wait_for_selector("body.-closed", state="attached", timeout=30_000)
        expect(customer.locator(".closed-dialog .why")).to_have_text(RESTARTING)
        desk = open_service(load_settings(store={"db": db}))
        try:
            assert desk.claim(conversation, agent=AGENT).won
            desk.reply(conversation, agent=AGENT, text=REPLY)
        finally:
            desk.close()
        # Nobody clicks: the page asks the server by itself, and says it is connecting.
        expect(customer.locator(".closed-dialog a")).to_have_text(
            "help desk: connecting…", timeout=30_000
        )
        assert "-closed" in customer.evaluate("document.body.className")

        served = start_server(
            home, db=db, kb=kb, environment=state, extra=["--port", str(port)]
        )  # Back, on the same address.
        customer.wait_for_selector(
            "body.-first-byte:not(.-closed)", state="attached", timeout=60_000
        )
        # The same conversation, the agent's reply on screen, the unsent words back in the box.
        customer.wait_for_function(SHOWS, arg=[REPLY, DRAFT], timeout=60_000)
        assert conversations_opened(served) == [conversation]
        customer.screenshot(path=artifacts / "restart-reconnected.png")

        # The signed-out console stayed as it was: it never asked the server, and never went.
        assert asked == []
        assert signed_out.url == served.url + "/agent"
        assert "-closed" in signed_out.evaluate("document.body.className")
        expect(signed_out.locator(".closed-dialog .why")).to_have_text(SIGNED_OUT)
        assert not on_the_sign_in_form(signed_out)
    finally:
        customer_context.close()
        agent_context.close()
        served.stop()
