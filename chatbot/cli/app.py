"""`helpdesk` (chat and queue side by side), `helpdesk chat` and `helpdesk agent`: the Textual app,
with a bot worker of its own unless `--no-bot`.

Settings, the database and the knowledge base are loaded once the first screen is up; a bad `--db`
or `--kb` ends the app, and is one line on stderr once the terminal is back, never a traceback.

SIGHUP (the terminal closed) and SIGTERM end the app as a quit does, without its question: what
was typed and not sent or saved is kept, claims stay; the exit status is then the shell's for the
signal, 129 or 143 (see `chatbot.tui.terminal_driver`).

The customer's chat (`helpdesk chat`, and beside the queue) is kept for the user's next run on the
same database: its conversation, opened again while still open, and its unsent words. Quitting
with one open says so in a line, and how to open it again.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import shlex
from typing import TYPE_CHECKING

from chatbot.cli.options import (
    add_db_option,
    add_engine_options,
    add_locale_option,
    row_id,
    settings_from,
)
from chatbot.errors import HelpdeskError
from chatbot.text import printable

if TYPE_CHECKING:
    from chatbot.config import Settings
    from chatbot.tui import HelpDeskApp


def add_app_options(parser: argparse.ArgumentParser, *, agent: bool = True) -> None:
    # Every option unset unless given (SUPPRESS), as the engine options are: `helpdesk
    # --conversation 7 chat` opened a new chat, the subcommand's default overwriting the 7.
    add_db_option(parser)
    add_locale_option(parser, customer=not agent)
    if agent:
        parser.add_argument(
            "--agent",
            metavar="NAME",
            default=argparse.SUPPRESS,
            help="name to claim and reply under (default: the name saved in your settings file, "
            "asked for on your first claim)",
        )
    parser.add_argument(
        "--conversation",
        type=row_id,
        metavar="ID",
        default=argparse.SUPPRESS,
        help="open this conversation instead of a new one",
    )
    parser.add_argument(
        "--no-bot",
        dest="bot",
        action="store_false",
        default=argparse.SUPPRESS,
        help="run no bot worker in this app: `helpdesk bot` answers the questions",
    )
    add_engine_options(parser)


def configure_main(parser: argparse.ArgumentParser) -> None:
    """Without a subcommand, `helpdesk` opens the customer chat and the queue side by side."""
    add_app_options(parser)
    parser.set_defaults(func=run, mode="all")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    chat = commands.add_parser("chat", help="open the customer chat alone")
    add_app_options(chat, agent=False)
    chat.set_defaults(func=run, mode="chat")
    agent = commands.add_parser("agent", help="open the agent console (handoff queue) alone")
    add_app_options(agent)
    agent.set_defaults(func=run, mode="agent")


def build_app(args: argparse.Namespace, *, keep_drafts: bool = False) -> HelpDeskApp:
    """The app these commands run (and bench/app.py times), from their parsed options. With
    `keep_drafts` (the commands themselves), the agent's unsent replies and notes are kept when
    the app ends, for when they open each conversation again (and the editor's unsaved passage,
    for when they open it again), and the customer's chat for the next run (its conversation,
    while open, and its unsent words)."""
    # Imported here so that `helpdesk ask` and the other commands never load Textual.
    from chatbot.i18n import DEFAULT_LOCALE, Locale, environment_locale, parse_locale
    from chatbot.tui import create_app

    terminal = environment_locale(os.environ)
    chosen: Locale | None = None
    with contextlib.suppress(ValueError):  # A bad one is refused with the settings' line.
        chosen = parse_locale(getattr(args, "locale", None) or "")

    def load() -> Settings:
        settings = app_settings(args)
        if keep_drafts:
            from chatbot.drafts import keep_for

            # Once the database and knowledge base are known: drafts are theirs.
            keep_for(settings.store.db, str(settings.knowledge_base.path))
        return settings

    # Loaded in a thread once the first screen is up (issue 13): pydantic-settings and the desk
    # cost more than the screen itself. `--agent` is checked there too, and comes with them.
    return create_app(
        load,
        mode=args.mode,
        conversation_id=getattr(args, "conversation", None),
        bot=getattr(args, "bot", True),
        # `helpdesk chat`'s terminal is the customer's: their chat starts in its language until
        # their first message decides, as a browser's starts in its Accept-Language. Beside the
        # queue (the desk) the terminal is an agent's: the console is in its language unless
        # `--locale` (ui.locale) names one, and the customer's chat beside it starts in English.
        # `helpdesk chat --locale zh` is the customer's choice of that language.
        customer_locale=(chosen or terminal) if args.mode == "chat" else DEFAULT_LOCALE,
        agent_locale=terminal,
        keep_chat=reopening_command(args) if keep_drafts and args.mode in ("chat", "all") else None,
    )


def reopening_command(args: argparse.Namespace) -> str:
    """The command that opens this customer's chat again: the one run, on the same `--db` (shown
    without a password), with the options that change how it answers (`--no-bot`, the engine's:
    without them the chat reopened would be another help desk's). `--base-url` is left out, as
    a URL may hold the API key: the settings file or environment that named it still does."""
    from chatbot.dburl import display

    words = ["helpdesk"] if args.mode == "all" else ["helpdesk", "chat"]
    if (db := getattr(args, "db", None)) is not None:
        words += ["--db", display(db)]
    if (kb := getattr(args, "kb", None)) is not None:
        words += ["--kb", display(kb)]
    for option in ("--cache", "--replay", "--dialect", "--threshold", "-k"):
        if (value := getattr(args, option.lstrip("-"), None)) is not None:
            words += [option, str(value)]
    if getattr(args, "bot", True) is False:
        words.append("--no-bot")
    return shlex.join(words)


def app_settings(args: argparse.Namespace) -> Settings:
    """The settings the app runs with: `settings_from` the options, with `--agent`, when given,
    as the agent's name. The name follows the rule of every display name (accounts', `[agent]
    name`'s, the name dialog's): taken as typed, an escape sequence or 5,000 characters became
    the name conversations are claimed under and shown with."""
    from chatbot.accounts.models import check_display_name

    settings = settings_from(args)
    agent = getattr(args, "agent", None)
    if agent is not None:
        try:
            settings.agent.name = check_display_name(agent)
        except HelpdeskError as error:
            raise HelpdeskError(f"invalid option --agent: {error}") from None
    return settings


def run(args: argparse.Namespace) -> int:
    # No garbage collection until the first screen is up (the app resumes it then): importing
    # Textual, pydantic and the screens makes a few hundred thousand objects and no garbage, and
    # collections walking them again and again took ~10% of the time to the first screen.
    gc.disable()
    try:
        app = build_app(args, keep_drafts=True)
        app.run()
    finally:
        gc.enable()
    if app.startup_error is not None:
        # The settings, the desk and the engine are loaded after the first screen: one that
        # cannot be (a bad `--db`, `--kb` or config file, an unknown `--conversation`, a broken
        # knowledge base) ends the app, and is said here, once the terminal is back.
        raise HelpdeskError(app.startup_error)
    if app.farewell is not None and not app.return_code:  # Not for a closed terminal (SIGHUP).
        print(printable(app.farewell))
    return app.return_code or 0
