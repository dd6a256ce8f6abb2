"""The customer chat on a phone's browser: about 40 columns, no keyboard shortcuts, only taps.

A tester found there no way to change language (the status line's "F9 中文" was plain text, and
the palette's key had no room in the footer), a Quit key next to "Talk to a person" that ended
the chat on one tap, "Talk to a person" offered while a person already had the conversation, a
replay note that said "pick it with Ctrl+P", rows left blank at the top of the chat after a
switch of language and a turn of the phone, and a status line cut mid-sentence."""

from __future__ import annotations

import pytest
from textual.content import Content
from textual.drivers.headless_driver import HeadlessDriver
from textual.pilot import Pilot

from chatbot.desk.service import DeskService
from chatbot.i18n import translations
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.suggestion_list import ELSEWHERE_NOTE_IN_A_BROWSER, REPLAY_NOTE
from tests.tui.conftest import Q1, MakeApp
from tests.tui.helpers import (
    ask,
    flat,
    footer_current,
    footer_offers,
    screen_text,
    squashed,
    wait_until,
)

PHONE = (40, 40)
"""What the app sees of a phone held upright."""
WAITING_NOTICE = "A person will reply here."
NOTE_IN_A_BROWSER = (
    "Replay mode, no network: the bot has recorded answers for these questions only (anything "
    "else goes to a person). Tap or click one, or type it:"
)


@pytest.fixture
def in_a_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's driver says it is a browser session's (`Driver.is_web`), as `serve`'s does."""
    monkeypatch.setattr(HeadlessDriver, "is_web", property(lambda _driver: True))


def browser_chat(make_app: MakeApp) -> HelpDeskApp:
    """A customer's chat as `helpdesk serve` makes it: their conversation only, no editor."""
    return make_app("chat", fixed_conversation=True, editor=False)


async def chat_ready(pilot: Pilot[None]) -> ChatPanel:
    app = pilot.app
    await wait_until(pilot, lambda: bool(app.screen.query(ChatPanel)))
    panel = app.screen.query_one(ChatPanel)
    await wait_until(pilot, lambda: panel.is_mounted and bool(panel.query("#chat-language")))
    await footer_current(pilot)
    return panel


def footer_actions(app: HelpDeskApp) -> set[str]:
    from textual.widgets._footer import FooterKey

    return {key.action for key in app.screen.query_one(Footer).query(FooterKey)}


def notes(app: HelpDeskApp) -> list[str]:
    """The messages of the notifications shown now."""
    return [notification.message for notification in app._notifications]


def log_rows(app: HelpDeskApp, panel: ChatPanel) -> list[str]:
    """The chat log's rows as drawn."""
    return screen_text(app, panel.log_view).splitlines()


# -- 1. the language hint is a tap away -----------------------------------------------------------


@pytest.mark.usefixtures("in_a_browser")
async def test_a_tap_on_the_language_hint_switches_the_language(make_app: MakeApp) -> None:
    app = browser_chat(make_app)
    async with app.run_test(size=PHONE) as pilot:
        panel = await chat_ready(pilot)
        # A phone has no F9: the hint is the language's name alone, underlined as a link.
        assert "中文" in squashed(app) and "F9" not in squashed(app)
        hint = app.screen.query_one("#chat-language").render()
        assert isinstance(hint, Content) and hint.plain == "中文"
        assert [str(span.style) for span in hint.spans] == ["underline"]
        await pilot.click("#chat-language")
        await wait_until(pilot, lambda: panel.locale == "zh")
        await wait_until(pilot, lambda: "English" in squashed(app))
        assert "您好" in squashed(app)  # The welcome, in Chinese.
        # And back, with one more tap (a double tap is one gesture, not two switches).
        await pilot.click("#chat-language")
        await wait_until(pilot, lambda: panel.locale == "en")
        assert "中文" in squashed(app) and "F9" not in squashed(app)


# -- 2. a browser customer is not offered Quit ----------------------------------------------------


@pytest.mark.usefixtures("in_a_browser")
@pytest.mark.parametrize("size", [PHONE, (80, 24)])
async def test_a_browser_customer_is_not_offered_quit(
    make_app: MakeApp, size: tuple[int, int]
) -> None:
    app = browser_chat(make_app)
    async with app.run_test(size=size) as pilot:
        await chat_ready(pilot)
        await wait_until(pilot, lambda: "talk_to_person" in footer_actions(app))
        assert "quit" not in footer_actions(app)
        assert "Quit" not in screen_text(app).splitlines()[-1]
        # The room it took is the palette's again at 80 columns, or other keys'.
        assert "Talk to a person" in screen_text(app).splitlines()[-1]


async def test_a_terminal_customer_is_still_offered_quit(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=PHONE) as pilot:
        await chat_ready(pilot)
        await wait_until(pilot, lambda: "quit" in footer_actions(app))
        assert "^q Quit" in screen_text(app).splitlines()[-1]


# -- 3. "Talk to a person" only while it can mean something --------------------------------------


