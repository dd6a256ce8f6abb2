"""A new customer's conversation is started only once their session's app process has started:
one whose process failed as it started left a new, empty conversation behind, counted by
`helpdesk conversations` and the figures, one more for every browser that came to the broken
page. The cookie still names one conversation, the same on every visit, once they write."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import aiohttp
from yarl import URL

from chatbot.store.sqlite import SQLiteStore
from tests.web.conftest import make_site
from tests.web.harness import ROOT, run_async, start_server, transcript, wait_for

SCREEN_BYTES = 4000
"""What the app sends to draw its first screen (the chat's welcome and question box): more."""


def stored(db: Path) -> tuple[list[int], int]:
    """The conversations stored, and how many the figures count (those anything was written in:
    an empty one is left out, as `helpdesk conversations list` leaves it out)."""
    store = SQLiteStore.open(db)
    try:
        return [c.id for c in store.conversations()], store.stats(None).conversations
    finally:
        store.close()


async def visit(
    url: str, cookies: dict[str, str], typed: str = "", until: Callable[[], bool] = lambda: True
) -> tuple[bool, str]:
    """A customer's page and chat, as a browser with these cookies opens them (keeping what the
    server sets in `cookies`): whether its app drew anything (and then `typed` is typed into it,
    Enter after, and the page stays open `until` says), and why the server closed the websocket
    if it did not."""
    jar = aiohttp.CookieJar(unsafe=True)  # Cookies for 127.0.0.1, as a browser keeps them.
    jar.update_cookies(cookies, URL(url))
    try:
        return await _visit(url, jar, typed, until)
    finally:
        cookies.update({cookie.key: cookie.value for cookie in jar})


async def _visit(
    url: str, jar: aiohttp.CookieJar, typed: str, until: Callable[[], bool]
) -> tuple[bool, str]:
    async with aiohttp.ClientSession(url, cookie_jar=jar) as browser:
        async with browser.get("/") as page:
            assert page.status == 200
        async with browser.ws_connect("/ws/chat?width=80&height=24", headers={"Origin": url}) as ws:
            drawn = 0
            async with asyncio.timeout(60):
                while drawn < SCREEN_BYTES:
                    message = await ws.receive()
                    if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                        return False, str(message.extra)
                    if message.type == aiohttp.WSMsgType.BINARY:
                        drawn += len(message.data)
            if typed:  # Keys reach an app whose page has the focus.
                await ws.send_str(json.dumps(["focus"]))
                await ws.send_str(json.dumps(["stdin", typed + "\r"]))
            async with asyncio.timeout(30):
                while not until():
                    await asyncio.sleep(0.05)
            return True, ""


def test_a_session_that_fails_to_start_leaves_no_conversation(tmp_path: Path) -> None:
    code = tmp_path / "code"
    shutil.copytree(
        ROOT / "chatbot", code / "chatbot", ignore=shutil.ignore_patterns("__pycache__")
    )
    db, kb = make_site(tmp_path / "site")
    paths = [str(code), *filter(None, [os.environ.get("PYTHONPATH")])]
    served = start_server(tmp_path / "site", db=db, kb=kb,
                          environment={"PYTHONPATH": os.pathsep.join(paths)})  # fmt: skip
    try:
        # Sessions fail as their process starts (serve itself has what it needs loaded).
        app = code / "chatbot/tui/app.py"
        working = app.read_text()
        app.write_text(working + '\nraise RuntimeError("a broken install")\n')
        jar: dict[str, str] = {}
        for browser in (jar, jar, {}):  # A reload, then another browser.
            assert run_async(visit(served.url, browser)) == (False, "failed to start")
        wait_for(lambda: "".join(served.output).count(" ended\n") == 3, what="the sessions' end")
        assert stored(db) == ([], 0)

        app.write_text(working)  # Mended: the same browser's chat starts, and is kept.
        question = ("customer", "Where is my parcel?", None)

        def asked() -> bool:
            return any(question in transcript(db, c) for c in stored(db)[0])

        assert run_async(visit(served.url, jar, question[1], until=asked)) == (True, "")
        [conversation], counted = stored(db)
        assert counted == 1 and question in transcript(db, conversation)
        assert run_async(visit(served.url, jar)) == (True, "")  # The cookie names it.
        assert stored(db) == ([conversation], 1)
        log = "".join(served.output)
        assert log.count(f"started (chat, conversation {conversation}, pid ") == 2, log
    finally:
        served.stop()


def test_a_session_whose_knowledge_base_is_gone_leaves_no_conversation(tmp_path: Path) -> None:
    # The session's process loads its settings, then finds no knowledge base as the app opens
    # the desk: it said it had started only after that, or the server started a conversation.
    db, kb = make_site(tmp_path / "site")
    served = start_server(tmp_path / "site", db=db, kb=kb)
    try:
        away = kb.rename(tmp_path / "away")
        jar: dict[str, str] = {}
        for browser in (jar, jar, {}):  # A reload, then another browser.
            assert run_async(visit(served.url, browser)) == (False, "failed to start")
        wait_for(lambda: "".join(served.output).count(" ended\n") == 3, what="the sessions' end")
        log = "".join(served.output)
        # One line a session; the suggestions' decider may say once too that it cannot read it.
        assert log.count("failed to start: ") == 3, log
        assert log.count("knowledge base not found") - log.count("suggested questions: ") == 3
        assert stored(db) == ([], 0)

        away.rename(kb)  # Back: the same browser's chat starts, with the one conversation.
        assert run_async(visit(served.url, jar)) == (True, "")
        [conversation], counted = stored(db)
        assert counted == 0  # Nothing written in it yet.
        assert run_async(visit(served.url, jar)) == (True, "")  # The cookie names it.
        assert stored(db) == ([conversation], 0)
    finally:
        served.stop()


def test_a_session_that_hangs_as_it_starts_is_stopped_and_its_page_told(tmp_path: Path) -> None:
    """A session process stuck before it could say it started (a disk or network share that
    stopped answering) held its page's handshake until serve stopped, the page waiting for good.
    After `[web] start_timeout_s` it is stopped and the page is told, as for one that failed."""
    db, kb = make_site(tmp_path / "site")
    stuck = tmp_path / "stuck"
    stuck.touch()
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    # Run by every Python process the server starts: a session's waits while `stuck` exists.
    (hooks / "sitecustomize.py").write_text(
        "import os, sys, time\n"
        "if 'chatbot.web.child' in sys.orig_argv:\n"
        f"    while os.path.exists({str(stuck)!r}):\n"
        "        time.sleep(0.05)\n"
    )
    environment = {
        "PYTHONPATH": str(hooks),
        "HELPDESK_WEB__START_TIMEOUT_S": "1",
        "HELPDESK_WEB__PRELOAD": "false",  # Each session a fresh interpreter, which runs it.
    }
    served = start_server(tmp_path / "site", db=db, kb=kb, environment=environment)
    try:
        assert run_async(visit(served.url, {})) == (False, "failed to start")
        # Said before the page was told, but read from serve's output by a thread of its own.
        wait_for(
            lambda: "did not start within 1 s; stopping it" in "".join(served.output),
            what="serve saying why",
        )
        said = "".join(served.output)
        pid = int(said.split("did not start within")[0].rsplit("(pid ", 1)[1].split(")")[0])
        wait_for(lambda: not Path(f"/proc/{pid}").exists(), what="the stuck process gone")
        # Its place among the sessions is free again (a fresh session starting within the
        # second this test allows is not shown here: on a busy machine one takes longer).
        wait_for(lambda: " ended\n" in "".join(served.output), what="the session's end")
        assert stored(db) == ([], 0)
    finally:
        stuck.unlink(missing_ok=True)
        served.stop()
