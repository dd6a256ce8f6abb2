"""`helpdesk serve`: the customer chat at `/`, the agent console at `/agent` and the knowledge-base
editor at `/editor`, each a Textual app process per browser session, driven over a websocket.

Built on textual-serve's `Server` (aiohttp) and `AppService`: this adds the routes, sign-in,
signed cookies, security headers, Origin and session checks on every websocket, limits on how
many app processes run, and a shutdown that tells each browser and ends each process. What an
app process is (which screen, which conversation, which agent name) is decided here from the
verified cookie and passed as its arguments; nothing the page sends can change it. (The page's
time zone, a zone this machine knows or nothing, only sets the clock its times are shown in.)
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import itertools
import json
import logging
import os
import re
import sys
import time
import warnings
import zoneinfo
from asyncio.subprocess import Process
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from http import HTTPStatus
from importlib.metadata import version
from pathlib import Path
from typing import Any, Protocol, cast
from urllib.parse import unquote, urlencode

import textual_serve
from aiohttp import WSCloseCode, WSMsgType, web
from aiohttp.http_exceptions import BadHttpMethod, HttpProcessingError
from aiohttp.multipart import BadContentDispositionHeader, BadContentDispositionParam
from textual_serve.app_service import AppService
from textual_serve.server import Server

from chatbot.accounts.aio import AsyncAccounts
from chatbot.accounts.models import Account, Area
from chatbot.accounts.ratelimit import AddressLimiter
from chatbot.config import WebSettings
from chatbot.desk.aio import unreachable
from chatbot.errors import HelpdeskError
from chatbot.i18n import N_, Locale, accepted_locale, translations
from chatbot.paste import PasteFilter
from chatbot.web.cookies import AccountClaim, CookieSigner, typed_name, typed_name_cookie
from chatbot.web.pages import app_page, message_page, signin_page, title
from chatbot.web.security import (
    add_hsts,
    add_security_headers,
    allowed_origins,
    origin_allowed,
)
from chatbot.web.spawn import (
    CodeChanged,
    ForkedProcess,
    Zygote,
    python_command,
    sweep_stale_folders,
)
from chatbot.web.spec import SessionSpec

log = logging.getLogger("helpdesk.web")


class _FailedStartSaidBetter(logging.Filter):
    """textual-serve's "Application failed to start", which said no more: `SessionProcess` logs
    instead which session failed and why (what its process wrote)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "Application failed to start"


logging.getLogger("textual-serve").addFilter(_FailedStartSaidBetter())


UNREADABLE = (HttpProcessingError, web.RequestPayloadError)
"""aiohttp's errors for a request it could not read: a line or header over its 8,190 bytes, too
many headers, malformed HTTP, a body cut short or not in its `Content-Encoding`."""


# aiohttp warns of a malformed `Content-Disposition` in a multipart form (and reads it as best it
# can): each warning quoted the header, the request's bytes, on serve's output.
warnings.filterwarnings("ignore", category=BadContentDispositionHeader)
warnings.filterwarnings("ignore", category=BadContentDispositionParam)


class _RequestHandler(web.RequestHandler):
    """aiohttp's handler of one connection, quieter about a request it could not read: it answered
    with the parser's words, which quote the start of the offending line (a session cookie, a
    path), and logged them with a traceback, though the log never holds a cookie. Here the
    answer is the bare status and the log one line, the address and what kind of error."""

    __slots__ = ()

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if not isinstance(exc, UNREADABLE):
            return super().handle_error(request, status, exc, message)
        if not isinstance(exc, BadHttpMethod):  # Not HTTP at all (a scanner, TLS): no line.
            log.warning("unreadable request from %s: %s", request.remote, type(exc).__name__)
        return super().handle_error(request, 400, exc, HTTPStatus.BAD_REQUEST.phrase)

    def log_exception(self, *args: Any, **kw: Any) -> None:
        # Said by `handle_error`; or the body of a request answered already, read to its end,
        # went bad (a gzip body that is not gzip, say): nothing to say of it.
        if not isinstance(kw.get("exc_info"), UNREADABLE):
            super().log_exception(*args, **kw)


class _WebServer(web.Server):
    """aiohttp's server, whose connections are `_RequestHandler`s."""

    def __call__(self) -> web.RequestHandler:
        return _RequestHandler(self, loop=self._loop, **self._kwargs)


class _AppRunner(web.AppRunner):
    """aiohttp's runner, serving with `_WebServer`: a request the parser cannot read never
    reaches the application or its middlewares, and aiohttp offers no setting for what is said
    of it (`tests/web/test_malformed_requests.py` checks this still holds on an upgrade)."""

    async def _make_server(self) -> web.Server:
        made = await super()._make_server()
        return _WebServer(
            made.request_handler,
            request_factory=made.request_factory,
            handler_cancellation=made.handler_cancellation,
            loop=made._loop,
            **made._kwargs,
        )


CUSTOMER_COOKIE = "helpdesk-chat"
ACCOUNT_COOKIE = "helpdesk-session"
TYPED_NAME_COOKIE = "helpdesk-signin-name"
"""The name typed in a failed sign-in, for the page that says why: kept out of its address
(history, proxy logs), where a password typed into the name field would have landed too."""
MAX_REQUEST_BYTES = 64 * 1024
MAX_WS_MESSAGE_BYTES = 64 * 1024
"""Keystrokes and resizes are a few bytes; the page (assets/paste.js) sends a longer paste in
pieces of at most 8,192 characters, as one message over this cap closed the session."""
STOP_GRACE_S = 5.0
"""How long an app process gets to quit when told, before it is killed."""
FAILED_TO_START = b"failed to start"
"""Why the server closes the websocket of a session whose app process ended before it drew
anything: the page says the help desk could not open (assets/closed.js), not that everything
sent is saved (nothing was)."""
SIGNED_OUT = b"signed out"
"""Why the server closes an agent's or editor's websocket when the browser signed out, or the
account's sessions were ended (a new password or role, or removal): the page says so."""
EXPIRED = b"session expired"
"""Why it closes one whose sign-in ran out (`web.session_hours`): nobody signed them out, and
the page says the session expired (assets/closed.js)."""
DATABASE_FULL = b"helpdesk-session: database full\n"
"""What an app process writes on its stderr, before its one-line error, when the database server
refused it a connection for want of a free one (`chatbot.pgslots`): its page is then sent to the
words a full server's page has, which try again by itself, not told the help desk failed."""
READY = b"helpdesk-session: ready\n"
"""What a new customer's app process writes first on its stderr once it can start (its
settings loaded, its desk open and its knowledge base checked; its stdout is textual-serve's,
whose prelude the app's driver writes): only then is their conversation started, and its id
sent to the app as a meta packet, `{"type": "conversation", "id": ...}`. A session that failed
to start leaves none behind."""
STDERR_KEPT_BYTES = 64 * 1024
"""The end of what an app process writes on stderr, kept for the log (a traceback fits)."""
STDERR_WAIT_S = 2.0
"""How long, once an app's output has ended, its stderr gets to end too (its process exiting)."""
MIN_SIZE, MAX_COLUMNS, MAX_ROWS = 10, 500, 200
SESSION_SECRETS = ("VALEN_API_KEY", "HELPDESK_VALEN__API_KEY")
"""Left out of what sessions inherit, in any case (settings read `valen_api_key` too); the key
is given only to the sessions that need it, as `VALEN_API_KEY`."""
KEEP_EVERY_S = 3600.0
"""How often the conversations of open customer pages are kept (`CustomerDesk.keep_conversations`;
one opened with an existing conversation, at the next session check): the desk prunes one nobody
wrote in only after a day unkept (`chatbot.desk.service.EMPTY_KEPT_S`), so a page left open for
days still has its conversation when its visitor writes."""
SECRET_SECTIONS = {"HELPDESK_VALEN": "api_key"}
"""Sections that may be set whole as JSON, and their member that is a secret."""


