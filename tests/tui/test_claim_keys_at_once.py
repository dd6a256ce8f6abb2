"""Once Ctrl+L's claim has returned, the conversation view's keys say so at once.

A tester saw the footer still offer "^l Claim" for up to ~1.5 s after Ctrl+L: the view changed
its keys only once it had read the conversation again (its state, its log, the bot's decisions),
which on a busy desk took that long. The claim's own answer says the conversation is the
agent's: the footer, the header and the line above the box change on it. The desk is held here
by a store whose reads of the log wait on the test once the claim has gone through; keys go in
through the driver, as Pilot's `press` waits for a view that is waiting on the desk."""

from __future__ import annotations

import threading
from typing import Any

from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.desk_helpers import waiting
from tests.tui.driver_helpers import keys, until
from tests.tui.helpers import flat, footer_offers, screen_text


class HeldReads:
    """Stands in for the app's desk store: once a claim has gone through, reads of the log wait
    (on the desk's thread, as on a busy database) until `let_go`."""

    def __init__(self, app: HelpDeskApp) -> None:
        service = app.services.desk._service
        self._real = service.store
        self._claimed = threading.Event()
        self.held = threading.Event()
        """Set once a read of the log waits here."""
        self._gate = threading.Event()
        service.store = self

    def let_go(self) -> None:
        self._gate.set()

    def claim(self, *args: Any, **kwargs: Any) -> Any:
        claimed = self._real.claim(*args, **kwargs)
        self._claimed.set()
        return claimed

    def entries(self, *args: Any, **kwargs: Any) -> Any:
        if self._claimed.is_set():
            self.held.set()
            self._gate.wait(timeout=60)
        return self._real.entries(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


async def test_the_footer_drops_claim_as_soon_as_the_claim_returns(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = waiting(other)
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE):
        view = await app.open_conversation(conversation)
        await until(lambda: footer_offers(app, "claim"))
        reads = HeldReads(app)
        try:
            keys(app, "ctrl+l")
            await until(lambda: reads.held.is_set())  # Claimed; the reload waits on the log.
            assert other.conversation(conversation).agent == "ana"
            header = view.query_one("#conversation-header")
            await until(lambda: "claimed by ana" in flat(screen_text(app, header)))
            await until(lambda: footer_offers(app, "resolve"))
            assert not footer_offers(app, "claim")
            assert view.is_mine and view.reply_input.has_focus
            assert "You own this conversation" in flat(
                screen_text(app, view.query_one("#reply-hint"))
            )
        finally:
            reads.let_go()
        # The reload then reads the log: the claim's event shows, the keys stay the owner's.
        await until(
            lambda: "ana joined the conversation." in flat(screen_text(app, view.transcript))
        )
        assert not footer_offers(app, "claim") and footer_offers(app, "resolve")
