"""Who `helpdesk serve` lets in, and what it leaves: a reload at the session limit gets its own
session back; a page refused as its session opens is told the server is busy, and starts no
conversation (nor does a fetched page, or a browser keeping no cookies, which is told it needs
them); a failed sign-in lands on a page Back and Reload do not send again; a server killed
outright leaves no zygote folder behind."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Route

from tests.web.conftest import PASSWORD, VIEWPORT, make_site
from tests.web.harness import (
    START_TIMEOUT_S,
    Served,
    Session,
    alive,
    children,
    command_line,
    start_server,
    wait_for,
)

DRAWN = "body.-first-byte"
"""The page's terminal has had the app's first output."""
BUSY = "The help desk is serving as many people as it can."


def conversation_count(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as connection:
        [(count,)] = connection.execute("SELECT count(*) FROM conversations").fetchall()
    return int(count)


def limited(home: Path, **environment: str) -> Served:
    """A server of the test's own (no bot workers: nobody asks anything here)."""
    db, kb = make_site(home)
    return start_server(home, db=db, kb=kb, extra=["--bots", "0"], environment=environment)


def health(served: Served) -> dict[str, object]:
    answer: dict[str, object] = httpx.get(served.url + "/healthz").json()
    return answer


def open_page(context: BrowserContext, url: str) -> Page:
    """A page whose session opened: it loaded (200) and its app drew."""
    page = context.new_page()
    response = page.goto(url)
    assert response is not None and response.status == 200, url
    page.wait_for_selector(DRAWN, state="attached", timeout=START_TIMEOUT_S * 1000)
    return page


def the_session_after(served: Served, earlier: Session | None) -> Session:
    """The one session running, once it is a newer one than `earlier`."""

    def one_newer() -> Session | None:
        running = served.sessions()
        if len(running) == 1 and (earlier is None or running[0].number > earlier.number):
            return running[0]
        return None

    return wait_for(one_newer, what="one session, a new one")


def sign_in_page(page: Page, served: Served, name: str, password: str) -> None:
    page.goto(served.url + "/agent")
    page.fill("#name", name)
    page.fill("#password", password)
    with page.expect_navigation():
        page.click("button[type=submit]")


# -- 1. a reload at the limit ------------------------------------------------------------------


def test_a_reload_at_the_limit_gets_its_own_session_back(tmp_path: Path, browser: Browser) -> None:
    """One session per address. The customer's reload (and an agent's) was refused with the
    503 page: the old session still counted when the new page was asked for. Another browser
    from the address is still refused."""
    served = limited(tmp_path, HELPDESK_WEB__MAX_SESSIONS_PER_ADDRESS="1")
    customer, other, agent = (browser.new_context(viewport=VIEWPORT) for _ in range(3))
    try:
        page = open_page(customer, served.url + "/")
        session = the_session_after(served, None)
        refused = other.new_page().goto(served.url + "/")
        assert refused is not None and refused.status == 503
        for _ in range(2):
            response = page.reload()
            assert response is not None and response.status == 200
            page.wait_for_selector(DRAWN, state="attached", timeout=START_TIMEOUT_S * 1000)
            reloaded = the_session_after(served, session)
            assert reloaded.conversation == session.conversation
            session = reloaded
        assert health(served)["sessions"] == 1
        customer.close()
        wait_for(lambda: served.sessions() == [], what="the chat to end")

        page = agent.new_page()
        sign_in_page(page, served, "ana", PASSWORD)
        page.wait_for_selector(DRAWN, state="attached", timeout=START_TIMEOUT_S * 1000)
        console = the_session_after(served, session)
        assert console.account == "ana"
        response = page.reload()
        assert response is not None and response.status == 200
        page.wait_for_selector(DRAWN, state="attached", timeout=START_TIMEOUT_S * 1000)
        assert the_session_after(served, console).account == "ana"
    finally:
        for context in (customer, other, agent):
            context.close()
        assert served.stop() == 0


