"""`helpdesk serve` without a browser: its warnings, its limits, sessions that end, bad options."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
import pytest
from aiohttp import ClientSession
from playwright.sync_api import Browser, Page

from chatbot.accounts.service import AccountService
from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.store.sqlite_users import SQLiteUserStore
from tests.web.conftest import PASSWORD, VIEWPORT, make_site
from tests.web.harness import (
    FAST_HASHER,
    Served,
    run_async,
    screenshot_changes,
    server_environment,
    settled,
    start_server,
    transcript,
    wait_for,
)
from tests.web.server_helpers import sign_in


def test_listening_on_every_address_warns_that_tls_belongs_to_a_proxy(tmp_path: Path) -> None:
    db, kb = make_site(tmp_path)
    served = start_server(tmp_path, db=db, kb=kb, extra=["--host", "0.0.0.0"])
    try:
        wait_for(lambda: any("TLS proxy" in line for line in served.output), what="the warning")
        warning = next(line for line in served.output if "TLS proxy" in line)
        assert warning.startswith("helpdesk serve: warning: listening on 0.0.0.0 over plain HTTP")
    finally:
        assert served.stop() == 0


def test_a_new_password_ends_every_session_signed_in_before(served: Served) -> None:
    cookie = sign_in(served, "root").cookies["helpdesk-session"]
    with httpx.Client(base_url=served.url, cookies={"helpdesk-session": cookie}) as client:
        assert 'id="terminal"' in client.get("/agent").text
        assert 'id="terminal"' in client.get("/editor").text  # An admin opens both.
        service = AccountService(SQLiteUserStore.open(served.db), hasher=FAST_HASHER)
        service.set_password("root", PASSWORD + "!")
        page = client.get("/agent").text
        assert 'id="terminal"' not in page and 'form method="post" action="/signin"' in page
        service.set_password("root", PASSWORD)
        service.close()
        assert 'id="terminal"' not in client.get("/agent").text  # Same password, new epoch.


def test_what_is_typed_on_the_sign_in_page_comes_back_escaped(served: Served) -> None:
    refused = sign_in(served, '<img src=x onerror="alert(1)">', "nope nope")
    assert refused.status_code == 303  # To the page that says why (see test_admission.py).
    response = httpx.get(served.url + refused.headers["location"], cookies=refused.cookies)
    assert response.status_code == 401
    assert "<img" not in response.text and "&lt;img src=x onerror=&quot;" in response.text


def test_our_pages_speak_the_browsers_language(served: Served) -> None:
    """Chinese first in Accept-Language: the sign-in page, its error, the page around the app and
    the messages are in Chinese (names and roles as they are); other browsers get English."""
    zh = {"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"}
    page = httpx.get(served.url + "/agent", headers=zh)
    assert page.headers["Vary"] == "Accept-Language"
    assert '<html lang="zh">' in page.text and "登录以打开客服控制台。" in page.text
    assert ">用户名<" in page.text and ">密码<" in page.text and "Sign in" not in page.text
    refused = httpx.post(
        served.url + "/signin",
        data={"name": "ana", "password": "not the password", "next": "/agent"},
        headers={"Origin": served.url} | zh,
        follow_redirects=True,
    )
    assert refused.status_code == 401 and "用户名或密码错误。" in refused.text
    cookie = sign_in(served, "ana").cookies["helpdesk-session"]
    cookies = {"helpdesk-session": cookie}
    with httpx.Client(base_url=served.url, cookies=cookies, headers=zh) as client:
        editor = client.get("/editor")
        assert editor.status_code == 403 and "ana（agent）无法打开知识库编辑器。" in editor.text
        assert ">退出登录</button>" in editor.text
        console = client.get("/agent").text
        assert "客服控制台：正在连接…" in console and "本次会话已结束。" in console
        assert "当前登录身份：ana（agent）。" in client.get("/signout").text
    other = {"Accept-Language": "fr, en;q=0.8, zh;q=0.5"}
    english = httpx.get(served.url + "/agent", headers=other)
    assert '<html lang="en">' in english.text
    assert "Sign in to open the agent console." in english.text


def first_screen(served: Served, area: str, cookie: str, accept_language: str, *until: str) -> str:
    """What the app of a session on `/ws/{area}` draws first, as the page's terminal gets it,
    until it shows one of `until`."""
    ws_url = served.url.replace("http://", "ws://") + f"/ws/{area}?width=100&height=30"
    headers = {"Origin": served.url, "Cookie": cookie, "Accept-Language": accept_language}
    marks = [text.encode() for text in until]

    async def read() -> bytes:
        drawn = b""
        async with ClientSession() as session:
            async with await session.ws_connect(ws_url, headers=headers) as socket:
                async for message in socket:
                    if isinstance(message.data, bytes):
                        drawn += message.data
                    if any(mark in drawn for mark in marks):
                        break
        return drawn

    return run_async(read()).decode("utf-8", "replace")


def test_a_customers_chat_starts_in_the_browsers_language(served: Served) -> None:
    """The app inside follows the page: a customer whose browser asks for Chinese sees the chat
    in Chinese before writing anything, another browser English (the first message decides
    after, as the app's tests show)."""

    def customer() -> str:
        return "helpdesk-chat=" + httpx.get(served.url + "/").cookies["helpdesk-chat"]

    welcome = ("您好", "Hi! Ask")
    chinese = first_screen(served, "chat", customer(), "zh-CN,zh;q=0.9,en;q=0.8", *welcome)
    assert "您好！关于租车" in chinese and "Hi! Ask" not in chinese
    english = first_screen(served, "chat", customer(), "fr, en;q=0.8", *welcome)
    assert "Hi! Ask anything" in english and "您好" not in english


def test_an_agents_console_is_in_the_browsers_language(served: Served) -> None:
    """As the sign-in page around it: the server names no language (ui.locale), so each agent's
    console is in their own browser's."""
    cookie = "helpdesk-session=" + sign_in(served, "ana").cookies["helpdesk-session"]
    queue = ("转人工队列", "Handoff queue")
    chinese = first_screen(served, "agent", cookie, "zh-CN,zh;q=0.9,en;q=0.8", *queue)
    assert "转人工队列" in chinese and "Handoff queue" not in chinese
    english = first_screen(served, "agent", cookie, "fr, en;q=0.8", *queue)
    assert "Handoff queue" in english and "转人工队列" not in english


def a_new_customer_asks(
    browser: Browser, served: Served, question: str, ask: Callable[[Page], None]
) -> None:
    """A new customer's page, once drawn: `ask(page)` sends `question`, which reaches their
    conversation in the store."""
    before = {s.conversation for s in served.sessions()}
    context = browser.new_context(viewport=VIEWPORT)
    try:
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=served.url)
        page = context.new_page()
        page.goto(served.url + "/")
        page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
        settled(page)
        ask(page)
        [mine] = wait_for(
            lambda: [s.conversation for s in served.sessions() if s.conversation not in before],
            what="the customer's session",
        )
        assert mine is not None
        wait_for(
            lambda: any(text == question for _, text, _ in transcript(served.db, mine)),
            what="the question in the store",
        )
    finally:
        context.close()


