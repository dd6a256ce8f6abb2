"""Every command's `--help` says what it does under the usage, and every argument has a line:
`conversations list --help` went from the usage straight to the options, and `kb synonyms add`,
`users edit --role` and others listed arguments with nothing beside them."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from chatbot.cli.main import build_parser


def commands(
    parser: argparse.ArgumentParser, path: str = "helpdesk"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{path} {name}", sub
                yield from commands(sub, f"{path} {name}")


def test_every_command_has_a_description() -> None:
    assert [path for path, sub in commands(build_parser()) if not sub.description] == []


def test_every_argument_has_help() -> None:
    bare = [
        f"{path} {'/'.join(action.option_strings) or action.dest}"
        for path, sub in [("helpdesk", build_parser()), *commands(build_parser())]
        for action in sub._actions
        if not isinstance(action, argparse._SubParsersAction) and not action.help
    ]
    assert bare == []


def test_a_command_parsed_alone_is_described_too() -> None:
    """`helpdesk stats ...` builds that command's parser alone (`main`): its help is the line
    the list of commands has for it."""
    described = dict(commands(build_parser("stats")))
    assert described["helpdesk stats"].description == (
        "how the desk is doing: resolution rate, escalations, waits, scores, gaps"
    )