def secret_free(environment: dict[str, str]) -> dict[str, str]:
    """`environment` without the session secrets, however their names are cased and whichever
    documented way they are set: `VALEN_API_KEY`, `HELPDESK_VALEN__API_KEY`, or the `api_key`
    of a `HELPDESK_VALEN` section given as JSON (the rest of the section is kept)."""
    kept: dict[str, str] = {}
    for name, value in environment.items():
        if name.upper() in SESSION_SECRETS:
            continue
        if (secret := SECRET_SECTIONS.get(name.upper())) is not None:
            section = _json_object(value)
            if section is None:
                continue  # Not a section the settings take: left out whole.
            value = json.dumps({k: v for k, v in section.items() if k.lower() != secret})
        kept[name] = value
    return kept


def _json_object(value: str) -> dict[str, object] | None:
    try:
        section = json.loads(value)
    except ValueError:
        return None
    return section if isinstance(section, dict) else None


RETRY_AFTER_S = 60
"""What a refused page tells the browser (`Retry-After`): sessions end as people leave."""
REFUSAL_HEADING = N_("The help desk cannot open now")
COOKIES_NEEDED = N_(
    "The chat keeps your conversation in a cookie, and this browser did not keep it. Allow "
    "cookies for this site, then try again."
)
SENT_ON_S = 10.0
"""How long a websocket refused as it opened waits for its page to leave, once told where to
go, before it is closed."""
PAGES = ("/", "/agent", "/editor")
"""The pages a refusal's page may offer to try again."""


class Refusal(StrEnum):
    """Why a new session does not start, as its page says it."""

    CLOSING = N_("The help desk is shutting down. This page tries again by itself in a minute.")
    BUSY = N_(
        "The help desk is serving as many people as it can. This page tries again by itself in "
        "a minute."
    )
    ADDRESS_FULL = N_(
        "Too many help-desk pages are open from your address. Close one: this page tries again "
        "by itself in a minute."
    )
    DATABASE_UNREACHABLE = N_(
        "The help desk cannot reach its database just now. This page tries again by itself in a "
        "minute."
    )


DATABASE_OUT = N_("The help desk cannot reach its database just now. Try again in a moment.")
"""Said on the sign-in form when the sign-in could not be checked (no password was)."""
HEALTH_TIMEOUT_S = 2.0
"""How long `/healthz` waits for the database to answer before saying it does not: a load
balancer's probe must not hang on a database that stopped answering."""
HEALTH_FRESH_S = 1.0
"""How long one answer of the database check serves: many pages asking `/healthz` at once (their
sessions ended, waiting to start again) cost one look at the database a second."""
UNREACHABLE = "database unreachable"
"""`/healthz`'s reason while the database cannot be reached (its details go to the log only)."""
PROBE_NAME = "healthz"
"""The account the database check looks up: any name does, none need exist."""


