"""Running `helpdesk serve` as a real process for the browser tests, and looking at what it runs.

Every wait here is on a condition (a line printed, a URL answering, a process gone, a row in
the store), polled with a deadline; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
from argon2 import PasswordHasher
from playwright._impl._api_structures import FloatRect
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from chatbot.accounts.models import Role
from chatbot.accounts.service import AccountService
from chatbot.store.sqlite_users import SQLiteUserStore
from chatbot.web.spawn import dies_with_this_process

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "web" / "artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
]
FAST_HASHER = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
"""Real argon2id, small parameters: accounts made with it verify in a millisecond. The server
reads the parameters from each hash, so it checks these just as it checks its own."""
START_TIMEOUT_S = 60.0


def chromium() -> str:
    """Debian's chromium-headless-shell: chromium's own engine (one source package, one version
    with the desktop browser), without the desktop browser around it, as Playwright itself runs
    headless pages. Measured on the browser tests, it takes half the CPU the full browser in
    headless mode does for each page. Where only the full browser is installed, that one."""
    path = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    if path is None:
        raise RuntimeError(
            "no chromium-headless-shell on PATH: apt-get install -y chromium-headless-shell"
            " (.ci/run does)"
        )
    return path


def wait_for(
    condition: Callable[[], T | None],
    *,
    timeout: float = 30.0,
    what: str = "condition",
    every: float = 0.05,
) -> T:
    """Poll `condition` every `every` seconds until it returns something truthy; fail after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(every)


LIT_PIXELS = """() => {
    const canvas = document.querySelector("canvas.xterm-text-layer");
    if (!canvas) return 0;
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let lit = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i] + data[i + 1] + data[i + 2] > 240) lit++;
    return lit;
}"""
"""Pixels of the terminal brighter than its dark background: text, borders, buttons. The
terminal's first frame, while the session's app process starts, is painted but wholly black
(5-7 s of it on a busy machine)."""


DRAWN_PX = 1000
"""Lit pixels that mean the app has drawn its screen (a line of text is several thousand)."""


DRAWN_POLL_MS = 100
"""How often the page itself counts lit pixels while waiting for the app's first drawing."""


LOOK = """async (blinkingPx) => {
    const canvas = document.querySelector("canvas.xterm-text-layer");
    if (!canvas) return "";
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let painted = false;
    for (let alpha = 3; alpha < data.length && !painted; alpha += 4) painted = data[alpha] !== 0;
    if (!painted) return "";
    const box = canvas.getBoundingClientRect();
    const rows = Math.floor(((innerHeight - blinkingPx - box.top) * canvas.height) / box.height);
    const watched = data.subarray(0, Math.max(0, Math.min(canvas.height, rows)) * canvas.width * 4);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", watched));
    return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}"""
"""The terminal's look, less its blinking bottom: a SHA-256 of its pixels above the bottom
`blinkingPx` of the page, or "" while it has drawn nothing at all. Everything the app shows is
drawn on this canvas; the page's other layers and the dialogs around it stay put while it runs."""


def look(page: Page) -> str:
    """The terminal's look (`LOOK`), computed in the page: about 10 ms of CPU in all, most of it
    the renderer's, where a screenshot takes five times as much from chromium's browser, GPU and
    renderer processes (compositing a frame, encoding a PNG, sending it to Playwright and here)."""
    return str(page.evaluate(LOOK, BLINKING_PX))


def watched_clip(page: Page) -> FloatRect:
    """The page less its blinking bottom."""
    size = page.viewport_size
    assert size is not None
    return {"x": 0, "y": 0, "width": size["width"], "height": size["height"] - BLINKING_PX}


def screenshot_changes(page: Page, before: bytes, *, what: str) -> bytes:
    """Wait until the page (less its blinking bottom, as `settled` returns it) looks different
    from `before`; returns the new look."""
    clip = watched_clip(page)

    def changed() -> bytes | None:
        shot = page.screenshot(clip=clip)
        return shot if shot != before else None

    return wait_for(changed, what=what, timeout=30, every=STILL_POLL_S)


