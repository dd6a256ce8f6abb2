"""Driving the app as a person would, and reading what the screen shows."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from rich.cells import cell_len
from textual import events
from textual._compositor import LayoutUpdate
from textual.command import CommandList, CommandPalette
from textual.css.query import NoMatches
from textual.drivers.headless_driver import HeadlessDriver
from textual.keys import _character_to_key
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, TextArea
from textual.widgets._footer import FooterKey

from chatbot.config import Settings, load_settings
from chatbot.desk.models import Author
from chatbot.engine.engine import Engine
from chatbot.errors import HelpdeskError
from chatbot.tui import HelpDeskApp, Mode, create_app
from chatbot.tui.screens.dialogs import BURST_S, ClaimsOnQuit, NameDialog
from chatbot.tui.screens.passage_picker import PassagePicker
from chatbot.tui.screens.stats import StatsScreen
from chatbot.tui.widgets.chat_log import ChatLog
from chatbot.tui.widgets.chat_panel import ChatPanel, StatusLine
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.message_bubble import MessageBubble
from chatbot.tui.widgets.queue_list import QueueTable
from chatbot.tui.widgets.transcript import Transcript
from tests.tui.conftest import FrozenClock


async def engine_ready(app: HelpDeskApp, timeout: float = 30.0) -> Engine:
    """The app's engine, once built: the app builds it in a thread after its first screen."""
    return await asyncio.wait_for(app.services.live.wait_ready(), timeout)


def customer_bubbles(panel: ChatPanel) -> int:
    return sum(1 for b in panel.query(MessageBubble) if b.message.author is Author.CUSTOMER)


def settled(panel: ChatPanel) -> bool:
    """The chat shows a conversation with no question left for the bot."""
    return panel.conversation is not None and panel.conversation.pending == 0


async def ask(pilot: Pilot[None], question: str, *, wait: bool = True) -> None:
    """Type a question into the customer chat and send it; by default wait until it is decided
    (by the app's own bot worker, or any other) and the decision is on screen."""
    app = pilot.app
    panel = app.screen.query_one(ChatPanel)
    before = customer_bubbles(panel)
    field = app.screen.query_one("#question", Input)
    field.focus()
    field.value = question
    await pilot.press("enter")
    if panel.error.display:
        return  # Refused: nothing to wait for.
    await wait_until(pilot, lambda: customer_bubbles(panel) > before)
    if wait:
        await wait_until(pilot, lambda: settled(panel))
    await pilot.pause()


async def type_text(pilot: Pilot[None], text: str) -> None:
    """Type `text` as a fast typist does: every key but the last sent at once, the last pressed
    through Pilot, which waits until it (and so every key before it, queued in order) is handled.
    Pressing key by key waits for the app to go idle after each, ~0.1 s a key."""
    if not text:
        return
    app = pilot.app
    driver = app._driver
    assert driver is not None
    for char in text[:-1]:
        key = char if char.isalnum() else _character_to_key(char)
        event = events.Key(key, char)
        event.set_sender(app)
        driver.send_message(event)
    await pilot.press(text[-1])


async def type_into(pilot: Pilot[None], selector: str, text: str) -> None:
    field = pilot.app.screen.query_one(selector, Input)
    field.focus()
    field.value = text
    await pilot.press("enter")
    await pilot.pause()


def screen_text(app: HelpDeskApp, widget: Widget | None = None) -> str:
    """The screen (or one widget's part of it) as plain text, read from the same full render a
    snapshot stores, so it is exactly what a person would see. Each run of text is laid from the
    cell where it starts, as a screenshot's SVG lays it, without building the SVG (that took a
    tenth of the UI tests' CPU)."""
    width, height = app.size
    grid = [[" "] * width for _ in range(height)]
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    assert isinstance(update, LayoutUpdate)
    for row, line in enumerate(update.strips[:height]):
        column = 0
        for strip in line:
            for text, _style, control in strip:
                # Blank runs are not drawn, as in the SVG: a zero-width character stays in the
                # cell a following run of spaces starts at.
                if control or not text.strip(" "):
                    column += cell_len(text)
                    continue
                for offset, char in enumerate(text.replace("\xa0", " ")[: max(width - column, 0)]):
                    grid[row][column + offset] = char
                column += cell_len(text)
    region = widget.content_region if widget is not None else None
    # Only the part of a widget inside the screen shows (a bubble below the fold, or one laid out
    # before its log scrolled to it).
    rows = range(height) if region is None else range(max(region.y, 0), min(region.bottom, height))
    columns = slice(0, width) if region is None else slice(region.x, region.right)
    return "\n".join("".join(grid[row][columns]).rstrip() for row in rows)


def queue_rows(app: HelpDeskApp) -> list[tuple[str, ...]]:
    """Each queue row as drawn: unread mark, id, status, reason, top score, question. No rows
    until the table is laid out (it is shown with its first row), as none is on screen before."""
    table = app.screen.query_one(QueueTable)
    if not table.scrollable_content_region.width:
        return []
    return [table.row_cells(i) for i in range(table.row_count)]


