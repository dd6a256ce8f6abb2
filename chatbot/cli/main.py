"""Entry point: parse the command line, run one subcommand, turn known errors into one line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from chatbot import __version__
from chatbot.cli import (
    app,
    ask,
    bot,
    conversations,
    doctor,
    evaluate,
    kb,
    serve,
    stats,
    users,
    valen,
)
from chatbot.cli.options import Parser, configure_logging, print_error
from chatbot.errors import HelpdeskError

COMMANDS = [ask, evaluate, kb, valen, app, bot, conversations, stats, users, serve, doctor]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="helpdesk",
        description="A help-desk chatbot for the terminal. Without a command, opens the app.",
    )
    parser.add_argument("--version", action="version", version=f"helpdesk {__version__}")
    app.configure_main(parser)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=Parser)
    for module in COMMANDS:
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    configure_logging()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 0
    try:
        result: int = args.func(args)
        return result
    except HelpdeskError as error:
        print_error(str(error))
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
