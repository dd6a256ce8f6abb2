"""`--help` never breaks a line inside a path: argparse wrapped at hyphens (and inside words
longer than a line), so a default such as `/tmp/qa-ops/data/...` showed as `/tmp/qa-` on one line
and the rest on the next, and the path copied from it was not the path. Every parser and
subparser of `helpdesk` is checked."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatbot.cli.main import build_parser
from chatbot.paths import default_database, default_knowledge_base
from tests.cli_run import run_cli


def command_lines(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    """Every command line that has a help page of its own: the top level's, each command's."""
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from command_lines(sub, (*path, name))


@pytest.mark.parametrize("columns", ["80", "61"])
def test_help_shows_every_default_path_whole(
    columns: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = tmp_path / "qa-ops" / "data-of-the-help-desk-on-the-second-floor-by-the-stairs"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.setenv("COLUMNS", columns)
    paths = [str(default_database()), str(default_knowledge_base())]
    assert all("-" in path and len(path) > 80 for path in paths)
    lines = list(command_lines(build_parser()))
    assert len(lines) > 20  # The commands, and the kb, users, ... commands under them.
    shown = 0
    for line in lines:
        code, out, err = run_cli(capsys, *line, "--help")
        assert (code, err) == (0, ""), line
        squashed = "".join(out.split())
        for path in paths:
            # A path split over two lines is whole again only once the line break is gone.
            assert out.count(path) == squashed.count(path), (line, out)
            shown += out.count(path)
    assert shown >= len(lines) // 2  # --db or --kb is in most pages.
