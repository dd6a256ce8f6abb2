"""`helpdesk` run in the test's process, as a shell would run it: its exit status and output."""

from __future__ import annotations

import pytest

from chatbot.cli.main import main


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The exit status, standard output and standard error of `helpdesk ARGV`."""
    try:
        code = main(list(argv))
    except SystemExit as leaving:  # What argparse does with a command line it refuses.
        code = leaving.code if isinstance(leaving.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err
