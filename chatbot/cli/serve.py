"""`helpdesk serve`: the help desk in a browser (customer chat, agent console, editor).

Listens on 127.0.0.1:8000 by default. Put it behind a TLS proxy before exposing it: it speaks
plain HTTP, and says so when asked to listen on every address.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import TYPE_CHECKING

from chatbot.accounts.roles import Area
from chatbot.cli.options import (
    add_db_option,
    add_engine_options,
    setting_default,
    settings_from,
)
from chatbot.errors import HelpdeskError
from chatbot.text import counted

# The server's modules are imported when it runs, so that registering it costs `helpdesk --help`
# nothing.
if TYPE_CHECKING:
    from chatbot.config import Settings
    from chatbot.desk.aio import AsyncDesk
    from chatbot.web.bots import BotWorkers
    from chatbot.web.server import HelpdeskServer
    from chatbot.web.spec import SessionSpec

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "serve", help="serve the chat, the agent console and the editor to browsers"
    )
    web = parser.add_argument_group("web options", argument_default=argparse.SUPPRESS)
    web.add_argument("--host", help=f"address to listen on ({setting_default('web.host')})")
    web.add_argument(
        "--port", type=int, help=f"port to listen on, 0: any free ({setting_default('web.port')})"
    )
    web.add_argument(
        "--public-url",
        metavar="URL",
        help="the https address people use, behind a TLS proxy (e.g. https://help.example.com)",
    )
    web.add_argument(
        "--trust-proxy-headers",
        action="store_true",
        help="count sign-in failures by the client address the proxy puts in X-Forwarded-For",
    )
    web.add_argument(
        "--bots",
        type=int,
        metavar="N",
        help="bot worker processes to run, 0: `helpdesk bot` runs elsewhere "
        f"({setting_default('web.bots')})",
    )
    add_db_option(parser)
    add_engine_options(parser)
    parser.set_defaults(func=run)


def web_settings(args: argparse.Namespace) -> Settings:
    from pydantic import ValidationError

    settings = settings_from(args)
    overrides = {
        key: getattr(args, key)
        for key in ("host", "port", "public_url", "trust_proxy_headers", "bots")
        if hasattr(args, key)
    }
    if overrides:
        try:
            web = settings.web.model_validate(settings.web.model_dump() | overrides)
        except ValidationError as error:
            # Named as typed: "--port: Input should be less than or equal to 65535".
            problem = error.errors()[0]
            option = "--" + "-".join(str(part) for part in problem["loc"]).replace("_", "-")
            raise HelpdeskError(f"invalid web option {option}: {problem['msg']}") from None
        settings = settings.model_copy(update={"web": web})
    public = settings.web.public_url
    if public and not public.lower().startswith(("http://", "https://")):
        raise HelpdeskError(f"--public-url must start with https:// (or http://), not {public!r}")
    return settings


def settings_environment(settings: Settings) -> dict[str, str]:
    """The resolved settings under their documented environment names, for the app processes,
    so that each one runs on exactly the server's database, knowledge base and engine options."""
    valen = settings.valen
    return {
        "HELPDESK_DB": settings.store.db,
        "HELPDESK_KB": str(settings.knowledge_base.path),
        "VALEN_CACHE": str(valen.cache),
        "VALEN_REPLAY": valen.replay,
        "VALEN_BASE_URL": valen.base_url,
        "VALEN_DIALECT": valen.dialect,
        "HELPDESK_ENGINE__THRESHOLD": repr(settings.engine.threshold),
        "HELPDESK_ENGINE__K": str(settings.engine.k),
    }


class DeskConversations:
    """Customer conversations for the server, through the desk service."""

    def __init__(self, desk: AsyncDesk) -> None:
        self.desk = desk

    async def start_conversation(self) -> int:
        return (await self.desk.start_conversation()).id

    async def has_conversation(self, conversation_id: int) -> bool:
        # A keyset read (ids after the one before): no exception for the common "gone" case.
        found = await self.desk.conversations(after_id=conversation_id - 1, limit=1)
        return bool(found) and found[0].id == conversation_id

    async def keep_conversations(self, conversation_ids: list[int]) -> None:
        await self.desk.keep_conversations(conversation_ids)


def session_arguments(spec: SessionSpec) -> list[str]:
    """`chatbot.web.child`'s arguments for a session, from what the server verified. The display
    name, its account's owner's choice, goes encoded where nothing can take it for an option
    (`as_argument`), in its option's own argument (`--agent=NAME`). The rest cannot start with
    "-": a conversation's number, a locale the server picked, an account's name (a letter or
    digit first)."""
    if spec.area is None:
        if spec.conversation_id is None:  # A new customer's: the server sends it once started.
            return ["chat", "--locale", spec.locale]
        return ["chat", "--conversation", str(spec.conversation_id), "--locale", spec.locale]
    from chatbot.web.spec import as_argument  # Here: `helpdesk serve --help` need not load it.

    assert spec.account is not None
    agent = as_argument(spec.account.display_name)
    args = [spec.area.value, f"--agent={agent}", "--locale", spec.locale]
    # Whose unsent drafts are theirs: the account itself (its name, and when it was made, as a
    # name may be given again), never the display name, which can pass to another account.
    args.append(f"--account={spec.account.name}@{spec.account.created_at.isoformat()}")
    if spec.account.may_open(Area.EDITOR):
        args.append("--editor")
    return args