def flat(text: str) -> str:
    """Whitespace (including line wrapping) and bubble borders collapsed, for finding sentences
    the screen wrapped."""
    return " ".join(text.replace("▎", " ").split())


async def wait_until(
    pilot: Pilot[None], condition: Callable[[], bool], *, timeout: float = 5.0
) -> float:
    """Let the app run until `condition` holds; returns the seconds it took. A widget the
    condition queries that is not there yet (a screen on the stack a moment before its children
    are composed) is the condition not met yet, not an error."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    while not _holds(condition):
        if loop.time() - started > timeout:
            raise AssertionError(f"condition not met within {timeout} s")
        await pilot.pause(0.02)
    return loop.time() - started


def _holds(condition: Callable[[], bool]) -> bool:
    try:
        return condition()
    except NoMatches:
        return False


class RecordingDriver(HeadlessDriver):
    """A headless driver that keeps every byte the app would send to a real terminal, so a test
    can check what reaches a person's screen (escape sequences included)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.written: list[str] = []

    @property
    def is_headless(self) -> bool:
        return False  # Otherwise the app renders nothing at all.

    def write(self, data: str) -> None:
        self.written.append(data)


def terminal_output(app: HelpDeskApp) -> str:
    """Everything the app wrote to its (recording) terminal so far."""
    driver = app._driver
    assert isinstance(driver, RecordingDriver), "run the app with driver_class=RecordingDriver"
    return "".join(driver.written)


async def signals_sent(app: HelpDeskApp) -> None:
    """Wait until every typing signal the app started has reached the desk: finding none sent
    then means none was, not that it had not arrived yet."""
    await app.workers.wait_for_complete([w for w in app.workers if w.group == "typing"])


def footer_offers(app: HelpDeskApp, action: str) -> bool:
    """Whether the footer shows `action`'s key enabled (it redraws a refresh after a change)."""
    return any(
        key.action == action and not key.has_class("-disabled")
        for key in app.screen.query(FooterKey)
    )


def at_end(log: ChatLog) -> bool:
    """Where a chat settles: at its newest entry, or at its start while it shows only its
    greeting (which it does not follow to the end)."""
    if log.greeting_only():
        return log.scroll_y == 0
    return log.scroll_y == log.max_scroll_y


async def steady(pilot: Pilot[None]) -> None:
    """Stop every text cursor blinking (showing it), so a screenshot does not depend on when in
    the blink it is taken, then let the screen repaint."""
    for field in pilot.app.screen.query(Input):
        field.cursor_blink = False
    for area in pilot.app.screen.query(TextArea):
        area.cursor_blink = False
    # A chat keeps its newest entry in view: it scrolls there a frame after a bubble (or the
    # rating below the log) changes its height.
    for log in pilot.app.screen.query(ChatLog):
        await wait_until(pilot, partial(at_end, log))
    # A scrollbar could be drawn as it was a scroll earlier (under load, a chat's thumb a few
    # rows up): each one shown is drawn again, as the scrolling now is.
    for widget in pilot.app.screen.query(Widget):
        if widget.show_vertical_scrollbar:
            widget.vertical_scrollbar.refresh()
        if widget.show_horizontal_scrollbar:
            widget.horizontal_scrollbar.refresh()
    # The footer rebuilds a refresh after the bindings change (a queue filling enables Open):
    # a screenshot taken in between would miss keys.
    await footer_current(pilot)


async def footer_current(pilot: Pilot[None]) -> None:
    """Wait until the footer shows the screen's current keys and has painted them: it rebuilds a
    refresh after the bindings change, so a read straight after a key press can see the old."""
    for footer in pilot.app.screen.query(Footer):
        await wait_until(pilot, partial(getattr, footer, "is_current"))
    await pilot.pause()


async def footer_line(pilot: Pilot[None]) -> str:
    """The screen's bottom line once the footer shows the current keys (`footer_current`)."""
    await footer_current(pilot)
    app = pilot.app
    assert isinstance(app, HelpDeskApp)
    return screen_text(app).splitlines()[-1]


async def palette_ready(pilot: Pilot[None], text: str) -> None:
    """The command palette has searched for `text` (what was typed into it) and highlights its
    best hit, so Enter runs that: a condition, instead of a pause long enough for the search."""
    from textual.command import CommandList, CommandPalette
    from textual.widgets import Input as PaletteInput

    def ready() -> bool:
        screen = pilot.app.screen
        if not isinstance(screen, CommandPalette):
            return False
        # A search runs as a worker per keystroke (each cancels the one before); a finished one
        # leaves the manager.
        group = CommandPalette._GATHER_COMMANDS_GROUP
        searching = any(w.node is screen and w.group == group for w in pilot.app.workers)
        commands = screen.query_one(CommandList)
        return (
            screen.query_one(PaletteInput).value == text
            and not searching
            and commands.option_count > 0
            and commands.highlighted is not None
        )

    await wait_until(pilot, ready)


def squashed(app: HelpDeskApp) -> str:
    """The screen's text without whitespace: a wide (Chinese) character takes two cells, which
    the SVG's text runs do not show as two characters, so only the words are compared."""
    return "".join(screen_text(app).split())


