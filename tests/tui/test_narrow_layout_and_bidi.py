"""A keyboard-only tester's small findings: the quit dialog cut off at 60 columns, a rating
prompt that never said how a keyboard reaches it, a bidi override drawn raw by the boxes that
hold it, the passage picker's previews wrapping under the score, and a claimant's name cut at a
wide character with a double space before its ellipsis."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from textual.widget import Widget
from textual.widgets import Button, Input, OptionList, TextArea

from chatbot.config import Settings
from chatbot.desk.models import Author
from chatbot.desk.service import DeskService
from chatbot.knowledge_base.store import PassageStore
from chatbot.tui import create_app
from chatbot.tui.screens.dialogs import ClaimsOnQuit
from chatbot.tui.screens.passage_picker import PassagePicker
from chatbot.tui.widgets.queue_list import QueueList
from tests.tui.conftest import FrozenClock, MakeApp, editor_settings
from tests.tui.desk_helpers import resolved_by_another_agent
from tests.tui.editor_helpers import open_editor
from tests.tui.helpers import (
    RecordingDriver,
    chat_panel_ready,
    engine_ready,
    flat,
    queue_rows,
    screen_text,
    terminal_output,
    wait_until,
)

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: a terminal with bidi support reverses what follows.


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    """A copy of the knowledge base, which the editor's test changes."""
    return editor_settings(db_path, kb_copy)


def waiting(desk: DeskService) -> int:
    """A customer in another process who asked for a person, then asked a question."""
    conversation = desk.start_conversation().id
    desk.talk_to_person(conversation)
    desk.ask(conversation, "Where is my helmet?")
    return conversation


def customer_words(desk: DeskService, conversation: int) -> list[str]:
    return [m.text for m in desk.messages(conversation) if m.author is Author.CUSTOMER]


def inside(outer: Widget, inner: Widget) -> bool:
    return bool(inner.region.width) and outer.content_region.contains_region(inner.region)


# -- 1. the quit dialog at 60 columns -------------------------------------------------------------


async def test_the_quit_dialogs_buttons_wrap_to_fit_a_narrow_window(
    make_app: MakeApp, other: DeskService
) -> None:
    """At 60x20 the button row read `Hand back (h, Ctrl+Q)      Keep (k)       Cancel (`: the
    buttons now go on to a second row. At 80x24 they stay on one."""
    app = make_app("agent")
    async with app.run_test(size=(60, 20)) as pilot:
        other.claim(waiting(other), agent="ana")
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, ClaimsOnQuit))
        dialog = app.screen.query_one("#claims-dialog")
        buttons = list(app.screen.query(Button))
        await wait_until(pilot, lambda: all(inside(dialog, button) for button in buttons))
        shown = screen_text(app)
        for label in ("Hand back (h, Ctrl+Q)", "Keep (k)", "Cancel (Esc)"):
            assert label in shown
        assert len({button.region.y for button in buttons}) == 2
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: len({button.region.y for button in buttons}) == 1)
        assert all(inside(dialog, button) for button in buttons)
        # In Chinese too (a wide character takes two cells), at 60 columns.
        await pilot.resize_terminal(60, 20)
        await app.push_screen(ClaimsOnQuit(2, locale="zh"))
        dialog = app.screen.query_one("#claims-dialog")
        buttons = list(app.screen.query(Button))
        await wait_until(pilot, lambda: all(inside(dialog, button) for button in buttons))
        assert "取消(Esc)" in screen_text(app).replace(" ", "")  # The screen pads wide ones.


# -- 2. the rating prompt says the key that reaches it --------------------------------------------