def run(args: argparse.Namespace) -> int:
    # The options are checked before the server's modules load (aiohttp and textual-serve): a
    # mistyped option is refused in a quarter of a second instead of half of one.
    settings = web_settings(args)

    import asyncio  # Not at the top: `helpdesk --help` need not load it.

    from chatbot.accounts.aio import AsyncAccounts
    from chatbot.assembly import (
        check_knowledge_base,
        check_valen_trust,
        open_accounts,
        open_service,
    )
    from chatbot.desk.aio import AsyncDesk
    from chatbot.web.server import HelpdeskServer

    # Before anything is opened or made: a mistyped `--kb`, or an SSL_CERT_FILE that is not
    # there, is one line, not a server whose every session and bot refuses to start.
    check_knowledge_base(settings)
    check_valen_trust(settings)
    web = settings.web
    accounts = AsyncAccounts.open(lambda: open_accounts(settings))
    try:
        desk = AsyncDesk.open(lambda: open_service(settings))
    except BaseException:
        accounts.close()
        raise
    try:
        secret = accounts.call_blocking(lambda service: service.session_secret())
        no_accounts = not accounts.call_blocking(lambda service: service.accounts())
        server = HelpdeskServer(
            settings=web,
            accounts=accounts,
            desk=DeskConversations(desk),
            child=session_arguments,
            environment=settings_environment(settings),
            secret=secret,
            preload=web.preload,
            valen_key=key.get_secret_value() if (key := settings.valen.api_key) else None,
        )
        return asyncio.run(_serve(server, settings, no_accounts=no_accounts))
    finally:
        desk.close()
        accounts.close()


async def _serve(server: object, settings: Settings, *, no_accounts: bool) -> int:
    from chatbot.web.server import HelpdeskServer

    assert isinstance(server, HelpdeskServer)
    web = settings.web
    try:
        port = await server.start()
    except OSError as error:
        raise HelpdeskError(
            f"cannot listen on {web.host}:{web.port}: {error.strerror or error}"
        ) from None
    from chatbot.web.bots import BotWorkers

    bots = BotWorkers(
        web.bots,
        environment=dict(os.environ) | server.environment,
        grace_s=settings.bot.shutdown_grace_s,
    )
    try:
        await _run(server, settings, port, bots, no_accounts=no_accounts)
    finally:
        # However serving ends (a signal, a bot that would not start, the terminal's pipe closed
        # under `| head`), nothing it started outlives it to hold the port or the pipe.
        await server.shutdown()
        await bots.stop()
    print("helpdesk serve: stopped", flush=True)
    return 0


def _key_in_file() -> bool:
    """Whether the settings file holds a Valen key: every session reads the file, so the key is
    then in every session's process, whatever variable sets the key in force (one set beside a
    line left in the file, or an empty one, which leaves the file's in force)."""
    from chatbot.config import config_file, read_config_file

    try:
        valen = read_config_file(config_file()).get("valen")
    except HelpdeskError:  # The settings read it already; whatever is wrong was said then.
        return False
    return isinstance(valen, dict) and any(
        key.lower() == "api_key" and value for key, value in valen.items()
    )


async def _run(
    server: HelpdeskServer, settings: Settings, port: int, bots: BotWorkers, *, no_accounts: bool
) -> None:
    """Start the bots, say where the server listens, and serve until SIGTERM or SIGINT."""
    import asyncio  # Not at the top: `helpdesk --help` need not load it.

    from chatbot.cli.bot import valen_mode
    from chatbot.config import config_file

    web = settings.web
    await bots.start()
    shown = f"[{web.host}]" if ":" in web.host else web.host
    print(f"helpdesk serve: listening on http://{shown}:{port}", flush=True)
    print("  customers: /   agents: /agent   editors: /editor   stop: Ctrl+C", flush=True)
    if web.bots:
        print(f"  bot workers: {web.bots} (`helpdesk bot` processes)", flush=True)
    else:
        print("  bot workers: none here; run `helpdesk bot` on this database", flush=True)
    print(f"  Valen: {valen_mode(settings)}", flush=True)
    if web.host not in LOOPBACK:
        print(
            f"helpdesk serve: warning: listening on {web.host} over plain HTTP; passwords and "
            "chats must reach it through a TLS proxy (see README: Serving on the web)",
            file=sys.stderr,
            flush=True,
        )
    if _key_in_file():
        print(
            f"helpdesk serve: warning: the Valen key is in {config_file()}, which every browser "
            "session's process reads with the other settings; set VALEN_API_KEY in serve's "
            "environment instead, to keep it to the bot workers and editors",
            file=sys.stderr,
            flush=True,
        )
    if no_accounts:
        print(
            "helpdesk serve: no accounts yet: create one with "
            "`helpdesk users add NAME --role admin`",
            file=sys.stderr,
            flush=True,
        )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    count = len(server.sessions)
    print(f"helpdesk serve: stopping; ending {counted(count, 'browser session')}", flush=True)