STILL_S = 1.0
"""How long a page must look the same to count as drawn: Textual paints a screen in several
frames, with pauses between them longer than one look takes."""


STILL_POLL_S = 0.2
"""How often `settled` looks: a fifth of `STILL_S`, so a still page is seen still within 20%."""


BLINKING_PX = 100
"""The bottom of the page, where the focused input's cursor blinks (and the footer is): left out
when deciding whether the page still changes."""


def settled(page: Page, *, still_s: float = STILL_S, timeout: float = 30.0) -> bytes:
    """A screenshot (less the blinking bottom) once the app has drawn and the terminal (less its
    blinking bottom) has shown nothing new for `still_s`. A focused input elsewhere (the
    editor's search box) blinks its cursor, so two looks taking turns count as still: drawing
    never returns to an earlier frame. While the customer's question is being judged an
    animated indicator shows, so a chat settles only once the bot has answered or handed over.

    First the app must have drawn text (its black first frame, still for seconds while the app
    process starts, would otherwise count as settled)."""
    try:
        page.wait_for_function(
            f"(least) => ({LIT_PIXELS})() >= least",
            arg=DRAWN_PX,
            polling=DRAWN_POLL_MS,
            timeout=START_TIMEOUT_S * 1000,
        )
    except PlaywrightTimeoutError:
        raise AssertionError(
            f"timed out after {START_TIMEOUT_S:.0f}s waiting for the app to draw"
        ) from None
    looks: list[str] = []  # The one look, or two taking turns, seen since `since`.
    since = [time.monotonic()]

    def still() -> bool:
        current = look(page)
        if not current:  # Nothing drawn at all: the terminal is starting over.
            looks[:], since[0] = [], time.monotonic()
            return False
        if current not in looks:
            # A second look may be the cursor's other phase; a third means the page changed.
            looks[:] = [*looks, current] if len(looks) < 2 else [current]
            since[0] = time.monotonic()
            return False
        return time.monotonic() - since[0] >= still_s

    # Looked at five times a second: a still page is seen still within a fifth of `still_s`.
    # Each look is a hash computed in the page; only the still page is screenshot, once.
    wait_for(still, what="the page to stop changing", timeout=timeout, every=STILL_POLL_S)
    return page.screenshot(clip=watched_clip(page))


INPUT_FROM_BOTTOM_PX = 60
"""The one-line input sits above the footer: about two and a half rows of 16px text up from the
bottom of the terminal. A click elsewhere would focus the transcript, and typing would go there."""