def test_what_a_customer_types_on_arrival_reaches_the_chat_without_a_click(
    browser: Browser, served: Served
) -> None:
    """The page gives the terminal the keyboard once the app has drawn: a customer who starts
    typing at once is heard, and the app, told it has the focus, shows its keys."""
    question = "Can I bring my dog on the bike?"

    def type_at_once(page: Page) -> None:
        assert page.evaluate("document.activeElement.classList.contains('xterm-helper-textarea')")
        page.keyboard.type(question)  # No click first.
        page.keyboard.press("Enter")

    a_new_customer_asks(browser, served, question, type_at_once)


def test_ctrl_v_pastes_into_the_chat(browser: Browser, served: Served) -> None:
    """xterm.js took Ctrl+V for the key ^V and stopped the browser's paste: a customer's Ctrl+V
    did nothing (Ctrl+Shift+V worked)."""
    question = "Pasted with Ctrl+V: can I pause a rental?"

    def paste(page: Page) -> None:
        page.evaluate("text => navigator.clipboard.writeText(text)", question)
        page.keyboard.press("Control+v")
        page.keyboard.press("Enter")

    a_new_customer_asks(browser, served, question, paste)


def conversation_count(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as connection:
        [(count,)] = connection.execute("SELECT count(*) FROM conversations").fetchall()
    return int(count)


def test_sessions_are_capped_and_a_full_servers_page_says_why(tmp_path: Path) -> None:
    """One session per address, two in all (addresses told apart by a trusted proxy's header).
    A handshake over either cap sends its page to the page that says why; a page that would
    open one says why instead, in the browser's language; neither starts a conversation."""
    db, kb = make_site(tmp_path)
    served = start_server(tmp_path, db=db, kb=kb, environment={
        "HELPDESK_WEB__MAX_SESSIONS_PER_ADDRESS": "1",
        "HELPDESK_WEB__MAX_SESSIONS": "2",
        "HELPDESK_WEB__TRUST_PROXY_HEADERS": "1",
    })  # fmt: skip
    a, b, c = ({"X-Forwarded-For": f"10.0.0.{n}"} for n in (1, 2, 3))
    agent = sign_in(served, "ana").cookies
    try:
        cookies = [httpx.get(served.url + "/", headers=a).cookies["helpdesk-chat"] for _ in "ab"]
        ws_url = served.url.replace("http://", "ws://") + "/ws/chat"

        def sessions_open(count: int) -> None:
            wait_for(lambda: httpx.get(served.url + "/healthz").json()["sessions"] == count,
                     what=f"{count} sessions")  # fmt: skip

        def page(path: str, address: dict[str, str], **headers: str) -> httpx.Response:
            return httpx.get(served.url + path, headers={**address, **headers}, cookies=agent)

        async def refusals() -> tuple[object, list[httpx.Response]]:
            async with ClientSession() as session:
                headers = {"Origin": served.url, "Cookie": f"helpdesk-chat={cookies[0]}", **a}
                first = await session.ws_connect(ws_url, headers=headers)
                sessions_open(1)
                before = conversation_count(db)
                pages = [page("/", a, **{"Accept-Language": "zh-CN"})]
                assert conversation_count(db) == before  # Nothing started for a refused page.
                headers["Cookie"] = f"helpdesk-chat={cookies[1]}"
                async with session.ws_connect(ws_url, headers=headers) as refused_socket:
                    told = await refused_socket.receive_json()
                assert conversation_count(db) == before  # Nor for a refused handshake.
                second = await session.ws_connect(ws_url, headers={**headers, **b})
                sessions_open(2)
                pages += [page("/", c), page("/agent", c)]
                # An uptime check's HEAD at the limit is answered, and counted as no refusal.
                assert httpx.head(served.url + "/", headers=c).status_code == 503
                await first.close()
                await second.close()
            return told, pages

        told, [address_full, busy, agents] = run_async(refusals())
        assert told == ["open_url", {"url": "/unavailable?why=address_full&page=%2F",
                                     "new_tab": False}]  # fmt: skip
        assert address_full.status_code == 503 and address_full.headers["Retry-After"] == "60"
        assert "您的地址打开的客服页面过多" in address_full.text and 'href="/"' in address_full.text
        assert '<meta http-equiv="refresh" content="60; url=/">' in address_full.text
        assert "helpdesk-chat" not in address_full.cookies
        assert busy.status_code == 503 and "serving as many people as it can" in busy.text
        assert "This page tries again by itself in a minute." in busy.text
        assert agents.status_code == 503 and 'href="/agent"' in agents.text
        # The operator's view: each page turned away, and the one handshake, by why.
        refused = httpx.get(served.url + "/healthz").json()["refused"]
        assert refused == {"address_full": 2, "busy": 2}
        sessions_open(0)  # Once the sessions end, pages open them again.
        assert 'id="terminal"' in page("/", a).text and 'id="terminal"' in page("/agent", a).text
    finally:
        assert served.stop() == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--public-url", "help.example.com"], "--public-url must start with https://"),
        (
            ["--port", "70000"],
            "invalid web option --port: Input should be less than or equal to 65535",
        ),
        (["--bots", "-1"], "invalid web option --bots: Input should be greater than or equal to 0"),
    ],
)
def test_bad_options_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "chatbot", "serve", "--db", str(tmp_path / "h.sqlite3"), *args],
        capture_output=True,
        text=True,
        env=server_environment(tmp_path),
        timeout=60,
    )
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_removing_an_account_closes_its_open_console(
    tmp_path: Path, browser: Browser, artifacts: Path
) -> None:
    db, kb = make_site(tmp_path)
    served = start_server(
        tmp_path, db=db, kb=kb, environment={"HELPDESK_WEB__SESSION_CHECK_S": "0.2"}
    )
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(served.url + "/agent")
        page.fill("#name", "ana")
        page.fill("#password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
        wait_for(lambda: served.sessions(), what="the console's process")
        service = AccountService(SQLiteUserStore.open(db), hasher=FAST_HASHER)
        service.remove("ana")
        service.close()
        page.wait_for_selector("body.-closed", state="attached", timeout=30_000)
        wait_for(lambda: served.sessions() == [], what="the console's process to end")
        page.goto(served.url + "/agent")
        assert page.locator("form#signin").is_visible()
    finally:
        context.close()
        assert served.stop() == 0


def test_signing_out_ends_the_session_in_that_browser(served: Served) -> None:
    cookie = sign_in(served, "eddie").cookies["helpdesk-session"]
    with httpx.Client(base_url=served.url, cookies={"helpdesk-session": cookie}) as client:
        assert "Signed in as eddie (editor)." in client.get("/signout").text
        refused = client.post("/signout")  # No Origin: not from our page.
        assert refused.status_code == 403
        out = client.post("/signout", headers={"Origin": served.url})
        assert out.status_code == 303 and 'helpdesk-session=""' in out.headers["set-cookie"]
        client.cookies.clear()
        assert "You are not signed in." in client.get("/signout").text
    assert httpx.get(served.url + "/").headers["server"] == "helpdesk"


def test_an_agents_tab_is_marked_when_a_customer_needs_them(
    browser: Browser, served: Served
) -> None:
    """The console rings its bell while the terminal has not the focus (the agent is in another
    tab); the page marks its title for it, and unmarks it when the terminal has the focus
    again. News that comes while the agent is in the terminal marks nothing."""
    desk = open_service(load_settings(store={"db": str(served.db)}))
    context = browser.new_context(viewport=VIEWPORT)
    try:
        cookie = sign_in(served, "ana").cookies["helpdesk-session"]
        context.add_cookies([{"name": "helpdesk-session", "value": cookie, "url": served.url}])
        page = context.new_page()
        page.goto(served.url + "/agent")
        title = page.title()
        settled(page, still_s=0.3)  # Its wait times tick every second.

        def someone_waits() -> None:
            desk.talk_to_person(desk.start_conversation().id)

        someone_waits()  # Seen, in the terminal: the queue's row is news enough.
        looking = settled(page, still_s=0.3)
        assert page.title() == title
        # As when the agent switches tabs: the terminal loses the focus, and the app, told so,
        # draws its queue without the focused row's highlight.
        page.evaluate("document.activeElement.blur()")
        screenshot_changes(page, looking, what="the console drawn without the focus")
        someone_waits()
        wait_for(lambda: page.title() == "\u25cf " + title, what="the title's mark")
        page.locator("#terminal").click()
        wait_for(lambda: page.title() == title, what="the mark gone")
    finally:
        context.close()
        desk.close()


def conversation_times(served: Served, cookie: str, conversation: int, question: str) -> str:
    """What an agent's session draws once it opens `conversation` (found by its number, as the
    queue holds other tests' conversations too), as the page's terminal gets it."""
    ws_url = served.url.replace("http://", "ws://") + "/ws/agent?width=100&height=30"
    headers = {"Origin": served.url, "Cookie": cookie}
    mark = question.encode()
    hit = b"found. Enter opens"  # The search has listed its hits (Enter opens the first).

    async def read() -> bytes:
        drawn, everything, step = b"", b"", 0
        try:
            async with ClientSession() as session, asyncio.timeout(30):
                async with await session.ws_connect(ws_url, headers=headers) as socket:
                    async for message in socket:
                        if isinstance(message.data, bytes):
                            drawn += message.data
                            everything += message.data
                        if step == 0 and mark in drawn:
                            # The queue lists it. A browser's page tells the app it has the
                            # focus (focus.js), and only then does it take keys as a person's.
                            drawn, step = b"", 1
                            await socket.send_json(["focus"])
                        if step == 1 and "⏎".encode() in everything:
                            # The table has the focus (its footer offers ⏎ Open): typing on the
                            # queue searches. Looked for in all that was drawn: an app that drew
                            # itself focused may have sent its footer in the frame that listed
                            # the question, and the focus message then draws nothing new (the
                            # footer rebuilds only when its keys change), so the wait would run
                            # out (the test did once in sixteen runs, at a step not recorded).
                            drawn, step = b"", 2
                            await socket.send_json(["stdin", f"#{conversation}"])
                        elif step == 2 and hit in drawn:
                            drawn, step = b"", 3  # The hit is listed: open it.
                            await socket.send_json(["stdin", "\r"])
                        elif step == 3 and b"Customer" in drawn and mark in drawn:
                            break
        except TimeoutError:
            shown = drawn.decode("utf-8", "replace")
            raise AssertionError(f"stuck at step {step}, after: {shown}") from None
        return drawn

    return run_async(read()).decode("utf-8", "replace")


def test_an_agents_console_shows_times_in_the_browsers_time_zone(
    browser: Browser, served: Served
) -> None:
    """The session runs on the server, whose clock (UTC here) is not the agent's: the page tells
    the server the browser's time zone, and the transcript's times are in it. A zone the server
    does not know is ignored."""
    context = browser.new_context(viewport=VIEWPORT, timezone_id="Asia/Shanghai")
    try:
        page = context.new_page()
        page.goto(served.url + "/")
        zones = {c["name"]: c["value"] for c in context.cookies() if c["name"] == "helpdesk-tz"}
        assert zones == {"helpdesk-tz": "Asia%2FShanghai"}
    finally:
        context.close()

    desk = open_service(load_settings(store={"db": str(served.db)}))
    try:
        before = datetime.now(UTC)
        conversation = desk.start_conversation().id
        desk.talk_to_person(conversation)
        question = f"Where is my helmet {uuid.uuid4().hex[:8]}?"
        desk.ask(conversation, question)
        session = "helpdesk-session=" + sign_in(served, "ana").cookies["helpdesk-session"]

        def shown(moments: list[datetime], zone: str) -> set[str]:
            return {m.astimezone(ZoneInfo(zone)).strftime("%H:%M") for m in moments}

        drawn = conversation_times(
            served, f"{session}; helpdesk-tz=Asia%2FShanghai", conversation, question
        )
        moments = [before, datetime.now(UTC)]
        assert any(time in drawn for time in shown(moments, "Asia/Shanghai")), drawn
        assert not any(time in drawn for time in shown(moments, "UTC"))
        drawn = conversation_times(
            served, f"{session}; helpdesk-tz=..%2F..%2Fetc%2Fpasswd", conversation, question
        )
        moments = [before, datetime.now(UTC)]
        assert any(time in drawn for time in shown(moments, "UTC"))
    finally:
        desk.close()
