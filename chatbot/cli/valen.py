"""`helpdesk valen check`: one known request to the configured Valen, reported line by line.

It is the first thing to run when live mode fails, so it reports what was tried (base URL,
dialect, route), what came back (HTTP status, latency, whether the key was accepted, the answer)
and, on failure, one line saying what is wrong. It sends exactly one request: no retries, no
cache, so the status shown is the server's own. It waits for the whole reply no longer than the
bot would (`valen.budget_s`): a server too slow for the bot fails the check too.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, TextIO

from chatbot.cli.evaluate import Progress
from chatbot.cli.options import (
    Parser,
    dialect_help,
    print_error,
    require_sendable_key,
    settings_from,
)
from chatbot.text import printable
from chatbot.valen.errors import (
    AuthenticationError,
    BudgetExhaustedError,
    ConnectionBrokenError,
    MalformedKeyError,
    RefusedError,
    ReplyTooLargeError,
    ValenError,
    ValenTimeoutError,
)
from chatbot.valen.protocol import ANSWER_NAME, PREDICATE, Question, input_text

if TYPE_CHECKING:
    import httpx

# A question the shipped help center answers, with the passage that answers it: a working Valen
# gives it a high probability, so a low one is worth a look too.
CHECK_QUESTION = "How do I unlock a bike?"
CHECK_PASSAGE = (
    "To unlock a bike, open the app, scan the QR code on the handlebar and wait for the lock to "
    "click open."
)

# What each failure most likely means, for the one-line message.
HINTS = {
    "auth": "check VALEN_API_KEY",
    "malformed-key": "set VALEN_API_KEY to the key alone, on one line",
    "not-found": "check --base-url and --dialect",
    "connection": "is the server running, and is --base-url right?",
    "timeout": "the server did not answer in time",
    "invalid-response": "is this a Valen server, and is --dialect right?",
    "redirect": "if Valen has moved there, point --base-url at it",
    "unexpected-status": "not a status Valen's protocol sends: is --base-url a Valen server?",
}


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("valen", help="check the connection to Valen")
    sub = parser.add_subparsers(title="valen commands", metavar="VALEN_COMMAND",
                                parser_class=Parser)  # fmt: skip
    check = sub.add_parser(
        "check",
        help="send one known request and report status, latency and whether the key works",
        description="Send one known request to Valen (no retries, no cache) and report it.",
        epilog="Exit status: 0 when Valen answered; 1 when the check failed; 2 for bad input; "
        "130 when interrupted (Ctrl+C). While it waits for Valen, stderr says so on a terminal.",
    )
    check.add_argument("--base-url", metavar="URL", help="Valen base URL (env VALEN_BASE_URL)")
    check.add_argument(
        "--dialect",
        choices=["decisions", "systemone"],
        help=dialect_help(),
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(func=run_check)


@dataclass
class CheckReport:
    """What one check request found."""

    base_url: str
    dialect: str
    url: str
    ok: bool = False
    status: int | None = None
    """The status the server sent, even when the rest of its reply never came."""
    incomplete: bool = False
    """A status came, but not the whole reply (cut short, too slow or too large)."""
    too_large: bool = False
    """The reply went past the size cap, and was not read further (so `incomplete` too)."""
    latency_ms: float | None = None
    key: str = "unknown"
    """`accepted`, `rejected`, `malformed` (never sent), `not set` (with what the server made of
    that when it said), or `unknown` when a key was sent and the reply cannot say."""
    probability: float | None = None
    answer: str = ""
    problem: str | None = None


def _key_verdict(*, sent: bool, status: int | None) -> str:
    if not sent:
        if status in (401, 403):
            return "not set (the server wants one)"
        return "not set (none needed)" if _success(status) else "not set"
    if status in (401, 403):
        return "rejected"
    return "accepted" if _success(status) else "unknown"


def _success(status: int | None) -> bool:
    """A 2xx, which the client reads an answer from (a 201 with a valid body is one)."""
    return status is not None and 200 <= status < 300


async def check(
    args: argparse.Namespace, *, sending: Callable[[CheckReport, float], None] | None = None
) -> CheckReport:
    """Send the known request and describe the outcome; never raises a `ValenError`. `sending`
    is told what is about to be tried (the report's URL, base URL and dialect) and the most it
    waits for the reply (`valen.budget_s`), just before the request goes: a server that hangs
    left a blank screen until the budget ran out."""
    # Here, not at the top: httpx and the settings cost `helpdesk --help` nothing this way.
    from chatbot.assembly import make_http_client, make_valen_client
    from chatbot.config import _source

    settings = settings_from(args, knowledge_base=False)
    require_sendable_key(settings)  # Live whatever `valen.replay` says.
    # aiohttp is otherwise imported on the first request (~110 ms): now, so the latency shown is
    # the request's.
    async with make_http_client(settings, started=True) as http:
        statuses: list[int] = []

        async def note_status(response: httpx.Response) -> None:
            # Called once the headers are in, before the body: a body cut short, too slow or too
            # large still leaves the status the server sent.
            statuses.append(response.status_code)

        http.event_hooks["response"].append(note_status)
        client = make_valen_client(settings, http)
        # The client's URLs are the printable ones: credentials in them are already hidden.
        report = CheckReport(base_url=client.base_url, dialect=client.dialect, url=client.url)
        report.key = _key_verdict(sent=client.has_key, status=None)
        if client.key_problem is not None:
            report.key = "malformed"
        # Where the key in force was set, for the hint when it is refused: a key in the settings
        # file was refused with "check VALEN_API_KEY", a variable nobody had set.
        key_from = _source("valen.api_key", {}) if client.has_key else None
        text = input_text(CHECK_QUESTION, CHECK_PASSAGE)
        if sending is not None:
            sending(report, client.budget_s)
        started = time.perf_counter()
        try:
            # The whole reply within the bot's budget: each read within the read timeout is not
            # enough (a server sending a byte a second never trips it).
            try:
                async with client.clock.timeout(client.budget_s):
                    reply = await client.post(text, [Question(ANSWER_NAME, PREDICATE)])
            except TimeoutError:
                raise BudgetExhaustedError(
                    f"no complete reply within {client.budget_s:g} s (valen.budget_s, the time "
                    "the bot gives Valen per question): the bot would give up on it too"
                ) from None
            report.latency_ms = (time.perf_counter() - started) * 1000
            report.status = reply.status
            report.key = _key_verdict(sent=client.has_key, status=reply.status)
            outcome = client.read(reply, [ANSWER_NAME])[ANSWER_NAME]
        except ValenError as error:
            if not isinstance(error, MalformedKeyError):  # Nothing was sent, so nothing timed.
                report.latency_ms = report.latency_ms or (time.perf_counter() - started) * 1000
            if report.status is None and statuses:  # It answered, then the reply failed.
                report.status = statuses[-1]
                report.key = _key_verdict(sent=client.has_key, status=report.status)
                report.incomplete = True
                report.too_large = isinstance(error, ReplyTooLargeError)
            answered = report.status if report.incomplete else None
            report.problem = _problem(
                error, key_sent=client.has_key, answered=answered, key_from=key_from
            )
            return report
    if isinstance(outcome, RefusedError):
        report.ok, report.answer = True, "refused (the server works; the model declined)"
    elif isinstance(outcome, ValenError):
        report.problem = _problem(outcome, key_sent=client.has_key, key_from=key_from)
    else:
        report.ok, report.probability = True, outcome
        # `+ 0.0`: a -0.0 from the server reads 0.000, not "-0.000".
        report.answer = f"probability {outcome + 0.0:.3f} that the passage answers the question"
    return report


def _problem(
    error: ValenError, *, key_sent: bool, answered: int | None = None, key_from: str | None = None
) -> str:
    """`key_from` is where the key sent was set, as the settings say it (`from VALEN_API_KEY`,
    `in /home/ana/.config/helpdesk/config.toml`): the key's hints name that place."""
    hint = HINTS.get(error.kind)
    if key_from is not None and isinstance(error, AuthenticationError | MalformedKeyError):
        place = key_from.removeprefix("from ")  # A variable's name, or...
        if place == key_from:  # ...`in PATH`: the settings file.
            place = f"valen.api_key {key_from}"
        if isinstance(error, AuthenticationError):
            hint = f"check {place}"
        else:
            hint = f"set {place} to the key alone, on one line"
    if isinstance(error, ConnectionBrokenError):  # Reached: whether it runs is not the question.
        hint = "the server was reached: its log, or a proxy's, may say why it broke off"
    if answered is not None and isinstance(error, ValenTimeoutError):
        hint = None  # "Did not answer in time" would deny the status it sent; the message says.
    if isinstance(error, AuthenticationError) and not key_sent:
        hint = "Valen wants a key: set VALEN_API_KEY"
    return error.describe() + (f" ({hint})" if hint else "")


def heading(report: CheckReport) -> str:
    """The report's first line: what is tried."""
    return printable(f"Valen check: POST {report.url}")


def render(report: CheckReport, *, with_heading: bool = True) -> str:
    """The report; without its first line when that was printed already (`heading`)."""
    status = str(report.status) if report.status is not None else "none (no reply)"
    if report.too_large:  # It came whole enough to say so: "no complete reply" hid why.
        status += " (reply too large, read no further)"
    elif report.incomplete:
        status += " (no complete reply)"
    latency = f"{report.latency_ms:.0f} ms" if report.latency_ms is not None else "-"
    lines = [
        *([heading(report)] if with_heading else []),
        f"  base URL     {report.base_url}",
        f"  dialect      {report.dialect}",
        f"  HTTP status  {status}",
        f"  latency      {latency}",
        f"  API key      {report.key}",
    ]
    if report.answer:
        lines.append(f"  answer       {report.answer}")
    lines.append(f"  result       {'ok' if report.ok else 'FAILED'}")
    return printable("\n".join(lines))


class Waiting(Progress):
    """The line saying, on a terminal (stderr), that the check waits for Valen and for how long
    at most, as `ask` says it asks: the heading alone sat there for the whole budget (20 s)
    while Valen hung. Taken away before the report is printed."""

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__([], stream)
        self.budget_s = 0.0

    def line(self) -> str:
        return f"waiting for Valen's reply (at most {self.budget_s:g} s)…"

    def wait(self, budget_s: float) -> None:
        """The request went: Valen's reply is awaited for `budget_s` seconds at most."""
        self.budget_s = budget_s
        self.show()


def run_check(args: argparse.Namespace) -> int:
    import asyncio  # Not at the top: `helpdesk --help` need not load it.

    sent = False
    waiting = Waiting(sys.stderr if sys.stderr.isatty() else None)

    def sending(report: CheckReport, budget_s: float) -> None:
        nonlocal sent
        sent = True
        if not args.json:  # One JSON document, at the end: nothing before it.
            # Flushed: a pipe's output is otherwise held until the reply, or the budget, ends.
            print(heading(report), flush=True)
        waiting.wait(budget_s)

    try:
        with waiting.around_logging():
            report = asyncio.run(check(args, sending=sending))
    except KeyboardInterrupt:
        waiting.clear()
        # One line, as `eval` says where it was: exit status 130 alone said nothing.
        said = "while waiting for Valen's reply" if sent else "before the request was sent"
        print(f"helpdesk valen check: interrupted {said}; no result", file=sys.stderr)
        raise
    finally:
        waiting.clear()
    if args.json:
        print(json.dumps(asdict(report), indent=2, ensure_ascii=False))
    else:
        print(render(report, with_heading=not sent))
    if report.ok:
        return 0
    print_error(f"Valen check failed: {printable(report.problem or 'unknown problem')}")
    return 1