def test_a_second_tab_at_the_limit_takes_its_browsers_place(
    tmp_path: Path, browser: Browser
) -> None:
    """One session in all. A second tab of the same browser (its cookie) is not refused: it takes
    the first tab's place, whose page says its session ended. One browser holds no more places
    than before, and another browser is still refused."""
    served = limited(tmp_path, HELPDESK_WEB__MAX_SESSIONS="1")
    context, other = (browser.new_context(viewport=VIEWPORT) for _ in range(2))
    try:
        first = open_page(context, served.url + "/")
        old = the_session_after(served, None)
        open_page(context, served.url + "/")
        first.wait_for_selector("body.-closed", state="attached")
        why = first.locator(".closed-dialog .why")
        why.wait_for(state="visible", timeout=10_000)
        assert why.inner_text() == "It was opened again in another tab or window."
        new = the_session_after(served, old)
        assert new.conversation == old.conversation
        assert health(served)["sessions"] == 1
        refused = other.new_page()
        response = refused.goto(served.url + "/")
        assert response is not None and response.status == 503
        assert BUSY in refused.inner_text("p.lead")
    finally:
        context.close()
        other.close()
        assert served.stop() == 0


# -- 2. refused as the session opens -----------------------------------------------------------


def test_a_page_refused_as_its_session_opens_says_the_server_is_busy(
    tmp_path: Path, browser: Browser, artifacts: Path
) -> None:
    """The page was served while there was room; the last place went to someone else before its
    websocket opened. The page said only "This session has ended", with no retry, and a
    conversation had been started for it."""
    served = limited(tmp_path, HELPDESK_WEB__MAX_SESSIONS="1")
    late, first = (browser.new_context(viewport=VIEWPORT) for _ in range(2))
    try:
        before = conversation_count(served.db)
        page = late.new_page()
        held: list[Route] = []

        def hold(route: Route) -> None:
            held.append(route)

        page.route("**/static/js/textual.js", hold)  # Its websocket waits for this.
        response = page.goto(served.url + "/", wait_until="commit")
        assert response is not None and response.status == 200  # There was room.
        open_page(first, served.url + "/")
        the_session_after(served, None)
        wait_for(lambda: page.evaluate("0") == 0 and held, what="the late page's script")
        held[0].continue_()
        page.wait_for_url("**/unavailable?**")
        page.screenshot(path=artifacts / "serve-refused-as-it-opens.png")
        assert BUSY in page.inner_text("p.lead")
        assert "This page tries again by itself in a minute." in page.inner_text("p.lead")
        assert page.get_attribute("a.button", "href") == "/"
        refresh = page.get_attribute('meta[http-equiv="refresh"]', "content")
        assert refresh == "60; url=/"
        # One conversation, the first customer's: none for the refused page.
        assert conversation_count(served.db) == before + 1
        assert health(served)["refused"] == {"busy": 1}
        assert len(served.sessions()) == 1
    finally:
        late.close()
        first.close()
        assert served.stop() == 0


READY = """() => {
    const body = document.body;
    if (!body) return "";
    if (body.classList.contains("-closed")) return "ended";
    if (body.classList.contains("-first-byte")) return "drawn";
    const lead = document.querySelector("p.lead");
    return lead && lead.textContent.includes("serving as many people") ? "busy" : "";
}"""
"""How a page ended up: its app drew, it said the server is busy, or its session ended."""


def test_pages_opened_together_past_the_limit_are_told_the_server_is_busy(
    tmp_path: Path, browser: Browser
) -> None:
    """Four pages at once, two sessions at most: two chats, two pages saying the server is busy
    (however far each got before it was refused), and two conversations, not four."""
    served = limited(tmp_path, HELPDESK_WEB__MAX_SESSIONS="2")
    contexts = [browser.new_context(viewport=VIEWPORT) for _ in range(4)]
    try:
        before = conversation_count(served.db)
        pages = [context.new_page() for context in contexts]
        for page in pages:
            page.goto(served.url + "/", wait_until="commit")
        ends = []
        for page in pages:
            handle = page.wait_for_function(READY, timeout=START_TIMEOUT_S * 1000)
            ends.append(handle.json_value())
        assert sorted(ends) == ["busy", "busy", "drawn", "drawn"]
        assert conversation_count(served.db) == before + 2
        assert len(served.sessions()) == 2
    finally:
        for context in contexts:
            context.close()
        assert served.stop() == 0


# -- 3. a browser that keeps no cookies ----------------------------------------------------------