def type_into_input(page: Page, text: str) -> None:
    """Click the app's bottom input (the chat question, the agent's reply) and type `text`,
    then Enter."""
    box = page.locator("#terminal").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 200, box["y"] + box["height"] - INPUT_FROM_BOTTOM_PX)
    page.keyboard.type(text)
    page.keyboard.press("Enter")


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` to the end on a loop in a thread of its own: while Playwright's sync API
    is open, this thread already has a loop running."""
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(asyncio.run(coroutine))
        except BaseException as error:  # Re-raised in the test's thread.
            errors.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return results[0]


def children(pid: int) -> list[int]:
    """Every live descendant of `pid`, from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
    found: list[int] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent:
                found.append(child)
                frontier.append(child)
    return found


def command_line(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    # Any process's: arguments need not be UTF-8 (a tester's `helpdesk ask` with raw bytes in
    # it made a teardown that scans every process fail).
    return [part.decode(errors="surrogateescape") for part in raw.split(b"\0") if part]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2] != "Z"


STARTED = re.compile(r"session (\d+) started \((\w+), (conversation|account) (\S+), pid (\d+)\)")
ENDED = re.compile(r"session (\d+) ended")


@dataclass(frozen=True)
class Session:
    """One browser session, as the server reported it."""

    number: int
    area: str
    conversation: int | None
    account: str | None
    pid: int


@dataclass
class Served:
    """A running `helpdesk serve` and its database."""

    process: subprocess.Popen[str]
    url: str
    db: Path
    kb: Path
    output: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def sessions(self) -> list[Session]:
        """The browser sessions running now, from the server's own log lines:
        `helpdesk serve: session N started (chat, conversation C, pid P)` and `... N ended`."""
        started: dict[int, Session] = {}
        for line in list(self.output):
            if match := STARTED.search(line):
                number, area, what, name, pid = match.groups()
                started[int(number)] = Session(
                    number=int(number),
                    area=area,
                    conversation=int(name) if what == "conversation" else None,
                    account=name if what == "account" else None,
                    pid=int(pid),
                )
            elif match := ENDED.search(line):
                started.pop(int(match.group(1)), None)
        return list(started.values())

    def stop(self, timeout: float = 30.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError("helpdesk serve did not stop on SIGTERM") from None


def server_environment(home: Path) -> dict[str, str]:
    """The test's own environment minus anything that would reach the developer's settings."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("HELPDESK_", "VALEN_"))
    }
    environment |= {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "PYTHONUNBUFFERED": "1",
    }
    return environment


def add_account(
    db: Path, name: str, *, role: Role, password: str, display_name: str | None = None
) -> None:
    service = AccountService(SQLiteUserStore.open(db), hasher=FAST_HASHER)
    try:
        service.add(name, role=role, password=password, display_name=display_name)
    finally:
        service.close()


def start_server(
    home: Path,
    *,
    db: Path,
    kb: Path,
    extra: list[str] | None = None,
    environment: dict[str, str] | None = None,
) -> Served:
    """`helpdesk serve --port 0` as a real process; returns once it answers HTTP."""
    argv = [sys.executable, "-m", "chatbot", "serve", "--port", "0", "--db", str(db)]
    argv += ["--kb", str(kb), *(extra or [])]
    process = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=server_environment(home) | (environment or {}),
        cwd=home,
        # A test worker killed mid-test (a timeout, Ctrl+C twice) takes its server with it: one
        # left running went on polling its database and slowed every later run.
        preexec_fn=dies_with_this_process(),
    )
    output: list[str] = []
    ready = threading.Event()
    url: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            if not url and "listening on " in line:
                url.append(line.split("listening on ", 1)[1].strip())
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(START_TIMEOUT_S) or not url:
        process.kill()
        raise AssertionError("helpdesk serve did not start:\n" + "".join(output))
    served = Served(process=process, url=url[0], db=db, kb=kb, output=output)

    def answers() -> bool:
        try:
            return httpx.get(served.url + "/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_for(answers, timeout=START_TIMEOUT_S, what="helpdesk serve to answer")
    return served


def transcript(db: Path, conversation_id: int) -> list[tuple[str, str, str | None]]:
    """(author, text, passage id) of every message in the conversation, oldest first."""
    from chatbot.desk.models import ChatMessage
    from chatbot.store.sqlite import SQLiteStore

    store = SQLiteStore.open(db)
    try:
        return [
            (entry.author.value, entry.text, entry.passage_id)
            for entry in store.entries(conversation_id)
            if isinstance(entry, ChatMessage)
        ]
    finally:
        store.close()


def conversation_state(db: Path, conversation_id: int) -> tuple[str, str | None]:
    """(state, agent) of a conversation, as the store has it."""
    from chatbot.store.sqlite import SQLiteStore

    store = SQLiteStore.open(db)
    try:
        conversation = store.conversation(conversation_id)
        return conversation.state.value, conversation.agent
    finally:
        store.close()


def agent_replies(db: Path, conversation_id: int) -> list[tuple[str | None, str]]:
    """(agent name, text) of every agent message in the conversation."""
    from chatbot.desk.models import Author, ChatMessage
    from chatbot.store.sqlite import SQLiteStore

    store = SQLiteStore.open(db)
    try:
        return [
            (entry.agent, entry.text)
            for entry in store.entries(conversation_id)
            if isinstance(entry, ChatMessage) and entry.author is Author.AGENT
        ]
    finally:
        store.close()


def parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])