@pytest.mark.parametrize("size", [PHONE, (80, 24)])
async def test_talk_to_a_person_is_offered_only_while_no_person_has_the_conversation(
    make_app: MakeApp, other: DeskService, size: tuple[int, int]
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=size, notifications=True) as pilot:
        panel = await chat_ready(pilot)
        assert footer_offers(app, "talk_to_person")  # Nobody has it yet.
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: WAITING_NOTICE in flat(screen_text(app)))
        await wait_until(pilot, lambda: "talk_to_person" not in footer_actions(app))
        # The key still answers a customer used to it.
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: "You are already waiting for a person." in notes(app))
        conversation = panel.conversation_id
        assert conversation is not None
        other.claim(conversation, agent="ben")
        await wait_until(pilot, lambda: "ben (support agent)" in flat(screen_text(app)))
        await footer_current(pilot)
        assert "talk_to_person" not in footer_actions(app)
        # Handed back to the bot: a person can be asked for again.
        other.hand_back(conversation, agent="ben")
        await wait_until(pilot, lambda: footer_offers(app, "talk_to_person"))
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: "talk_to_person" not in footer_actions(app))
        other.claim(conversation, agent="ben")
        await wait_until(pilot, lambda: "ben (support agent)" in flat(screen_text(app)))
        other.resolve(conversation, agent="ben")
        await wait_until(pilot, lambda: footer_offers(app, "talk_to_person"))


# -- 4. the replay note in a browser names no Ctrl+P ----------------------------------------------


@pytest.mark.usefixtures("in_a_browser")
async def test_the_replay_note_in_a_browser_names_no_ctrl_p(make_app: MakeApp) -> None:
    app = browser_chat(make_app)
    async with app.run_test(size=PHONE) as pilot:
        panel = await chat_ready(pilot)
        said = flat(screen_text(app))
        assert "Tap or click one, or type it:" in said and "Ctrl+P" not in said
        await pilot.press("f9")
        await wait_until(pilot, lambda: panel.locale == "zh")
        # Switched before writing: the (English) questions are offered in an English chat only.
        note = translations("zh").gettext(ELSEWHERE_NOTE_IN_A_BROWSER)
        assert note != ELSEWHERE_NOTE_IN_A_BROWSER
        await wait_until(pilot, lambda: "".join(note.split()) in squashed(app))
        assert "Ctrl+P" not in screen_text(app)


async def test_the_replay_note_in_a_terminal_names_ctrl_p(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=PHONE) as pilot:
        await chat_ready(pilot)
        assert "".join(REPLAY_NOTE.split()) in squashed(app)


# -- 5. no blank rows after a switch of language and a turn of the phone ------------------------


@pytest.mark.usefixtures("in_a_browser")
async def test_a_language_switch_after_turning_the_phone_leaves_no_blank_rows(
    make_app: MakeApp,
) -> None:
    app = browser_chat(make_app)
    async with app.run_test(size=(40, 24)) as pilot:  # Upright: the chat overflows.
        panel = await chat_ready(pilot)
        log = panel.log_view
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: WAITING_NOTICE in flat(screen_text(app)))
        # The suggestions go while a person has it: messages for that person overflow it.
        for said in (
            "Is anyone there? I am at the station on Main Street",
            "The dock is full and the app says the bike is still mine",
            "Help",
        ):
            await panel.ask(said)
        await wait_until(pilot, lambda: log.is_anchored)
        # Turned on its side, the language switched (everything fits, in either language).
        await pilot.resize_terminal(84, 39)
        await wait_until(pilot, lambda: log.size.width > 40)
        await pilot.pause()
        await pilot.press("f9")
        await wait_until(pilot, lambda: panel.locale == "zh")
        waiting_zh = "".join(translations("zh").gettext(WAITING_NOTICE).split())
        await wait_until(pilot, lambda: waiting_zh in squashed(app))
        await pilot.pause()
        in_landscape = log_rows(app, panel)
        # Upright again (40 columns, and more rows than at first), and back to English.
        await pilot.resize_terminal(*PHONE)
        await wait_until(pilot, lambda: log.size.width < 40)
        await pilot.pause()
        await pilot.press("f9")
        await wait_until(pilot, lambda: panel.locale == "en")
        await wait_until(pilot, lambda: "Hi! Ask anything" in flat(screen_text(app)))
        await pilot.pause()
        upright = log_rows(app, panel)
        # The welcome sits at the top (after its margin), not a dozen rows down, and the newest
        # notice is in sight.
        assert in_landscape[1].strip(), in_landscape
        assert waiting_zh in "".join("".join(in_landscape).split()), in_landscape
        assert upright[1].startswith("Hi! Ask anything"), upright
        assert WAITING_NOTICE in flat("\n".join(upright)), upright
        assert log.scroll_y >= 0