def in_chinese(settings: Settings) -> Settings:
    """Settings on the same database with the agent's and editor's screens in Chinese."""
    return load_settings(store={"db": settings.store.db}, ui={"locale": "zh"})


def agent_app(settings: Settings, http: object, clock: object) -> HelpDeskApp:
    """The agent console on `settings`, as agent ana, with no bot and no timings."""
    return create_app(settings, mode="agent", http=http, clock=clock, agent="ana",  # type: ignore[arg-type]
                      timings=False, bot=False)  # fmt: skip


def read(dialog: Screen[Any]) -> None:
    """As if the agent read the dialog before pressing a key (a letter pressed at once is typing
    a burst goes on with): its opening (or the burst's last key) moved back in time past a
    burst's gap, rather than the test waiting a second out."""
    assert isinstance(dialog, ClaimsOnQuit | NameDialog)
    if dialog._burst is not None:
        dialog._burst -= BURST_S + 0.1


async def burst(pilot: Pilot[None], *keys: str) -> None:
    """Press `keys` as a quick typist does: all sent at once, the last through Pilot, which waits
    until it (and so every key before it, queued in order) is handled. A key name (`ctrl+u`) is a
    key, a single character a character."""
    app = pilot.app
    driver = app._driver
    assert driver is not None
    for key in keys[:-1]:
        if len(key) == 1:
            event = events.Key(key if key.isalnum() else _character_to_key(key), key)
        else:
            event = events.Key(key, None)
        event.set_sender(app)
        driver.send_message(event)
    await pilot.press(keys[-1])


def focus_of(app: HelpDeskApp) -> Widget | None:
    return app.screen.focused


async def chat_panel_ready(pilot: Pilot[None]) -> ChatPanel:
    """The chat panel, once it has taken its shell's place."""
    screen = pilot.app.screen
    await wait_until(pilot, lambda: bool(screen.query(StatusLine)), timeout=30)
    return screen.query_one(ChatPanel)


def chat(app: HelpDeskApp) -> ChatPanel:
    return app.screen.query_one(ChatPanel)


def chat_text(app: HelpDeskApp) -> str:
    """What the customer's side of the screen shows, line wrapping undone."""
    return flat(screen_text(app, chat(app)))


def offered(app: HelpDeskApp, title: str) -> bool:
    """The open command palette lists `title` among its hits."""
    if not isinstance(app.screen, CommandPalette):
        return False
    hits = app.screen.query_one(CommandList)
    return any(title in str(hits.get_option_at_index(i).prompt) for i in range(hits.option_count))


async def open_passage_picker(pilot: Pilot[Any]) -> PassagePicker:
    """Ctrl+O, until the passage picker is up."""
    app = pilot.app
    await pilot.press("ctrl+o")
    await wait_until(pilot, lambda: isinstance(app.screen, PassagePicker))
    picker = app.screen
    assert isinstance(picker, PassagePicker)
    return picker


async def claim_and_pick(pilot: Pilot[Any], view: ConversationView) -> PassagePicker:
    """Claim the open conversation (Ctrl+L) and press Ctrl+O, as the agent does."""
    await pilot.press("ctrl+l")
    await wait_until(pilot, lambda: view.is_mine)
    return await open_passage_picker(pilot)


async def open_stats(pilot: Pilot[Any]) -> StatsScreen:
    app = pilot.app
    await pilot.pause()
    await pilot.press("f5")
    await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen))
    screen = app.screen
    assert isinstance(screen, StatsScreen)
    await wait_until(pilot, lambda: screen.stats is not None)
    await pilot.pause()
    return screen


def written(transcript: Transcript) -> list[str]:
    """Every line the transcript holds, scrolled into view or not, without the trailing blank."""
    lines = [line.text.rstrip() for line in transcript.lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def unnamed_agent(tmp_path: Path, http: httpx.AsyncClient, clock: FrozenClock) -> HelpDeskApp:
    """The agent console of someone who has not given their name yet."""
    settings = load_settings(store={"db": tmp_path / "helpdesk.sqlite3"})
    assert settings.agent.name is None
    return create_app(settings, mode="agent", http=http, clock=clock, timings=False)


class GatedLoader:
    """Returns `settings` (or raises `error`) once the test opens the gate."""

    def __init__(self, settings: Settings | None, error: str | None = None) -> None:
        self.settings = settings
        self.error = error
        self.entered = threading.Event()
        self.opened = threading.Event()

    def __call__(self) -> Settings:
        self.entered.set()
        self.opened.wait(timeout=60)  # Bounded: a failing test leaves no thread behind.
        if self.error is not None:
            raise HelpdeskError(self.error)
        assert self.settings is not None
        return self.settings


def loading_app(
    load: Callable[[], Settings],
    http: httpx.AsyncClient,
    clock: FrozenClock,
    mode: Mode,
    **options: object,
) -> HelpDeskApp:
    return create_app(
        load, mode=mode, http=http, clock=clock, timings=False,
        **options,  # type: ignore[arg-type]
    )  # fmt: skip