def test_a_browser_keeping_no_cookies_is_told_so_and_starts_no_conversation(
    tmp_path: Path, browser: Browser, artifacts: Path
) -> None:
    """Its page's cookie never comes back. It got "This session has ended" at once, and each
    "Start again" started another empty conversation."""
    served = limited(tmp_path)
    context = browser.new_context(viewport=VIEWPORT)

    def forget_cookies(route: Route) -> None:
        # As a browser that keeps none: what the page set is gone before its chat opens.
        context.clear_cookies()
        route.continue_()

    try:
        context.route("**/static/js/textual.js", forget_cookies)
        before = conversation_count(served.db)
        page = context.new_page()
        page.goto(served.url + "/")
        page.wait_for_url("**/cookies**")
        page.screenshot(path=artifacts / "serve-cookies-needed.png")
        assert "Allow cookies for this site, then try again." in page.inner_text("p.lead")
        assert page.locator('meta[http-equiv="refresh"]').count() == 0
        with page.expect_response(lambda response: "/cookies" in response.url):
            page.click("a.button")  # Try again: told again, and still nothing started.
        page.wait_for_selector("p.lead")
        assert conversation_count(served.db) == before
        assert served.sessions() == []
        assert health(served)["refused"] == {"no_cookies": 2}
    finally:
        context.close()
        assert served.stop() == 0


def test_a_new_customers_conversation_starts_with_their_chat_not_their_page(
    tmp_path: Path, browser: Browser
) -> None:
    """Fetching the page starts nothing (a link preview, a crawler); the chat's websocket, back
    with the page's cookie, starts the conversation and names it in the cookie, which brings it
    back on a reload."""
    served = limited(tmp_path)
    context = browser.new_context(viewport=VIEWPORT)
    try:
        before = conversation_count(served.db)
        assert httpx.get(served.url + "/").status_code == 200
        assert conversation_count(served.db) == before
        page = open_page(context, served.url + "/")
        session = the_session_after(served, None)
        assert conversation_count(served.db) == before + 1
        page.reload()
        page.wait_for_selector(DRAWN, state="attached", timeout=START_TIMEOUT_S * 1000)
        assert the_session_after(served, session).conversation == session.conversation
    finally:
        context.close()
        assert served.stop() == 0


# -- 4. Post/Redirect/Get for sign-in ------------------------------------------------------------


def test_a_failed_sign_in_is_answered_with_a_page_to_get(fresh_server: Served) -> None:
    """`GET /signin` was a bare 405, and a failure was the POST's own page."""
    served = fresh_server
    origin = {"Origin": served.url}
    form = {"name": "eddie", "password": "s3cret guess", "next": "/editor"}
    browser = httpx.Client(base_url=served.url)  # Keeps cookies, as a browser does.
    response = browser.post("/signin", data=form, headers=origin)
    assert response.status_code == 303
    location = response.headers["location"]
    # Neither the password nor the name in the address (history, proxy logs): the name
    # typed comes back from a cookie of a few minutes.
    assert urlsplit(location).path == "/signin" and "s3cret" not in location
    assert parse_qs(urlsplit(location).query) == {"next": ["/editor"], "error": ["wrong"]}
    for _ in range(6):  # Fetched again and again (reloads): no failure is counted.
        page = browser.get(location)
        assert page.status_code == 401 and "Wrong name or password." in page.text
        assert 'value="eddie"' in page.text
        assert "Sign in to open the knowledge-base editor." in page.text
    bare = httpx.get(served.url + "/signin")
    assert bare.status_code == 200 and '<form method="post" action="/signin"' in bare.text
    assert "Sign in to open the agent console." in bare.text and 'class="error"' not in bare.text
    form["password"] = PASSWORD
    assert httpx.post(served.url + "/signin", data=form, headers=origin).headers["location"] == (
        "/editor"
    )

    # Five failures for ana from the address: the sixth attempt is not checked, and its page
    # says why. (Eddie's failure above counts for eddie: one name's lock is that name's.)
    for _ in range(5):
        wrong = {"name": "ana", "password": "nope nope", "next": "/agent"}
        httpx.post(served.url + "/signin", data=wrong, headers=origin)
    form = {"name": "ana", "password": PASSWORD, "next": "/agent"}
    locked = browser.post("/signin", data=form, headers=origin)
    assert locked.status_code == 303 and "helpdesk-session" not in locked.headers["set-cookie"]
    page = browser.get(locked.headers["location"])
    assert page.status_code == 429 and 0 < int(page.headers["retry-after"]) <= 60
    assert "Too many failed sign-ins. Try again in " in page.text
    browser.close()