async def test_the_rating_prompt_says_how_the_keyboard_reaches_it(
    make_app: MakeApp, other: DeskService
) -> None:
    """The question box keeps the focus, so 4 typed there went into it: the prompt says to press
    Shift+Tab first (Tab from the conversation above it), and once it has the keyboard, a
    number."""
    app = make_app("chat", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await chat_panel_ready(pilot)
        await resolved_by_another_agent(pilot, panel, other)
        prompt = panel.rating

        def says(words: str) -> bool:
            return words in flat(screen_text(app, prompt))

        assert app.screen.focused is panel.question
        await wait_until(pilot, lambda: says("or press Shift+Tab, then a number."))
        panel.log_view.focus()
        await wait_until(pilot, lambda: says("or press Tab, then a number."))
        await pilot.press("tab")
        await wait_until(pilot, lambda: says("(excellent): press a number."))
        assert not says("Tab")
        await pilot.press("4")
        await wait_until(pilot, lambda: not prompt.display)
        assert panel.question.value == ""  # The 4 rated; nothing was typed.


async def test_the_rating_prompts_key_hint_is_translated(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await chat_panel_ready(pilot)
        await resolved_by_another_agent(pilot, panel, other)
        panel.rating.show_in("zh")
        await wait_until(
            pilot, lambda: panel.rating.question().endswith("或按 Shift+Tab，再按数字键。")
        )


# -- 3. bidi controls in the boxes ----------------------------------------------------------------


async def test_a_pasted_bidi_override_is_spelled_out_in_the_box_and_sent_as_written(
    make_app: MakeApp, other: DeskService
) -> None:
    """Held raw, U+202E went to the terminal: the box's right border moved a column, and a
    terminal with bidi support reversed the rest of the line."""
    app = make_app("chat", bot=False)
    app.driver_class = RecordingDriver
    async with app.run_test(size=(60, 20), headless=False) as pilot:
        panel = await chat_panel_ready(pilot)
        box = panel.question
        box.focus()
        box.paste(f"abc {RLO}def")
        await pilot.pause()
        assert box.value == f"abc {RLO}def"
        assert "abc \\u202edef" in screen_text(app, box)
        # The cursor sits after all of it drawn: four cells, six for the override, three.
        # The cursor on `d`, after four cells and six for the override.
        await pilot.press("left", "left", "left")
        assert box.cursor_screen_offset.x == box.content_region.x + 10
        await pilot.press("left")  # Over the override at once: it is one character.
        assert box.cursor_position == 4
        assert box.cursor_screen_offset.x == box.content_region.x + 4
        # A click lands on the character drawn there: anywhere on `\u202e`, the override.
        left, top = box.content_region.x - box.region.x, box.content_region.y - box.region.y
        await pilot.click(box, offset=(left + 7, top))
        assert box.cursor_position == 4
        await pilot.click(box, offset=(left + 10, top))
        assert box.cursor_position == 5
        await pilot.press("end", "enter")
        await wait_until(pilot, lambda: panel.conversation_id is not None)
        conversation = panel.conversation_id
        assert conversation is not None
        sent = [f"abc {RLO}def"]
        await wait_until(pilot, lambda: customer_words(other, conversation) == sent)
        assert RLO not in terminal_output(app)


async def test_the_editor_spells_out_a_titles_bidi_override_and_keeps_it(
    make_app: MakeApp, kb_copy: Path
) -> None:
    """The list showed the title as `\\u202…` while its Title field wrote the raw character; the
    text box draws none (`PlainTextArea` says why) and keeps it too."""
    store = PassageStore(kb_copy)
    seen = store.get("helmet")
    title, text = f"Helmets {RLO}free", f"Helmets are {RLO}free at every station."
    store.save(seen.passage.model_copy(update={"title": title, "text": text}),
               based_on=seen.revision)  # fmt: skip
    app = make_app("agent")
    app.driver_class = RecordingDriver
    async with app.run_test(size=(80, 24), headless=False) as pilot:
        editor = await open_editor(pilot)
        await pilot.press("ctrl+f", *"helmet", "enter")
        field = editor.query_one("#form-title", Input)
        area = editor.query_one("#form-text", TextArea)
        await wait_until(pilot, lambda: field.value == title)
        assert area.text == text
        await wait_until(pilot, lambda: "Helmets \\u202efree" in screen_text(app, field))
        assert "Helmets are free at every station." in screen_text(app, area)
        assert RLO not in terminal_output(app)


# -- 4. the passage picker's previews -------------------------------------------------------------


async def test_a_previews_wrapped_lines_stay_under_the_passage_id(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent")
    async with app.run_test(size=(80, 24)) as pilot:
        await engine_ready(app)
        other.claim(waiting(other), agent="ana")
        await wait_until(pilot, lambda: bool(app.screen.query_one(QueueList).items))
        app.screen.query_one("QueueTable").focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.screen.query("#reply")))
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, PassagePicker))
        options = app.screen.query_one("#passages", OptionList)
        await wait_until(pilot, lambda: "card-charged-twice" in screen_text(app, options))
        lines = [line for line in screen_text(app, options).splitlines() if line.strip()]
        column = lines[0].index("card-charged-twice")
        assert column > 1
        for line in lines:  # An id line, its preview, every wrapped line: none under the score.
            assert line[:column].strip() == "", lines


# -- 5. a claimant's name cut at a wide character ---------------------------------------------


async def test_a_name_cut_at_a_wide_character_ends_in_an_ellipsis_right_after_it(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    """At 60 columns the claim cell read `[red]Ana[/]  …`: a cut through 🚲 leaves a space in
    its place, and the ellipsis came after it and the space before it. (The name is cut before
    its time, which stays.)"""
    name = "[red]Ana 🚲 bike"
    app = create_app(settings, mode="agent", http=http, clock=clock, agent=name, timings=False)
    async with app.run_test(size=(60, 20)) as pilot:
        other.claim(waiting(other), agent=name)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        assert queue_rows(app)[0][2] == "[red]Ana… 0s"
