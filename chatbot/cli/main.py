"""Entry point: parse the command line, run one subcommand, turn known errors into one line."""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from chatbot import __version__
from chatbot.cli import app
from chatbot.cli.options import Parser, configure_logging, print_error
from chatbot.cli.output import OutputError, discard_output, guarded, tolerate_encoding
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
    _describe(parser)
    return parser


def _describe(parser: argparse.ArgumentParser) -> None:
    """Give every command without a description of its own its line in the list of commands, so
    that its `--help` says what it does under the usage: `conversations list --help` and `stats
    --help` went from the usage straight to the options, where `kb list --help` did not."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for listed in action._choices_actions:
                sub = action.choices[listed.dest]
                if sub.description is None and listed.help:
                    sub.description = listed.help
                _describe(sub)


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
    tolerate_encoding()
    configure_logging()
    arguments = sys.argv[1:] if argv is None else list(argv)
    # A line that starts with a subcommand (`helpdesk ask ...`) needs no other subcommand's
    # module or options, and an empty one (the app) none: building all of them cost ~15-20 ms.
    first = arguments[0] if arguments else ""
    parser = build_parser(first if first in COMMAND_MODULES or not first else None)
    args = parser.parse_args(arguments)
    if (refusal := _not_utf8(parser, arguments, args)) is not None:
        print_error(refusal)
        return 2
    if not hasattr(args, "func"):
        parser.print_help()
        return 0
    try:
        with guarded():
            result: int = args.func(args)
            # Here rather than at exit: a reader that went away, or a full disk, is found
            # inside the `try`.
            sys.stdout.flush()
        return result
    except HelpdeskError as error:
        print_error(str(error))
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return _reader_gone()
    except OutputError as error:
        return _unwritable(error)


PATH_METAVARS = ("PATH", "FILE", "DIR")
"""Words in a metavar that mark an option's value as a file's name (`--db PATH|URL`)."""


def _not_utf8(
    parser: argparse.ArgumentParser, arguments: list[str], args: argparse.Namespace
) -> str | None:
    """Why the command line is refused, if a value that is text to store or show is not UTF-8.
    Python keeps such bytes as lone surrogates, which no file, database or hash can encode: each
    command that stored one (a tag, a synonym, a display name) raised UnicodeEncodeError, a
    traceback. Refused here, once for every command, before any runs, naming the option. A file's
    name is not text: the system takes back the bytes it was given (`kb import $'lat\\xe9.json'`),
    so `Path` values and the path options (`--db`, `--kb`) are left alone."""
    actions = _actions(parser, arguments)
    for dest, value in vars(args).items():
        action = actions.get(dest)
        if action is None or _is_path(action):
            continue
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and (where := not_utf8(text)) is not None:
                # `print_error` spells the bytes (\xff) and control characters out.
                return f"argument {_name(action)} ('{text}') is not valid UTF-8: {where}"
    return None


def _actions(parser: argparse.ArgumentParser, arguments: list[str]) -> dict[str, argparse.Action]:
    """The actions of `parser` and of the subcommands `arguments` chose, by dest: the deepest
    subcommand's last, as its values are (`kb show ID` and `kb add --id` share a dest)."""
    actions: dict[str, argparse.Action] = {}
    position = 0
    while True:
        chosen: argparse.ArgumentParser | None = None
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for index in range(position, len(arguments)):
                    if arguments[index] in action.choices:
                        chosen, position = action.choices[arguments[index]], index + 1
                        break
            else:
                actions[action.dest] = action
        if chosen is None:
            return actions
        parser = chosen


def _is_path(action: argparse.Action) -> bool:
    metavar = action.metavar if isinstance(action.metavar, str) else ""
    return action.type is Path or any(word in metavar for word in PATH_METAVARS)


def _name(action: argparse.Action) -> str:
    """How argparse names `action` in its own errors: `--display-name`, or `question`."""
    if action.option_strings:
        return "/".join(action.option_strings)
    return action.metavar if isinstance(action.metavar, str) else action.dest


def _reader_gone() -> int:
    """The status after the output's reader went away (`helpdesk stats | head -3`): no
    traceback, and 141 as a C tool stopped by SIGPIPE gives. Python would flush stdout again at
    exit, and fail again: it is pointed at /dev/null first (the recipe of Python's docs)."""
    if sys.stdout is sys.__stdout__:  # Not under a test's capture, whose descriptor is pytest's.
        discard_output()
    return 128 + 13


def _unwritable(error: OutputError) -> int:
    """The status after standard output could not be written (`> /dev/full`, `>&-`): one line
    saying why, status 1 as for a command that failed, and whatever is still buffered dropped,
    as for a reader gone."""
    print_error(f"cannot write output: {error}")
    if sys.stdout is sys.__stdout__ and sys.stdout is not None:
        discard_output()
    return 1


if __name__ == "__main__":
    sys.exit(main())
