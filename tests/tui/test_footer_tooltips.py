"""No footer key shows a tooltip. In the agent console in a browser, clicking "^n Note" left the
pointer on the key, and its tooltip ("Write a note only agents see") came up over the note box
just above the footer, which then looked empty though a restored draft was in it. A key's label
already says what it does; the keys panel (Ctrl+P, "Keys") still describes each."""

from __future__ import annotations

from textual.widgets._footer import FooterKey
from textual.widgets._tooltip import Tooltip

from chatbot.desk.service import DeskService
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.footer import Footer
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.helpers import footer_current, wait_until


async def test_clicking_note_in_the_footer_shows_nothing_over_the_note_box(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = other.start_conversation().id
    other.talk_to_person(conversation)
    other.ask(conversation, "Where is my refund?")
    other.claim(conversation, agent="ana")
    app = make_app("agent")
    async with app.run_test(size=SIZE, tooltips=True) as pilot:  # As in a browser.
        view = await app.open_conversation(conversation)
        await wait_until(pilot, lambda: view.is_mine)
        await footer_current(pilot)
        [note] = [key for key in app.screen.query(FooterKey) if key.action == "toggle_note"]
        await pilot.click(note)  # As in the browser: the pointer stays on the key.
        await wait_until(pilot, lambda: app.screen.query_one(ConversationView).note_mode)
        await footer_current(pilot)
        tooltip = app.screen.get_child_by_type(Tooltip)
        keys = list(app.screen.query_one(Footer).query(FooterKey))
        assert any(key.action == "toggle_note" for key in keys)
        for key in keys:
            # What Textual does once the pointer has rested on a widget: show its tooltip, if
            # it (or a widget around it) has one.
            app.screen._handle_tooltip_timer(key)
            assert not tooltip.display, (key.key_display, key.description)
