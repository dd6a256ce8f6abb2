"""Tab and Shift+Tab typed in a burst (a browser, a slow link) move the focus between the keys
they were typed between: `burst-two` Tab `Second title` Tab `tag2` on the editor's New form went
whole into Id, and the Tabs acted afterwards. The agent's and the customer's boxes share the
mechanism."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, Input, TextArea

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.editor import EditorScreen
from tests.tui.conftest import MakeApp, editor_settings
from tests.tui.desk_helpers import claimed
from tests.tui.editor_helpers import on_form_button, settle
from tests.tui.helpers import wait_until
from tests.tui.text_burst_helpers import burst

SIZE = (100, 30)
"""About the tester's 800x600 browser window."""
TAB = ("tab", "\t")
SHIFT_TAB = ("shift+tab", None)


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


async def new_form(app: HelpDeskApp, pilot: Pilot[None]) -> EditorScreen:
    """The editor-only session's editor, New clicked: the cursor in Id."""
    await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
    await settle(pilot)
    editor = app.screen
    assert isinstance(editor, EditorScreen)
    await pilot.click("#form-new")
    await wait_until(pilot, lambda: app.focused is editor.query_one("#form-id"))
    return editor


def boxes(editor: EditorScreen) -> tuple[str, str, str, str]:
    return (
        editor.query_one("#form-id", Input).value,
        editor.query_one("#form-title", Input).value,
        editor.query_one("#form-tags", Input).value,
        editor.query_one("#form-text", TextArea).text,
    )


async def test_tabs_typed_in_a_burst_on_the_new_form_act_between_the_words(
    make_app: MakeApp,
) -> None:
    app = make_app("editor")
    async with app.run_test(size=SIZE) as pilot:
        editor = await new_form(app, pilot)
        burst(app, "burst-two", TAB, "Second title", TAB, "tag2")
        await wait_until(pilot, lambda: "2" in boxes(editor)[2] or boxes(editor)[0].endswith("2"))
        await pilot.pause()
        assert boxes(editor) == ("burst-two", "Second title", "tag2", "")
        # The next key, typed slowly, goes on in Tags: no Tab is left to act late.
        assert app.focused is editor.query_one("#form-tags")
        await pilot.press("s")
        assert boxes(editor)[2] == "tag2s"
        assert app.focused is editor.query_one("#form-tags")


async def test_shift_tab_and_the_text_in_a_burst(make_app: MakeApp) -> None:
    """Through Title and Tags into the text, back with Shift+Tab to Tags, then on again."""
    app = make_app("editor")
    async with app.run_test(size=SIZE) as pilot:
        editor = await new_form(app, pilot)
        burst(app, "late-fee", TAB, "Late fee", TAB, "fees", TAB, "We charge", SHIFT_TAB,
              ", money", TAB, " 2 EUR.", SHIFT_TAB, SHIFT_TAB, SHIFT_TAB, "-x")  # fmt: skip
        await wait_until(pilot, lambda: boxes(editor)[0].endswith("x"))
        await pilot.pause()
        assert boxes(editor) == ("late-fee-x", "Late fee", "fees, money", "We charge 2 EUR.")
        assert app.focused is editor.query_one("#form-id")


async def test_a_burst_from_the_text_to_the_buttons(make_app: MakeApp) -> None:
    """Tab from a passage's text to Save, in a burst: the letters behind it are typed on Save,
    which puts them in the text, as when typed slowly; no button is pressed."""
    app = make_app("agent")
    pressed: list[str | None] = []

    def hook(message: object) -> None:
        if isinstance(message, Button.Pressed):
            pressed.append(message.button.id)

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        editor, text = await on_form_button(pilot, "#form-save")
        await pilot.press("shift+tab")
        assert app.focused is text
        before = text.text
        burst(app, " Ask us", TAB, "x now")
        await wait_until(pilot, lambda: text.text.endswith("now"))
        await pilot.pause()
        assert text.text == before + " Ask usx now"
        assert app.focused is text and pressed == []


async def test_the_agents_reply_box_takes_a_burst_around_tab_in_turn(
    make_app: MakeApp, other: DeskService
) -> None:
    """Tab leaves the reply box for the transcript, whose letters go back to the box: typed
    slowly, the box has the focus again at the end, and so it has after a burst (the Tab acted
    last, and left the focus on the transcript)."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        _conversation, view = await claimed(app, pilot, other)
        box = view.reply_input
        burst(app, "hello", TAB, "xy")
        await wait_until(pilot, lambda: box.value.endswith("y"))
        await pilot.pause()
        assert box.value == "helloxy" and app.focused is box


async def test_the_customers_question_box_takes_a_burst_around_tab_in_turn(
    make_app: MakeApp,
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one("#question", Input)
        box.focus()
        await pilot.pause()
        burst(app, "hello", TAB, "xy")
        await wait_until(pilot, lambda: box.value.endswith("y"))
        await pilot.pause()
        assert box.value == "helloxy" and app.focused is box
