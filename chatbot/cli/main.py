"""Entry point: parse the command line, run one subcommand, turn known errors into one line."""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
from collections.abc import Sequence

from chatbot import __version__
from chatbot.cli import app
from chatbot.cli.options import Parser, configure_logging, print_error
from chatbot.errors import HelpdeskError
from chatbot.text import not_utf8

COMMAND_MODULES = {"ask": "ask", "eval": "evaluate", "kb": "kb", "valen": "valen",
                   "chat": "app", "agent": "app", "bot": "bot",
                   "conversations": "conversations", "stats": "stats", "users": "users",
                   "serve": "serve", "doctor": "doctor"}  # fmt: skip
"""Which module of `chatbot.cli` registers each subcommand, in the order help lists them."""
MODULES = list(dict.fromkeys(COMMAND_MODULES.values()))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `command` (a subcommand's name), only that subcommand under
    the top-level options, which parses a line that starts with it the same way; with "", none
    (an empty line: the app)."""
    parser = Parser(
        prog="helpdesk",
        description="A help-desk chatbot for the terminal. Without a command, opens the app.",
    )
    parser.add_argument("--version", action="version", version=f"helpdesk {__version__}")
    app.configure_main(parser)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=Parser)
    names = MODULES if command is None else [COMMAND_MODULES[command]] if command else []
    for name in names:
        importlib.import_module(f"chatbot.cli.{name}").register(commands)
    for group in commands.choices.values():
        _require_command(group)
    return parser


def _require_command(parser: argparse.ArgumentParser) -> None:
    """Make `parser`, if it is a command group (`kb`, `kb synonyms`, `users`, ...), refuse to run
    without one of its commands, all alike: `kb` and `conversations` printed their help and
    exited 0, `users` a bare usage line, so a script's typo passed for success in some."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            names = ", ".join(action.choices)
            parser.set_defaults(func=functools.partial(_missing_command, parser, names))
            for sub in action.choices.values():
                _require_command(sub)


def _missing_command(parser: argparse.ArgumentParser, names: str, _args: object) -> int:
    parser.print_help(sys.stderr)
    print(f"{parser.prog}: error: missing command: one of {names}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    configure_logging()
    arguments = sys.argv[1:] if argv is None else list(argv)
    if (refusal := _not_utf8(arguments)) is not None:
        print_error(refusal)
        return 2
    # A line that starts with a subcommand (`helpdesk ask ...`) needs no other subcommand's
    # module or options, and an empty one (the app) none: building all of them cost ~15-20 ms.
    first = arguments[0] if arguments else ""
    parser = build_parser(first if first in COMMAND_MODULES or not first else None)
    args = parser.parse_args(arguments)
    if not hasattr(args, "func"):
        parser.print_help()
        return 0
    try:
        result: int = args.func(args)
        # Here rather than at exit: a reader that went away is found inside the `try`.
        sys.stdout.flush()
        return result
    except HelpdeskError as error:
        print_error(str(error))
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return _reader_gone()


def _not_utf8(arguments: list[str]) -> str | None:
    """Why the command line is refused, if an argument is not UTF-8. Python keeps such bytes as
    lone surrogates, which no file, database or hash can encode: each command that stored one
    (a tag, a synonym, a display name) raised UnicodeEncodeError, a traceback. Refused here, once
    for every command, before any runs; numbered as the shell's $1, $2 count."""
    for number, argument in enumerate(arguments, start=1):
        if (where := not_utf8(argument)) is not None:
            # `print_error` spells the bytes (\xff) and control characters out.
            return f"argument {number} ('{argument}') is not valid UTF-8: {where}"
    return None


def _reader_gone() -> int:
    """The status after the output's reader went away (`helpdesk stats | head -3`): no
    traceback, and 141 as a C tool stopped by SIGPIPE gives. Python would flush stdout again at
    exit, and fail again: it is pointed at /dev/null first (the recipe of Python's docs)."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 128 + 13


if __name__ == "__main__":
    sys.exit(main())