def test_back_and_reload_after_a_failed_sign_in_send_nothing_again(
    context: BrowserContext, fresh_server: Served
) -> None:
    """Reload sent the wrong password again (five reloads locked the account out) and Back to
    the failure's page gave ERR_CACHE_MISS."""
    served = fresh_server
    page = context.new_page()
    sign_in_page(page, served, "ana", "the wrong one")
    page.wait_for_url("**/signin?**")
    assert page.inner_text("p.error") == "Wrong name or password."
    for _ in range(5):
        response = page.reload()
        assert response is not None and response.status == 401
    assert page.input_value("#name") == "ana"
    page.fill("#password", PASSWORD)  # Still checked: the reloads sent no password.
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert page.url == served.url + "/agent"
    page.wait_for_selector(DRAWN, state="attached", timeout=START_TIMEOUT_S * 1000)
    # Back to the failure's page, once signed in: the console, not a stale "wrong password".
    page.go_back()
    page.wait_for_url(served.url + "/agent")
    assert not page.locator("form#signin").count()


# -- 5. the zygote's folder ----------------------------------------------------------------------


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A TMPDIR of the test's own, short and under /tmp (the zygote's socket path must fit
    AF_UNIX's 108 bytes); whatever still runs from it at the end is killed."""
    folder = Path(tempfile.mkdtemp(prefix="hd-"))
    yield folder
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and any(str(folder) in p for p in command_line(int(entry.name))):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(entry.name), signal.SIGKILL)
    shutil.rmtree(folder, ignore_errors=True)


def test_a_server_killed_outright_leaves_no_folder_behind(tmp_path: Path, short_tmp: Path) -> None:
    """`kill -9` of serve left /tmp/helpdesk-serve-…/zygote.sock and its folder for good. Its
    zygote, ended by that death, removes them."""
    served = limited(tmp_path, TMPDIR=str(short_tmp))
    [folder] = wait_for(lambda: list(short_tmp.glob("helpdesk-serve-*")), what="its folder")
    assert (folder / "zygote.sock").is_socket()
    [zygote] = [p for p in children(served.process.pid) if "chatbot.web.zygote" in command_line(p)]
    served.process.kill()
    served.process.wait()
    wait_for(lambda: not alive(zygote), what="the zygote to end")
    wait_for(lambda: not folder.exists(), what="its folder to go")
    assert list(short_tmp.iterdir()) == []


def test_serve_removes_the_folders_of_servers_that_are_gone(
    tmp_path: Path, short_tmp: Path
) -> None:
    """Folders of this user's servers that are gone (their zygote killed with them) are
    removed at the next start; a running server's, one that may be starting and anything else
    stay."""
    ended = subprocess.Popen(["true"])
    ended.wait()
    gone = short_tmp / f"helpdesk-serve-{ended.pid}-a1b2c3"
    reused = short_tmp / f"helpdesk-serve-{os.getpid()}-d4e5f6"  # Its pid is another's now.
    running = short_tmp / f"helpdesk-serve-{os.getpid()}-g7h8i9"
    older = short_tmp / "helpdesk-serve-j0k1l2"  # Named as before: a socket nobody listens on.
    starting = short_tmp / "helpdesk-serve-m3n4o5"  # Named as before, no socket yet.
    other = short_tmp / "something-else"
    for folder in (gone, reused, running, older, starting, other):
        folder.mkdir()
    (gone / "zygote.sock").touch()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as left:
        left.bind(str(older / "zygote.sock"))
    os.utime(reused, (0, 0))  # Last changed before this process (its pid's owner now) started.
    made = {folder.name for folder in short_tmp.iterdir()}
    served = limited(tmp_path, TMPDIR=str(short_tmp))
    try:
        left_behind = {folder.name for folder in short_tmp.iterdir()}
        assert left_behind & made == {running.name, starting.name, other.name}
        [own] = left_behind - made  # The server's own, named with its pid.
        assert own.startswith(f"helpdesk-serve-{served.process.pid}-")
    finally:
        assert served.stop() == 0
    assert not (short_tmp / own).exists()