class DatabaseCheck:
    """Whether the database answers (`probe` raises `HelpdeskError` if not), for `/healthz` and
    the sign-in page: one probe at a time, its answer kept `HEALTH_FRESH_S`, never waited on more
    than `HEALTH_TIMEOUT_S`. The log says once when it starts failing and once when it is back."""

    def __init__(
        self,
        probe: Callable[[], Awaitable[object]],
        *,
        timeout_s: float = HEALTH_TIMEOUT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._probe = probe
        self.timeout_s = timeout_s
        self._clock = clock
        self._running: asyncio.Task[str | None] | None = None
        self._known: tuple[float, str | None] | None = None
        self._lost = False

    async def trouble(self) -> str | None:
        """None while the database answers; else why not (for the log: it names the database)."""
        now = self._clock()
        if self._known is not None and now - self._known[0] < HEALTH_FRESH_S:
            return self._known[1]
        if self._running is None or self._running.done():
            # Not started again while one still waits on a database that does not answer.
            self._running = asyncio.create_task(self._ask(), name="database check")
        try:
            trouble = await asyncio.wait_for(asyncio.shield(self._running), self.timeout_s)
        except TimeoutError:
            trouble = f"no answer in {self.timeout_s:g} s"
        self._known = (self._clock(), trouble)
        if trouble is not None and not self._lost:
            log.warning("database check: %s", trouble)
        elif trouble is None and self._lost:
            log.warning("database check: back")
        self._lost = trouble is not None
        return trouble

    def met(self, error: HelpdeskError) -> None:
        """A request found the database out just now: the answer for the next moment, so the
        page that says so asks it no more (and the log has that request's line alone)."""
        self._known = (self._clock(), str(error))

    async def _ask(self) -> str | None:
        try:
            await self._probe()
        except HelpdeskError as error:
            return str(error)
        except Exception as error:  # Not the database being out: a bug, with its traceback.
            log.exception("cannot check the database")
            return type(error).__name__
        return None


ASSETS = Path(__file__).parent / "assets"
TEXTUAL_SERVE_STATIC = Path(textual_serve.__file__).parent / "static"


class CustomerDesk(Protocol):
    """What the server needs from the desk: customer conversations to hand out."""

    async def start_conversation(self) -> int: ...

    async def has_conversation(self, conversation_id: int) -> bool: ...

    async def keep_conversations(self, conversation_ids: list[int]) -> None:
        """These conversations are on open pages: the desk keeps any of them nobody wrote in
        yet for another day, rather than prune it under its visitor."""
        ...


ChildArguments = Callable[[SessionSpec], list[str]]
"""The arguments of `chatbot.web.child` for a session."""


SESSION_DRIVER = "chatbot.web.driver:SessionDriver"
"""Textual's web driver, less one way to outlive the server (see `chatbot.web.driver`)."""


class CloseWebsocket(Protocol):
    """`web.WebSocketResponse.close`."""

    def __call__(self, *, code: int = ..., message: bytes = ...) -> Awaitable[object]: ...


class SessionProcess(AppService):
    """textual-serve's app service for one session: its process forked from the zygote (or
    exec'd without a shell when there is none), with the environment the server chose, and
    killed if it does not quit when told. One that ends before drawing anything, unless told to
    quit, failed to start: the log says why, from what it wrote on stderr, and so does its page."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        environment: Mapping[str, str],
        secrets: Mapping[str, str],
        zygote: Zygote | None,
        write_bytes: Callable[[bytes], Awaitable[None]],
        write_str: Callable[[str], Awaitable[None]],
        close: CloseWebsocket,
        server: Server,
        name: str = "a browser session",
        send_away: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        super().__init__(
            " ".join(args),
            write_bytes=write_bytes,
            write_str=write_str,
            close=self._close,
            download_manager=server.download_manager,
        )
        self.args = list(args)
        self.environment = dict(environment)
        self.secrets = dict(secrets)
        """Secrets this session alone needs (the Valen key, for an editor's "Try it")."""
        self.zygote = zygote
        self._close_websocket = close
        self._send_away = send_away
        """Sends the page to the words a full server's page has, and closes its websocket."""
        self.database_full = False
        """The app said the database had no connection to spare for it (`DATABASE_FULL`)."""
        self.name = name
        """The session, for the log ("session 3")."""
        self.drawn = False
        """The app has sent the page something to draw: it started."""
        self.ready = asyncio.Event()
        """A new customer's app says it started (`chatbot.web.child`): it waits for the
        conversation the server then starts for it."""
        self._stopping = False
        self._stderr: asyncio.StreamReader | None = None
        self._stderr_task: asyncio.Task[bytes] | None = None

    async def _close(self) -> None:
        await self._close_websocket()

    async def on_data(self, payload: bytes) -> None:
        self.drawn = True
        await super().on_data(payload)

    async def wait_ready(self) -> bool:
        """Whether the app said it started (`ready`), before its process ended."""
        ended = self._task
        if ended is None:
            return False
        ready = asyncio.create_task(self.ready.wait())
        try:
            await asyncio.wait({ready, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        return self.ready.is_set() and not ended.done()

    @property
    def failed_to_start(self) -> bool:
        """Its process ended without drawing anything, and nobody told it to quit."""
        return not self.drawn and not self._stopping

    async def run(self) -> None:
        try:
            await super().run()
        finally:
            # The app's output has ended. An app that quits says so first, and the page is
            # closed then; one that failed to start (a broken install, a bad setting read at
            # start) or crashed says nothing, and the page stayed on "connecting…" for good.
            failed = self.failed_to_start
            if failed and self.database_full and self._send_away is not None:
                await self._send_away()
            elif failed:
                await self._close_websocket(
                    code=WSCloseCode.INTERNAL_ERROR, message=FAILED_TO_START
                )
            else:
                await self._close_websocket()
            await self._report_stderr(failed=failed)

    def _take_stderr(self, process: Process | ForkedProcess) -> None:
        """Read the process's stderr here, and give textual-serve an empty one: it logged only
        "Application failed to start" and wrote the stderr it had read by then, and again the
        whole of it at the end, to the server's stdout."""
        self._stderr = process.stderr
        empty = asyncio.StreamReader()
        empty.feed_eof()
        process.stderr = empty
        self._stderr_task = asyncio.create_task(self._read_stderr())

    async def _read_stderr(self) -> bytes:
        assert self._stderr is not None
        kept = b""
        while chunk := await self._stderr.read(4096):
            kept = (kept + chunk)[-STDERR_KEPT_BYTES:]
            if not self.ready.is_set() and READY in kept:
                kept = kept.replace(READY, b"", 1)  # Not something the app had to say.
                self.ready.set()
            if not self.database_full and DATABASE_FULL in kept:
                kept = kept.replace(DATABASE_FULL, b"", 1)
                self.database_full = True
        return kept

    async def _report_stderr(self, *, failed: bool) -> None:
        task = self._stderr_task
        if task is None:
            return
        try:
            written = await asyncio.wait_for(task, STDERR_WAIT_S)
        except TimeoutError:  # Something of the process's holds its stderr open: left unsaid.
            written = b""
        text = written.decode("utf-8", "replace").rstrip()
        if failed:
            pid = self.pid
            lines = [line for line in text.splitlines() if line.strip()]
            # The last line says what went wrong (the exception, or the app's one-line error);
            # a traceback before it goes to the log with it, as `log.exception` would.
            said = lines[-1].removeprefix("helpdesk: error: ") if lines else "it wrote nothing"
            details = f"\n{text}" if len(lines) > 1 else ""
            log.warning("%s (pid %s) failed to start: %s%s", self.name, pid, said, details)
        elif text:
            # What a session that ran wrote (a warning, an app's crash): on the server's output,
            # as textual-serve passed it on.
            sys.stdout.write(text + "\n")

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = secret_free(super()._build_environment(width, height))
        driver = {"TEXTUAL_DRIVER": SESSION_DRIVER}
        return environment | self.environment | driver | self.secrets

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        # A session given secrets is exec'd with them, never forked: sent to the zygote, the key
        # stayed in its memory after the fork, for every later customer's session to inherit.
        if self.zygote is not None and self.zygote.running and not self.secrets:
            try:
                size = {"COLUMNS": str(width), "ROWS": str(height)}
                forked = await self.zygote.spawn(self.args, size | self.secrets)
            except CodeChanged:
                pass  # The zygote said so in the log, once; this session starts afresh.
            except (OSError, RuntimeError, ValueError) as error:
                if self.zygote.changed is None:  # Not one asking as the zygote was ended.
                    log.warning("cannot fork a session from the zygote (%s); starting one", error)
            else:
                # It has every part of Process that textual-serve and `stop` use.
                self._process = cast(Process, forked)
                self._stdin = forked.stdin
                self._take_stderr(forked)
                return self._process
        self._process = process = await asyncio.create_subprocess_exec(
            *python_command("chatbot.web.child", *self.args),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width=width, height=height),
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        self._take_stderr(process)
        return process

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    async def stop(self) -> None:
        """Ask the app to quit (it closes its store and releases what it holds), then kill it
        if it has not gone within `STOP_GRACE_S`."""
        task = self._task
        if task is None:
            return
        self._task = None
        self._stopping = True
        await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
        await self.send_meta({"type": "quit"})
        process = self._process
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_GRACE_S)
            if process is not None:
                await asyncio.wait_for(process.wait(), STOP_GRACE_S)
        except TimeoutError:
            if process is not None and process.returncode is None:
                log.warning("app process %s did not quit; killing it", process.pid)
                process.kill()
                await process.wait()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


@dataclass
class LiveSession:
    """A browser session, counted against the limits from the moment its handshake is let in."""

    address: str
    holder: str | None
    """The browser it is for, as its cookie says (`HelpdeskServer.holder`); None until a new
    customer's conversation is started."""
    websocket: web.WebSocketResponse
    spec: SessionSpec | None = None
    service: SessionProcess | None = None
    replaced: bool = False
    """Its browser opened it again (a reload, another tab) with the server full: the new one
    has its place, and it is ending."""
    done: asyncio.Event = field(default_factory=asyncio.Event)
    signed_in_until: float | None = None
    """When the sign-in it was opened with ends (the cookie's age limit), for an agent's or
    editor's session: it is closed then, as the page could not be opened again."""
    signed_in_with: str | None = None
    """The digest of the sign-in cookie an agent's or editor's session was opened with: it is
    closed once that cookie is signed out, on whichever server."""
    kept_at: float | None = None
    """When a customer's conversation was last kept for this page (`KEEP_EVERY_S`)."""


@web.middleware
async def _handshakes_only(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """A request to a websocket's address that is no websocket handshake gets a plain 400 before
    anything else: a customer's plain GET started an app process and a conversation, then failed
    with a traceback in the log when the handshake could not be answered."""
    if request.path.startswith("/ws/") and not web.WebSocketResponse().can_prepare(request).ok:
        raise web.HTTPBadRequest()
    return await handler(request)


def see_other(location: str) -> web.Response:
    """A 303 to `location` that carries cookies: returned, where aiohttp's `HTTPSeeOther` would
    have to be raised (returning one is deprecated)."""
    return web.Response(status=303, headers={"Location": location})


def page_locale(request: web.Request) -> Locale:
    """The browser's language, for our own pages and the sessions they open (the app inside
    follows it unless `ui.locale` names one, or for a customer, their conversation's)."""
    return accepted_locale(request.headers.get("Accept-Language"))


TIMEZONE_COOKIE = "helpdesk-tz"
"""Set by the page (assets/timezone.js) to the browser's time zone, an IANA name."""


@functools.cache
def known_timezones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def browser_timezone(request: web.Request) -> str | None:
    """The time zone the page says its browser is in, if it is one this machine knows: the
    session shows times in it. Anything else (a made-up name, a path) is ignored, and the session
    keeps the server's."""
    zone = unquote(request.cookies.get(TIMEZONE_COOKIE, ""))  # The page URI-encodes it.
    return zone if zone in known_timezones() else None


def _clamp(value: object, default: int, top: int) -> int:
    """A terminal's size, from the address or a resize message: a number or its digits (an
    integer of thousands of digits is no size either), else `default`."""
    try:
        number = int(value) if isinstance(value, int | str) else default
    except ValueError:
        number = default
    return max(MIN_SIZE, min(top, number))


LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
"""Half of a UTF-16 pair, alone: `json.loads` joins a pair's two escapes into one character, so
any left in a string are lone."""


def _envelope(text: str) -> tuple[str, object] | None:
    """A websocket message from the page, `["kind", data]` (or `["kind"]`), or None for anything
    else: not JSON, not a list, nested too deep for the parser (a RecursionError, which ended the
    session), a number of thousands of digits."""
    try:
        envelope = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(envelope, list) or not envelope or not isinstance(envelope[0], str):
        return None
    return envelope[0], envelope[1] if len(envelope) > 1 else None


class HelpdeskServer(Server):
    """The help desk over HTTP: pages, sign-in and one app process per websocket."""

    def __init__(
        self,
        *,
        settings: WebSettings,
        accounts: AsyncAccounts,
        desk: CustomerDesk,
        child: ChildArguments,
        environment: Mapping[str, str],
        secret: bytes,
        preload: bool = True,
        report: Callable[[str], None] = print,
        limiter: AddressLimiter | None = None,
        clock: Callable[[], float] = time.time,
        valen_key: str | None = None,
    ) -> None:
        super().__init__(
            "helpdesk",
            host=settings.host,
            port=settings.port,
            title="helpdesk",
            public_url=settings.public_url,
            statics_path=TEXTUAL_SERVE_STATIC,
            templates_path=TEXTUAL_SERVE_STATIC,
        )
        self.settings = settings
        self.accounts = accounts
        self.desk = desk
        self.child = child
        self.environment = dict(environment)
        """The settings, under their documented names, for every session's process."""
        self.preload = preload
        self.valen_key = valen_key
        """The Valen key as the settings resolved it, from whichever variable set it."""
        self.zygote: Zygote | None = None
        self.report = report
        self._session_numbers = itertools.count(1)
        self.limiter = limiter or AddressLimiter()
        """Failures per address, in this process; per account, the accounts' database counts
        them for every `serve` sharing it."""
        self.signer = CookieSigner(
            secret,
            customer_max_age_s=settings.customer_days * 86400,
            account_max_age_s=settings.session_hours * 3600,
            clock=clock,
        )
        self.clock = clock
        self.secure = (settings.public_url or "").lower().startswith("https://")
        self.sessions: dict[int, LiveSession] = {}
        self._sending_on: set[web.WebSocketResponse] = set()
        """Websockets refused as they opened, told where their page should go instead."""
        self.closing = False
        self.refused: Counter[str] = Counter()
        """Pages and handshakes turned away since the start, by why (`/healthz` reports them):
        how an operator learns that people could not get in."""
        self.origins = allowed_origins(
            host=settings.host, port=settings.port, public_url=settings.public_url
        )
        self._runner: web.AppRunner | None = None
        self.database = DatabaseCheck(lambda: self.accounts.account(PROBE_NAME))
        self._checker: asyncio.Task[None] | None = None
        self._accounts_lost = False
        """The last check of the open sessions' accounts could not reach the database."""

    # -- the application --------------------------------------------------------------------------

    async def _make_app(self) -> web.Application:
        app = web.Application(
            client_max_size=MAX_REQUEST_BYTES,
            middlewares=[_handshakes_only, self._database_out_middleware],
        )
        app.on_response_prepare.append(add_security_headers)
        if self.secure:
            app.on_response_prepare.append(add_hsts)
        app.add_routes(
            [
                web.get("/", self.handle_customer),
                web.get("/agent", self.area_page(Area.AGENT)),
                web.get("/editor", self.area_page(Area.EDITOR)),
                web.get("/signin", self.handle_signin_page),
                web.post("/signin", self.handle_signin),
                web.get("/unavailable", self.handle_unavailable),
                web.get("/cookies", self.handle_cookies),
                web.get("/signout", self.handle_signout_page),
                web.post("/signout", self.handle_signout),
                web.get("/ws/chat", self.websocket(None)),
                web.get("/ws/agent", self.websocket(Area.AGENT)),
                web.get("/ws/editor", self.websocket(Area.EDITOR)),
                web.get("/healthz", self.handle_health),
                web.get("/favicon.ico", self.handle_no_icon),
                web.get("/download/{key}", self.handle_download),
                web.static("/static", TEXTUAL_SERVE_STATIC),
                web.static("/assets", ASSETS),
            ]
        )
        return app

    def cookie_name(self, base: str) -> str:
        # `__Host-` binds a Secure cookie to exactly this host and path /, so no subdomain or
        # plain-HTTP page can set or shadow it.
        return f"__Host-{base}" if self.secure else base

    def _set_cookie(
        self, response: web.StreamResponse, base: str, value: str, *, max_age: float, strict: bool
    ) -> None:
        response.set_cookie(
            self.cookie_name(base),
            value,
            max_age=int(max_age),
            path="/",
            httponly=True,
            secure=self.secure,
            samesite="Strict" if strict else "Lax",
        )

    def _delete_cookie(self, response: web.StreamResponse, base: str, *, strict: bool) -> None:
        """Delete a cookie `_set_cookie` set, with the attributes it was set with: a browser
        ignores a `Set-Cookie` for a `__Host-` cookie without `Secure`, so its deletion without
        them left the cookie in the browser."""
        response.del_cookie(
            self.cookie_name(base),
            path="/",
            httponly=True,
            secure=self.secure,
            samesite="Strict" if strict else "Lax",
        )

    def websocket_url(self, request: web.Request, path: str) -> str:
        if self.settings.public_url:
            base = self.settings.public_url.rstrip("/")
            scheme, _, rest = base.partition("://")
            return f"{'wss' if scheme.lower() == 'https' else 'ws'}://{rest}{path}"
        return f"ws://{request.host}{path}"

    def client_address(self, request: web.Request) -> str:
        if self.settings.trust_proxy_headers:
            forwarded = request.headers.get("X-Forwarded-For", "")
            last = forwarded.rsplit(",", 1)[-1].strip()
            if last:
                return last
        return request.remote or "unknown"

    @staticmethod
    def _html(text: str, *, status: int = 200) -> web.Response:
        response = web.Response(text=text, status=status, content_type="text/html")
        response.headers["Cache-Control"] = "no-store"
        response.headers["Vary"] = "Accept-Language"  # Pages speak the browser's language.
        return response

    # -- who is asking ----------------------------------------------------------------------------

    async def signed_in(self, request: web.Request) -> Account | None:
        """The account a valid session cookie names, if it still exists and its sessions have not
        been ended since (a new password or role, or removal)."""
        found = await self.sign_in(request)
        return None if found is None else found[0]

    async def sign_in(self, request: web.Request) -> tuple[Account, AccountClaim] | None:
        """`signed_in`'s account with the cookie's claim (which says when the sign-in ends)."""
        claim = self.signer.read_account(request.cookies.get(self.cookie_name(ACCOUNT_COOKIE)))
        if claim is None:
            return None
        account = await self.accounts.account(claim.name)
        if account is None or not claim.holds_for(account):
            return None
        if await self.accounts.signed_out([claim.digest]):  # On any server sharing the database.
            return None
        return account, claim

    async def customer_conversation(self, request: web.Request) -> int | None:
        """The conversation the customer's cookie names, if it is signed by us and exists."""
        cookie = request.cookies.get(self.cookie_name(CUSTOMER_COOKIE))
        conversation = self.signer.read_customer(cookie)
        if conversation is None or not await self.desk.has_conversation(conversation):
            return None
        return conversation

    def holder(self, request: web.Request, spec: SessionSpec) -> str:
        """The browser a session is for, as its cookie says: a customer's conversation, or an
        account's sign-in in this browser (its cookie) and the area. A page or websocket from a
        browser that holds a session may take that session's place when the server is full."""
        if spec.area is None:
            return f"chat:{spec.conversation_id}"
        return self.account_holder(
            spec.area, request.cookies.get(self.cookie_name(ACCOUNT_COOKIE), "")
        )

    @staticmethod
    def account_holder(area: Area, cookie: str) -> str:
        """The holder of a session signed in with `cookie` in `area` (see `holder`)."""
        return f"{area.value}:{cookie}"

    @staticmethod
    def sign_in_tag(cookie: str) -> str:
        """Which sign-in an agent's or editor's session was opened with, for its app: a digest of
        the cookie (never the cookie), the same for every session that signing out of this
        browser ends (`handle_signout`). Its app counts none of them as another console staying
        open with the claims it keeps."""
        return hashlib.sha256(cookie.encode()).hexdigest()[:16]

    # -- pages ------------------------------------------------------------------------------------

    def _counted(self, excluding: LiveSession | None) -> list[LiveSession]:
        return [
            live for live in self.sessions.values() if not live.replaced and live is not excluding
        ]

    def _over(self, request: web.Request, excluding: LiveSession | None = None) -> Refusal | None:
        if self.closing:
            return Refusal.CLOSING
        counted = self._counted(excluding)
        if len(counted) >= self.settings.max_sessions:
            return Refusal.BUSY
        address = self.client_address(request)
        if sum(1 for live in counted if live.address == address) >= (
            self.settings.max_sessions_per_address
        ):
            return Refusal.ADDRESS_FULL
        return None

    def admission(
        self, request: web.Request, holder: str | None = None
    ) -> tuple[Refusal | None, LiveSession | None]:
        """Why a session from `request` would not start now, if it would not: the server is
        ending, it holds `max_sessions`, or the address holds its share. A browser that holds a
        session already (`holder`: a reload, another tab) is never refused for the limits when
        that session's place would do: it gets the place, and that session, returned here,
        ends. So a reload always opens, and one browser still holds no more places than
        before."""
        refusal = self._over(request)
        if refusal is None or refusal is Refusal.CLOSING or holder is None:
            return refusal, None
        address = self.client_address(request)
        own = [live for live in self._counted(None) if live.holder == holder]
        # A reloaded page's own session first (its page has gone, closing its websocket), then
        # one from the same address, then the oldest.
        own.sort(key=lambda live: (not live.websocket.closed, live.address != address))
        for live in own:
            if self._over(request, excluding=live) is None:
                return None, live
        return refusal, None

    def refusal(self, request: web.Request, holder: str | None = None) -> Refusal | None:
        return self.admission(request, holder)[0]

    def refused_page(self, request: web.Request, refusal: Refusal, path: str) -> web.Response:
        """Said on the page, in the browser's language, in place of a session that would be
        refused: a browser never shows a refused handshake's reason, so the app's page would
        only say that the session ended."""
        if request.method != "HEAD":  # An uptime check's HEAD is no page turned away.
            self.refused[refusal.name.lower()] += 1
        return self._refusal_page(request, refusal, path)

    def _refusal_page(self, request: web.Request, refusal: Refusal, path: str) -> web.Response:
        locale = page_locale(request)
        t = translations(locale)
        # The page tries again by itself when the server says to: a customer left waiting on it
        # gets the chat once there is room, without knowing to reload.
        page = message_page(heading=t.gettext(REFUSAL_HEADING), text=t.gettext(refusal.value),
                            link=path, retry_s=RETRY_AFTER_S, locale=locale)  # fmt: skip
        response = self._html(page, status=503)
        response.headers["Retry-After"] = str(RETRY_AFTER_S)
        return response

    @staticmethod
    def _page_of(request: web.Request) -> str:
        page = request.query.get("page", "/")
        return page if page in PAGES else "/"

    async def handle_unavailable(self, request: web.Request) -> web.Response:
        """Where a page whose session was refused as its websocket opened is sent: the same words
        as a page refused outright (counted once, when the websocket was refused)."""
        why = request.query.get("why", "").upper()
        refusal = Refusal[why] if why in Refusal.__members__ else Refusal.BUSY
        return self._refusal_page(request, refusal, self._page_of(request))

    async def handle_cookies(self, request: web.Request) -> web.Response:
        """Where a customer's page is sent when its websocket came without the cookie the page
        set: no conversation can be kept for this browser, and none was started. It does not
        try again by itself (the browser would only refuse again)."""
        locale = page_locale(request)
        t = translations(locale)
        page = message_page(heading=t.gettext(REFUSAL_HEADING), text=t.gettext(COOKIES_NEEDED),
                            link=self._page_of(request), locale=locale)  # fmt: skip
        return self._html(page)

    async def handle_customer(self, request: web.Request) -> web.Response:
        """A customer's page: their own conversation back, or a new one. No id is ever read from
        the URL or the page, only from the signed cookie. A page whose session could not start
        says why instead. A new customer's conversation is started by their chat's websocket
        (see `chatbot.web.cookies`), never by the page."""
        conversation = await self.customer_conversation(request)
        holder = (
            None if conversation is None else self.holder(request, SessionSpec(None, conversation))
        )
        if (refusal := self.refusal(request, holder)) is not None:
            return self.refused_page(request, refusal, "/")
        page = app_page(area=None, path="/", websocket_url=self.websocket_url(request, "/ws/chat"),
                        locale=page_locale(request))  # fmt: skip
        response = self._html(page)
        # HEAD (uptime checks, link checkers) only asks whether the page is there.
        cookie = request.cookies.get(self.cookie_name(CUSTOMER_COOKIE))
        if (
            conversation is None
            and request.method != "HEAD"
            and not self.signer.read_new_customer(cookie)
        ):
            self._set_customer_cookie(response, self.signer.new_customer())
        return response

    def _set_customer_cookie(self, response: web.StreamResponse, value: str) -> None:
        self._set_cookie(
            response,
            CUSTOMER_COOKIE,
            value,
            max_age=self.settings.customer_days * 86400,
            strict=False,  # Lax: a customer following an emailed link keeps their chat.
        )

    def area_page(self, area: Area) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handle(request: web.Request) -> web.Response:
            locale = page_locale(request)
            t = translations(locale)
            # A database out is the middleware's page (`_database_out_middleware`).
            account = await self.signed_in(request)
            if account is None:
                return self._html(signin_page(area=area, locale=locale))
            if not account.may_open(area):
                # The page the account can open, offered: an agent who followed a link to the
                # editor had only "Sign out".
                other = next((a for a in Area if a is not area and account.may_open(a)), None)
                elsewhere = None if other is None else (
                    f"/{other.value}",
                    t.gettext("Open the {area}").format(area=title(other, locale)),
                )  # fmt: skip
                return self._html(
                    message_page(
                        heading=t.gettext("Not for this account"),
                        text=t.gettext("{name} ({role}) cannot open the {area}.").format(
                            name=account.name, role=account.role.value, area=title(area, locale)
                        ),
                        sign_out=True,
                        elsewhere=elsewhere,
                        locale=locale,
                    ),
                    status=403,
                )
            spec = SessionSpec(area, account=account, locale=locale)
            if (refusal := self.refusal(request, self.holder(request, spec))) is not None:
                return self.refused_page(request, refusal, f"/{area.value}")
            url = self.websocket_url(request, f"/ws/{area.value}")
            page = app_page(area=area, path=f"/{area.value}", websocket_url=url, locale=locale)
            return self._html(page)

        return handle

    async def _loggable_name(self, name: str) -> str:
        """The name typed at sign-in, for the log, if an account has it: anything else may be a
        password typed into the name field, and the log never holds one."""
        try:
            known = await self.accounts.account(name) is not None
        except Exception:  # A busy database: the log line goes without the name.
            known = False
        return repr(name) if known else "a name with no account"

    def _to_signin(self, area: Area, name: str, error: str) -> web.Response:
        """To the sign-in page that says why the last attempt failed; the name typed goes with
        it in a cookie of a few minutes, never in the address (nor, ever, the password)."""
        query = {"next": f"/{area.value}", "error": error}
        response = see_other(f"/signin?{urlencode(query)}")
        value = typed_name_cookie(name)
        self._set_cookie(response, TYPED_NAME_COOKIE, value, max_age=300, strict=True)
        return response

    @web.middleware
    async def _database_out_middleware(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Any request the database's outage reached (a returning customer's page, a websocket
        opening, the sign-out page): the refusal page that tries again by itself, 503, and one
        line in the log, where each gave aiohttp's bare 500 and a traceback."""
        try:
            return await handler(request)
        except HelpdeskError as error:
            if not unreachable(error):
                raise
            self._database_out(request, error)
            if request.path.startswith("/ws/"):  # A handshake: the page says why, and retries.
                return web.Response(status=503, text="the help desk cannot reach its database")
            path = request.path if request.path in PAGES else "/"
            return self.refused_page(request, Refusal.DATABASE_UNREACHABLE, path)

    def _database_out(self, request: web.Request, error: HelpdeskError) -> None:
        """One line in the log for a page that could not reach the database (no traceback: the
        database being out is no bug here)."""
        self.database.met(error)
        log.warning("%s %s from %s: %s", request.method, request.path,
                    self.client_address(request), error)  # fmt: skip

    async def handle_signin_page(self, request: web.Request) -> web.Response:
        """The sign-in form (`GET /signin`), and where a failed sign-in is sent (Post/Redirect/
        Get): the page that says why can be reloaded, and gone back to, without the password
        being sent again."""
        locale = page_locale(request)
        t = translations(locale)
        area = Area.EDITOR if request.query.get("next") == "/editor" else Area.AGENT
        name = typed_name(request.cookies.get(self.cookie_name(TYPED_NAME_COOKIE)))
        error = request.query.get("error")
        try:
            signed = await self.signed_in(request)
        except HelpdeskError as met:
            self._database_out(request, met)
            signed, error = None, "unavailable"
        if signed is not None:
            # Back, after signing in, to the page of an earlier failure: the console instead of
            # a "wrong password" that no longer holds.
            raise web.HTTPSeeOther(f"/{area.value}")
        # Said only while it holds: reloaded once the database is back, it is the plain form.
        if error == "unavailable" and await self.database.trouble() is not None:
            page = signin_page(area=area, name=name, error=t.gettext(DATABASE_OUT), locale=locale)
            return self._html(page, status=503)
        if error == "wrong":
            page = signin_page(area=area, name=name, error=t.gettext("Wrong name or password."),
                               locale=locale)  # fmt: skip
            return self._html(page, status=401)
        if error == "locked":
            address = self.client_address(request)
            verdict = self.limiter.check(address=address)
            try:
                account_wait = await self.accounts.sign_in_wait(name, address=address)
            except Exception:  # A busy database: the page says what the address's limit says.
                account_wait = 0.0
            waited = max(verdict.retry_after_s, account_wait)
            if waited > 0:  # Said only while it holds; after, the plain form.
                wait = max(1, round(waited))
                refused = t.gettext("Too many failed sign-ins. Try again in {wait} seconds.")
                page = signin_page(area=area, name=name, error=refused.format(wait=wait),
                                   locale=locale)  # fmt: skip
                response = self._html(page, status=429)
                response.headers["Retry-After"] = str(wait)
                return response
        return self._html(signin_page(area=area, name=name, locale=locale))

    async def _posted_form(self, request: web.Request) -> Mapping[str, object]:
        """The sign-in form, or a plain 400 for a body that is not a form aiohttp can read: a
        multipart one without a boundary or a field's name, cut short, in a charset Python does
        not know or not in its charset. Each was a 500 and a traceback in the log."""
        try:
            return await request.post()
        except ConnectionError:  # The client left mid-body: nobody to answer, nothing to say.
            raise web.HTTPBadRequest() from None
        except (ValueError, LookupError, *UNREADABLE) as error:
            address = self.client_address(request)
            log.warning("unreadable sign-in form from %s: %s", address, type(error).__name__)
            raise web.HTTPBadRequest() from None

    async def handle_signin(self, request: web.Request) -> web.StreamResponse:
        locale = page_locale(request)
        t = translations(locale)
        if not origin_allowed(request, self.origins):
            return self._html(
                message_page(
                    heading=t.gettext("Refused"),
                    text=t.gettext("Sign in from the help desk's own page."),
                    locale=locale,
                ),
                status=403,
            )
        form = await self._posted_form(request)
        name = str(form.get("name", ""))[:64]
        password = str(form.get("password", ""))
        area = Area.EDITOR if form.get("next") == "/editor" else Area.AGENT
        key = name.strip().lower()
        address = self.client_address(request)
        # The address's limit first: it is kept here, so an address refused already costs
        # neither a password check nor a look at the account's count.
        outcome = None
        if self.limiter.check(address=address).allowed:
            try:
                outcome = await self.accounts.sign_in(name, password, address=address)
            except HelpdeskError as error:  # Not counted as a failure: nothing was checked.
                self._database_out(request, error)
                return self._to_signin(area, name, "unavailable")
        if outcome is None or outcome.retry_after_s > 0:
            shown = await self._loggable_name(key)
            log.warning("sign-in for %s from %s refused: too many failures", shown, address)
            return self._to_signin(area, name, "locked")
        account = outcome.account
        if account is None:
            self.limiter.failed(address=address)
            shown = await self._loggable_name(key)
            log.warning("failed sign-in for %s from %s", shown, address)
            return self._to_signin(area, name, "wrong")
        response = see_other(f"/{area.value}")
        self._set_cookie(
            response,
            ACCOUNT_COOKIE,
            self.signer.account(account.name, account.session_epoch, account.incarnation),
            max_age=self.settings.session_hours * 3600,
            strict=True,
        )
        return response

    async def handle_signout_page(self, request: web.Request) -> web.Response:
        locale = page_locale(request)
        t = translations(locale)
        account = await self.signed_in(request)
        if account is None:
            return self._html(
                message_page(
                    heading=t.gettext("Signed out"),
                    text=t.gettext("You are not signed in."),
                    locale=locale,
                )
            )
        return self._html(
            message_page(
                heading=t.gettext("Sign out"),
                text=t.gettext("Signed in as {name} ({role}).").format(
                    name=account.name, role=account.role.value
                ),
                sign_out=True,
                locale=locale,
            )
        )

    async def handle_signout(self, request: web.Request) -> web.StreamResponse:
        if not origin_allowed(request, self.origins):
            raise web.HTTPForbidden(text="refused: sign out from the help desk's own page")
        response = see_other("/agent")
        cookie = request.cookies.get(self.cookie_name(ACCOUNT_COOKIE))
        self._delete_cookie(response, ACCOUNT_COOKIE, strict=True)
        if (claim := self.signer.read_account(cookie)) is not None:
            # Kept in the database: every server sharing it refuses the cookie (a copy of it too)
            # and closes the consoles opened with it at its next check, not only this one's.
            try:
                await self.accounts.sign_out(claim.digest, expires_at=claim.until)
            except HelpdeskError as error:
                log.warning("signing %r out on other servers failed: %s", claim.name, error)
            except Exception:  # Not the database being out: a bug, with its traceback.
                log.exception("cannot sign %r out on other servers", claim.name)
        # This browser's open consoles end with it: signed out in one tab, another went on
        # claiming and replying as the account (each session holds what it signed in with).
        if cookie:
            # The holders of this browser's sessions signed in with it, in every area.
            mine = {self.account_holder(area, cookie) for area in Area}
            for live in list(self.sessions.values()):
                if live.holder in mine:
                    with contextlib.suppress(Exception):  # Closed meanwhile.
                        await live.websocket.close(
                            code=WSCloseCode.POLICY_VIOLATION, message=SIGNED_OUT
                        )
        return response

    async def handle_no_icon(self, _request: web.Request) -> web.Response:
        return web.Response(status=204)

    async def handle_health(self, _request: web.Request) -> web.Response:
        # 503 while shutting down: a load balancer sends no more pages here, and a page's "Start
        # again" waits for the server that follows instead of landing on this one's last words.
        # 503 too while the database cannot be reached: every page would only say so.
        trouble = None if self.closing else await self.database.trouble()
        ok = not self.closing and trouble is None
        body: dict[str, object] = {
            "ok": ok,
            "closing": self.closing,
            "sessions": len(self._counted(None)),
            "refused": dict(self.refused),
        }
        if self.closing:
            body["reason"] = "closing"
        elif trouble is not None:
            body["reason"] = UNREACHABLE
        return web.json_response(body, status=200 if ok else 503)

    # -- websockets -------------------------------------------------------------------------------

    def websocket(
        self, area: Area | None
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            return await self.handle_session(request, area)

        return handle

    async def customer_spec(self, request: web.Request) -> SessionSpec | None | web.StreamResponse:
        """A customer's session: their conversation's (a spec), a new one's (None: it starts only
        once the session is let in), or a refusal (a response) for a browser that sent no cookie
        at all: its page set one, so this browser does not keep them."""
        cookie = request.cookies.get(self.cookie_name(CUSTOMER_COOKIE))
        if not cookie:
            return await self.send_page_to(request, "/cookies", why="no_cookies")
        conversation = self.signer.read_customer(cookie)
        if conversation is not None and await self.desk.has_conversation(conversation):
            return SessionSpec(None, conversation, locale=page_locale(request))
        if conversation is not None or self.signer.read_new_customer(cookie):
            return None  # Ours, and kept: cookies work in this browser.
        raise web.HTTPForbidden(text="refused: no session; reload the page")

    async def send_page_to(
        self, request: web.Request, url: str, *, why: str
    ) -> web.WebSocketResponse:
        """Let the handshake in only to send the page to `url`, which says why its session does
        not start (counted under `why`): a browser never shows a refused handshake's reason, and
        the page would only say that the session ended. (textual-serve's page opens the URL the
        app asks it to.)"""
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=MAX_WS_MESSAGE_BYTES)
        await websocket.prepare(request)  # Not a websocket handshake at all: refused here.
        self.refused[why] += 1
        self._sending_on.add(websocket)
        try:
            await websocket.send_json(["open_url", {"url": url, "new_tab": False}])
            # The page leaves at once, closing this; a client that stays is closed after a while.
            async with asyncio.timeout(SENT_ON_S):
                async for _message in websocket:
                    pass
        except (TimeoutError, ConnectionError):
            pass
        finally:
            self._sending_on.discard(websocket)
            await websocket.close()
        return websocket

    async def handle_session(self, request: web.Request, area: Area | None) -> web.StreamResponse:
        """Check everything before starting: a refused session never starts a process, nor a
        new customer's conversation."""
        if self.closing:
            raise web.HTTPServiceUnavailable(text="helpdesk is shutting down")
        if not origin_allowed(request, self.origins):
            log.warning("websocket from origin %r refused", request.headers.get("Origin"))
            raise web.HTTPForbidden(text="refused: this page is not the help desk's")
        spec: SessionSpec | None
        signed_in_until: float | None = None
        signed_in_with: str | None = None
        if area is None:
            found = await self.customer_spec(request)
            if isinstance(found, web.StreamResponse):
                return found
            spec = found
        else:
            signed = await self.sign_in(request)
            if signed is None or not signed[0].may_open(area):
                raise web.HTTPForbidden(text="refused: no session; reload the page")
            account, claim = signed
            signed_in_until, signed_in_with = claim.until, claim.digest
            spec = SessionSpec(area, account=account, locale=page_locale(request))
        holder = None if spec is None else self.holder(request, spec)
        # Checked again: the page was served before other sessions may have started.
        refusal, replaced = self.admission(request, holder)
        if refusal is not None:
            why = refusal.name.lower()
            query = urlencode({"why": why, "page": "/" if area is None else f"/{area.value}"})
            return await self.send_page_to(request, f"/unavailable?{query}", why=why)

        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=MAX_WS_MESSAGE_BYTES)
        live = LiveSession(self.client_address(request), holder, websocket)
        live.signed_in_until, live.signed_in_with = signed_in_until, signed_in_with
        key = next(self._session_numbers)
        # Its place is held from here (nothing was awaited since the check): sessions let in
        # together never go over the limits.
        self.sessions[key] = live
        if replaced is not None:
            replaced.replaced = True
        spawned = False

        async def close(*, code: int = WSCloseCode.OK, message: bytes = b"") -> bool:
            # A new customer's handshake is answered once their app has started: one that
            # failed before is answered only to be closed, saying so.
            await self._answered(websocket, request)
            return await websocket.close(code=code, message=message)

        async def send_away() -> None:
            # Its process found the database with no connection to spare: the page says the help
            # desk is serving as many people as it can, and tries again by itself, where it said
            # that it cannot open (and a customer's "Try again" only met the same refusal).
            self.refused["database_full"] += 1
            page = "/" if area is None else f"/{area.value}"
            url = f"/unavailable?{urlencode({'why': 'busy', 'page': page})}"
            await self._answered(websocket, request)
            with contextlib.suppress(ConnectionError):
                await websocket.send_json(["open_url", {"url": url, "new_tab": False}])
            await websocket.close()

        try:
            if replaced is not None:
                await self._take_over(replaced)
            new = spec is None
            if spec is None:
                # Its conversation is started once its app has (below), so that a session whose
                # process fails to start leaves none behind, nor one more per reload.
                spec = SessionSpec(None, None, locale=page_locale(request))
            else:
                live.spec = spec
                await websocket.prepare(request)
            if live.replaced or self.closing:  # Opened again meanwhile, or the server ends.
                return await self._answered(websocket, request)
            arguments = list(self.child(spec))
            if spec.area is not None:
                cookie = request.cookies.get(self.cookie_name(ACCOUNT_COOKIE), "")
                arguments += ["--sign-in", self.sign_in_tag(cookie)]
            if (zone := browser_timezone(request)) is not None:
                arguments += ["--timezone", zone]
            live.service = service = SessionProcess(
                arguments,
                environment=self.environment,
                secrets=self.session_secrets(spec),
                zygote=self.zygote,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=close,
                server=self,
                name=f"session {key}",
                send_away=send_away,
            )
            width = _clamp(request.query.get("width"), 80, MAX_COLUMNS)
            height = _clamp(request.query.get("height"), 24, MAX_ROWS)
            await service.start(width, height)
            spawned = True
            if new:
                try:
                    started = await asyncio.wait_for(
                        service.wait_ready(), self.settings.start_timeout_s
                    )
                except TimeoutError:
                    # Hung before it could serve anyone (a stuck disk or network share): the
                    # page waited on its handshake until serve stopped. Stopped below.
                    log.warning(
                        "session %s (pid %s) did not start within %g s; stopping it",
                        key, service.pid, self.settings.start_timeout_s,
                    )  # fmt: skip
                    await close(code=WSCloseCode.INTERNAL_ERROR, message=FAILED_TO_START)
                    return websocket
                if not started:
                    return websocket  # Its process ended: closed as failing to start.
                if live.replaced or self.closing:
                    return await self._answered(websocket, request)
                conversation = await self.desk.start_conversation()
                live.kept_at = self.clock()  # Just started: kept as long as a kept one.
                self._set_customer_cookie(websocket, self.signer.customer(conversation))
                spec = SessionSpec(None, conversation, locale=page_locale(request))
                live.spec, live.holder = spec, self.holder(request, spec)
                await websocket.prepare(request)
                await service.send_meta({"type": "conversation", "id": conversation})
            self.report(
                f"helpdesk serve: session {key} started ({describe(spec)}, pid {service.pid})"
            )
            await self._relay(websocket, service)
        except ConnectionError:
            # The browser went away mid-handshake (a reload storm): nothing failed here, and a
            # traceback for each one filled the log.
            log.info("browser session %s: the browser left as it opened", key)
        except Exception:
            log.exception("browser session failed")
        finally:
            try:
                if live.service is not None:
                    await live.service.stop()
            finally:
                del self.sessions[key]
                live.done.set()
                if spawned:
                    self.report(f"helpdesk serve: session {key} ended")
                if websocket.prepared and not websocket.closed:
                    await websocket.close()
        if not websocket.prepared:  # It failed before the handshake was answered.
            raise web.HTTPInternalServerError(text="the session could not start")
        return websocket

    @staticmethod
    async def _answered(
        websocket: web.WebSocketResponse, request: web.Request
    ) -> web.WebSocketResponse:
        """The handshake answered (if it was not yet), for a session that does not go on."""
        if not websocket.prepared:
            await websocket.prepare(request)
        return websocket

    async def _take_over(self, old: LiveSession) -> None:
        """A browser's session, opened again with the server full, takes its old one's place:
        that one ends (a page of it still open says the session ended) and its process is gone
        before the new one starts, so no more processes run than the limits allow."""
        with contextlib.suppress(Exception):  # Already closed, or not yet answered.
            await old.websocket.close(code=WSCloseCode.GOING_AWAY, message=b"opened again")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(old.done.wait(), STOP_GRACE_S * 3)

    async def _relay(self, websocket: web.WebSocketResponse, service: SessionProcess) -> None:
        """Keystrokes, resizes and focus changes to the app; anything malformed is dropped."""
        pastes = PasteFilter()
        async for message in websocket:
            if message.type != WSMsgType.TEXT or (envelope := _envelope(message.data)) is None:
                continue
            kind, data = envelope
            if kind == "stdin" and isinstance(data, str):
                # A lone surrogate (JSON may escape one, "\ud800") cannot be UTF-8: replaced, as
                # the encoding ended the session.
                text = LONE_SURROGATE.sub("\ufffd", data)
                await service.send_bytes(pastes.feed(text).encode("utf-8"))
            elif kind == "resize" and isinstance(data, dict):
                await service.set_terminal_size(
                    _clamp(data.get("width"), 80, MAX_COLUMNS),
                    _clamp(data.get("height"), 24, MAX_ROWS),
                )
            elif kind == "ping" and isinstance(data, str):  # The page's is its clock, a string.
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await service.blur()
            elif kind == "focus":
                await service.focus()

    # -- running ----------------------------------------------------------------------------------

    def zygote_environment(self) -> dict[str, str]:
        """What every session's process starts with: the server's environment, textual-serve's
        settings for a web driver, and the resolved settings."""
        textual = {  # As textual-serve's AppService sets them, less the size (per session).
            "TEXTUAL_DRIVER": SESSION_DRIVER,
            "TEXTUAL_FPS": "60",
            "TEXTUAL_COLOR_SYSTEM": "truecolor",
            "TERM_PROGRAM": "textual",
            "TERM_PROGRAM_VERSION": version("textual-serve"),
        }
        inherited = secret_free(dict(os.environ))
        return inherited | textual | self.environment

    def session_secrets(self, spec: SessionSpec) -> dict[str, str]:
        """Only a session that offers the editor (whose "Try it" asks Valen) gets the Valen key:
        a customer's or an agent's process never holds it, nor does the zygote."""
        key = self.valen_key
        if key and spec.account is not None and spec.account.may_open(Area.EDITOR):
            return {"VALEN_API_KEY": key}
        return {}

    async def start(self) -> int:
        """Start the zygote, then listen; returns the port (useful with port 0).

        An address that cannot be listened on fails before the zygote starts; any failure after
        it started ends it (and removes its folder) before the error goes on, so a server that
        did not start leaves no process behind to hold the terminal or the pipe it writes to."""
        await self._check_address()
        try:
            return await self._start()
        except BaseException:  # Ctrl+C during the start too.
            await self._undo_start()
            raise

    async def _check_address(self) -> None:
        """Bind the address as listening will, then let it go: one taken, not this machine's or
        not an address at all raises the same OSError here, in milliseconds."""
        probe = await asyncio.get_running_loop().create_server(
            asyncio.Protocol, self.settings.host, self.settings.port, start_serving=False
        )
        probe.close()
        await probe.wait_closed()

    async def _undo_start(self) -> None:
        try:
            if self._runner is not None:
                await self._runner.cleanup()
        finally:
            self._runner = None
            zygote, self.zygote = self.zygote, None
            if zygote is not None:
                await zygote.stop()

    async def _start(self) -> int:
        # Folders of the zygotes of servers killed outright (and their zygotes with them).
        sweep_stale_folders()
        if self.preload:
            zygote = Zygote(self.zygote_environment())
            try:
                await zygote.start()
            except (OSError, RuntimeError) as error:
                log.warning("sessions will start without preloading: %s", error)
            else:
                self.zygote = zygote
        app = await self._make_app()
        self._runner = _AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.settings.host, self.settings.port)
        await site.start()
        server = site._server
        port = self.settings.port
        if server is not None and port == 0:
            sockets = getattr(server, "sockets", None) or []
            port = sockets[0].getsockname()[1]
        self.port = port
        self.origins = allowed_origins(
            host=self.settings.host, port=port, public_url=self.settings.public_url
        )
        self._checker = asyncio.create_task(self._check_accounts(), name="session checks")
        return port

    async def _check_accounts(self) -> None:
        """Close each open agent or editor session whose account has gone, whose sessions were
        ended (new password or role) since it signed in, whose browser signed out (on any server)
        or whose sign-in has run out."""
        while True:
            await asyncio.sleep(self.settings.session_check_s)
            await self.check_accounts_once()
            await self.keep_conversations_once()

    async def keep_conversations_once(self) -> None:
        """Keep the conversations of open customer pages not kept for `KEEP_EVERY_S` (or not
        yet): one a visitor is still reading is never pruned as nobody's. While the database
        cannot be reached they are tried again each round (the sessions and bots say it)."""
        now = self.clock()
        due: list[LiveSession] = []
        ids: set[int] = set()
        for live in self.sessions.values():
            spec = live.spec
            if spec is None or spec.area is not None or spec.conversation_id is None:
                continue
            if live.kept_at is None or now - live.kept_at >= KEEP_EVERY_S:
                due.append(live)
                ids.add(spec.conversation_id)
        if not due:
            return
        try:
            await self.desk.keep_conversations(sorted(ids))
        except HelpdeskError:
            return
        except Exception:  # Not the database being out: a bug, with its traceback.
            log.exception("cannot keep the conversations of open pages")
            return
        for live in due:
            live.kept_at = now

    async def check_accounts_once(self) -> None:
        """One round of `_check_accounts`. A database that cannot be reached is said once when
        the checks start failing and once when they work again, as the bot and the change feed
        say it: a traceback per open console per round filled the log through an outage. The
        round's other accounts then wait for the next round (each would wait on the database
        too); the sign-ins that run out still end."""
        unreachable = False
        signed_out: set[str] = set()
        digests = {
            live.signed_in_with
            for live in self.sessions.values()
            if live.signed_in_with is not None and not live.websocket.closed
        }
        if digests:
            # The cookies signed out on any server sharing the database: one query for them all.
            try:
                signed_out = await self.accounts.signed_out(digests)
            except HelpdeskError as error:  # The database is out: check again next round.
                unreachable = True
                self._checks_failed(error)
            except Exception:  # Not the database being out: a bug, with its traceback.
                log.exception("cannot check the sign-ins of open sessions")
        for live in list(self.sessions.values()):
            spec = live.spec
            if spec is None or spec.account is None or live.websocket.closed:
                continue
            signed = spec.account
            if live.signed_in_until is not None and self.clock() >= live.signed_in_until:
                log.warning("ending the session of %r: its sign-in ran out", signed.name)
                await live.websocket.close(code=WSCloseCode.POLICY_VIOLATION, message=EXPIRED)
                continue
            if unreachable:
                continue
            if live.signed_in_with in signed_out:
                log.warning("ending the session of %r: its browser signed out", signed.name)
                await live.websocket.close(code=WSCloseCode.POLICY_VIOLATION, message=SIGNED_OUT)
                continue
            try:
                account = await self.accounts.account(signed.name)
            except HelpdeskError as error:  # The database is out: check again next round.
                unreachable = True
                self._checks_failed(error)
                continue
            except Exception:  # Not the database being out: a bug, with its traceback.
                log.exception("cannot check the account of a session")
                continue
            if self._accounts_lost:
                self._accounts_lost = False
                log.warning("session checks: back")
            if (
                account is None
                or account.session_epoch != signed.session_epoch
                or account.incarnation != signed.incarnation  # Removed, and added again.
                or (spec.area is not None and not account.may_open(spec.area))
            ):
                log.warning("ending the session of %r: its account changed", signed.name)
                await live.websocket.close(code=WSCloseCode.POLICY_VIOLATION, message=SIGNED_OUT)

    def _checks_failed(self, error: HelpdeskError) -> None:
        """Said once when the session checks cannot reach the database (and "back" once they
        can again)."""
        if not self._accounts_lost:
            self._accounts_lost = True
            every = self.settings.session_check_s
            log.warning("session checks: %s (retrying every %g s)", error, every)

    async def shutdown(self) -> None:
        """Refuse new sessions, tell every browser, let every app process quit (killing any
        that will not), then stop listening."""
        self.closing = True
        if self._checker is not None:
            self._checker.cancel()
        sessions = list(self.sessions.values())
        for websocket in [*(live.websocket for live in sessions), *self._sending_on]:
            with contextlib.suppress(Exception):  # Closed already, or not yet answered.
                await websocket.close(
                    code=WSCloseCode.GOING_AWAY, message=b"helpdesk is shutting down"
                )
        if sessions:
            await asyncio.wait(
                [asyncio.create_task(live.done.wait()) for live in sessions],
                timeout=STOP_GRACE_S * 3,
            )
        for live in list(self.sessions.values()):  # Handlers that did not finish in time.
            if live.service is not None:
                await live.service.stop()
        if self._runner is not None:
            await self._runner.cleanup()
        if self.zygote is not None:
            await self.zygote.stop()


def describe(spec: SessionSpec) -> str:
    """A session for the server's log: its area and conversation or account, never a secret."""
    if spec.area is None:
        return f"chat, conversation {spec.conversation_id}"
    assert spec.account is not None
    return f"{spec.area.value}, account {spec.account.name}"


__all__ = [
    "ACCOUNT_COOKIE",
    "CUSTOMER_COOKIE",
    "CustomerDesk",
    "HelpdeskServer",
    "SessionSpec",
    "describe",
]
