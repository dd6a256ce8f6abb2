"""`helpdesk bot`: a bot worker. Answers pending questions from the store until stopped.

Run as many as you like, in as many processes and on as many hosts as share the database. On
SIGTERM or Ctrl+C a worker takes no new questions, waits up to `bot.shutdown_grace_s` for those it
is judging, and gives back the rest for another worker.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from typing import TYPE_CHECKING

from chatbot.cli.options import (
    PrintableFormatter,
    add_db_option,
    add_engine_options,
    setting_default,
    settings_from,
)
from chatbot.text import printable

# The worker's modules are imported when it runs, so that registering it costs `helpdesk --help`
# nothing.
if TYPE_CHECKING:
    from chatbot.config import Settings
    from chatbot.desk.bot import BotWorker


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "bot", help="run a bot worker: answer pending questions until stopped"
    )
    add_db_option(parser)
    parser.add_argument(
        "--concurrency",
        type=int,
        metavar="N",
        default=argparse.SUPPRESS,
        help=f"questions judged at once ({setting_default('bot.concurrency')})",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="a line per question")
    add_engine_options(parser)
    parser.set_defaults(func=run)


def valen_mode(settings: Settings) -> str:
    """How judgments are made, for a start line: `replay` (recorded answers only, no network),
    or `live, URL` (`live, recording, URL` with `--replay record`); the URL as `display_url`
    shows it, and never the key. Without it a worker pointed at the wrong place, or left in
    replay mode, looked the same as one that worked."""
    from chatbot.valen.redact import display_url

    valen = settings.valen
    if valen.replay == "on":
        return "replay"
    mode = "live" if valen.replay == "off" else "live, recording"
    key = valen.api_key.get_secret_value() if valen.api_key is not None else ""
    return f"{mode}, {display_url(valen.base_url, key=key)}"


def _logger(verbose: bool) -> logging.Logger:
    # Made directly, not by getLogger: the shared `helpdesk.bot` logger, set not to propagate,
    # stayed so for the rest of the process, and a later log capture (a test's) saw nothing.
    log = logging.Logger("helpdesk.bot", logging.INFO if verbose else logging.WARNING)
    handler = logging.StreamHandler(sys.stderr)
    # The key scrubbed, and control characters spelled out, as in every other line printed.
    handler.setFormatter(PrintableFormatter("helpdesk bot: %(message)s"))
    log.addHandler(handler)
    return log


async def serve(settings: Settings, *, log: logging.Logger) -> BotWorker:
    """Run one worker until SIGTERM or SIGINT; returns it (and its stats) once stopped."""
    import asyncio  # Not at the top: `helpdesk --help` need not load it.

    from chatbot.assembly import (
        build_engine,
        build_locale_engines,
        check_knowledge_base,
        engine_readers,
        make_http_client,
        open_knowledge_base,
        open_service,
        store_name,
    )
    from chatbot.desk.aio import AsyncDesk
    from chatbot.desk.bot import BotWorker
    from chatbot.engine.live import LiveEngine

    # Before the desk opens (and makes its tables): a knowledge base that is not there (a
    # mistyped database name) is one line, where the worker escalated every question as
    # `no-passages` from a new, empty one.
    check_knowledge_base(settings)
    # Made before the desk opens, as the knowledge base is checked: certificates its TLS cannot
    # use (a bad SSL_CERT_FILE) are one line, where each question went to a person as
    # "unexpected FileNotFoundError while asking Valen".
    http = make_http_client(settings)
    try:
        desk = AsyncDesk.open(lambda: open_service(settings))
    except BaseException:
        await http.aclose()
        raise
    try:
        async with http:
            passages = open_knowledge_base(settings, lock_timeout=2.0)
            live = LiveEngine(
                build_engine(settings, http, passages), passages, on_problem=log.warning
            )
            translated = build_locale_engines(settings, http, live.engine, on_problem=log.warning)
            bot = settings.bot
            worker = BotWorker(desk, lambda: live.engine, concurrency=bot.concurrency,
                               lease_s=bot.lease_s, poll_s=bot.poll_s,
                               grace_s=bot.shutdown_grace_s, log=log,
                               locale_engines=engine_readers(translated))  # fmt: skip
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(signum, worker.stop)
            await desk.watch()
            following = [asyncio.create_task(each.follow())
                         for each in (live, *translated.values())]  # fmt: skip
            where = printable(store_name(settings.store.db))
            # The knowledge base too: a worker answering from the wrong one looked like any other.
            kb = printable(passages.location)
            print(
                f"helpdesk bot {worker.name}: answering questions from {where} with the knowledge"
                f" base {kb} (Valen: {valen_mode(settings)}), {bot.concurrency} at once;"
                " Ctrl+C to stop",
                file=sys.stderr,
                flush=True,
            )
            try:
                await worker.run()
            finally:
                for task in following:
                    task.cancel()
                await asyncio.gather(*following, return_exceptions=True)
                passages.close()
                for each in translated.values():
                    if each.passages is not None:
                        each.passages.close()
                for signum in (signal.SIGTERM, signal.SIGINT):
                    loop.remove_signal_handler(signum)
    finally:
        await desk.aclose()
    return worker


def run(args: argparse.Namespace) -> int:
    import asyncio  # Not at the top: `helpdesk --help` need not load it.

    settings = settings_from(args)
    worker = asyncio.run(serve(settings, log=_logger(args.verbose)))
    # Every question it took, given back ones too: "gave back 1 question unjudged" was followed
    # by "stopped; no questions".
    print(f"helpdesk bot {worker.name}: stopped; {worker.stats.summary()}",
          file=sys.stderr)  # fmt: skip
    return 0