@pytest.mark.usefixtures("in_a_browser")
async def test_a_chat_that_no_longer_overflows_is_shown_from_the_top(make_app: MakeApp) -> None:
    app = browser_chat(make_app)
    async with app.run_test(size=(40, 24)) as pilot:
        panel = await chat_ready(pilot)
        log = panel.log_view
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: WAITING_NOTICE in flat(screen_text(app)))
        # The suggestions go while a person has it: messages for that person overflow it.
        for said in (
            "Is anyone there? I am at the station on Main Street",
            "The dock is full and the app says the bike is still mine",
            "Help",
        ):
            await panel.ask(said)
        await wait_until(pilot, lambda: log.is_anchored)
        await pilot.resize_terminal(*PHONE)
        await wait_until(pilot, lambda: log.size.height > 20 and log.max_scroll_y == 0)
        await wait_until(pilot, lambda: log.scroll_y == 0)
        # Drawn at its new size a frame after it scrolled: rows read at once were still blank.
        await wait_until(pilot, lambda: log_rows(app, panel)[1].startswith("Hi! Ask anything"))
        assert WAITING_NOTICE in flat("\n".join(log_rows(app, panel)))


# -- 6. the status line wraps rather than losing half its sentence ------------------------------


@pytest.mark.usefixtures("in_a_browser")
async def test_at_40_columns_the_status_line_wraps_to_a_second_line(
    make_app: MakeApp, other: DeskService
) -> None:
    app = browser_chat(make_app)
    async with app.run_test(size=PHONE) as pilot:
        panel = await chat_ready(pilot)
        status = panel.query_one("#chat-status")
        assert status.size.height == 1  # "You are talking to the bot." fits.
        await ask(pilot, Q1)
        conversation = panel.conversation_id
        assert conversation is not None
        other.talk_to_person(conversation)
        other.claim(conversation, agent="ben")
        other.resolve(conversation, agent="ben")
        said = "Resolved. Write again if you need anything else."
        await wait_until(pilot, lambda: said in flat(screen_text(app, status)))
        assert status.size.height == 2
        assert "…" not in screen_text(app, status)
        # Wide enough, one line again.
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: status.size.height == 1)
        assert said in screen_text(app, status)


@pytest.mark.usefixtures("in_a_browser")
async def test_a_status_too_long_for_two_lines_ends_in_an_ellipsis(
    make_app: MakeApp, other: DeskService
) -> None:
    app = browser_chat(make_app)
    async with app.run_test(size=PHONE) as pilot:
        panel = await chat_ready(pilot)
        status = panel.query_one("#chat-status")
        await ask(pilot, Q1)
        conversation = panel.conversation_id
        assert conversation is not None
        other.talk_to_person(conversation)
        name = "Maximiliana [b]Wolkenstein-Trostburg[/b] Esterhazy"  # Shown as typed.
        other.claim(conversation, agent=name)
        await wait_until(pilot, lambda: "Maximiliana" in screen_text(app, status))
        # Drawn, then laid out at two rows (a loaded machine can look in between).
        await wait_until(pilot, lambda: len(screen_text(app, status).splitlines()) == 2)
        rows = screen_text(app, status).splitlines()
        assert len(rows) == 2 and status.size.height == 2, rows
        assert rows[0].strip() == "Maximiliana [b]Wolkenstein-Trostburg[/b]"[: len(rows[0].strip())]
        assert rows[1].rstrip().endswith("…"), rows


@pytest.mark.usefixtures("in_a_browser")
async def test_ctrl_c_in_a_browser_chat_points_at_closing_the_page_not_at_quit(
    make_app: MakeApp,
) -> None:
    app = browser_chat(make_app)
    async with app.run_test(size=PHONE, notifications=True) as pilot:
        await chat_ready(pilot)
        app.screen.set_focus(None)  # Where nothing is there to copy.
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: bool(notes(app)))
        assert notes(app) == ["Close the page to leave: your conversation is kept."]
        assert app.is_running


async def test_ctrl_c_in_a_terminal_chat_still_says_how_to_quit(make_app: MakeApp) -> None:
    app = make_app("chat")
    async with app.run_test(size=PHONE, notifications=True) as pilot:
        await chat_ready(pilot)
        app.screen.set_focus(None)  # Where nothing is there to copy.
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: bool(notes(app)))
        assert notes(app) == ["Press Ctrl+Q to quit the app."]


def system_titles(app: HelpDeskApp) -> list[str]:
    return [command.title for command in app.get_system_commands(app.screen)]


@pytest.mark.usefixtures("in_a_browser")
async def test_a_browser_customers_palette_offers_no_quit_and_no_screenshot(
    make_app: MakeApp,
) -> None:
    """A browser's customer leaves by closing the page, and a screenshot would be saved on the
    server's disk: the palette offered both (Textual's own commands)."""
    app = browser_chat(make_app)
    async with app.run_test(size=PHONE) as pilot:
        await chat_ready(pilot)
        titles = system_titles(app)
        assert "Quit" not in titles and "Screenshot" not in titles
        assert "Theme" in titles  # Textual's others stay.


async def test_a_terminal_customers_palette_still_offers_quit_and_screenshot(
    make_app: MakeApp,
) -> None:
    app = make_app("chat")
    async with app.run_test(size=PHONE) as pilot:
        await chat_ready(pilot)
        assert {"Quit", "Screenshot"} <= set(system_titles(app))
