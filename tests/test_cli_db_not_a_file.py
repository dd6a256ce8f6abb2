"""`--db` naming something that is not a regular file: every command says what it is, as
`helpdesk bot` and `serve` did ("cfifo: is a FIFO (named pipe), expected a database file"). `stats`,
`doctor`, `conversations list` and `users list` waited for ever on a FIFO's open, and read
/dev/null as a database with no help-desk tables.

Run as processes with a deadline, so that code which waits on the FIFO fails these tests rather
than hanging them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli_process import helpdesk

COMMANDS = [["stats"], ["doctor"], ["conversations", "list"], ["users", "list"], ["bot"]]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_fifo_is_refused_by_every_command_without_waiting_on_it(
    command: list[str], tmp_path: Path
) -> None:
    os.mkfifo(tmp_path / "cfifo")
    result = helpdesk("--db", "cfifo", *command, cwd=tmp_path, timeout=30)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "helpdesk: error: cfifo: is a FIFO (named pipe), expected a database file\n"
    )


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_device_and_a_folder_are_said_to_be_what_they_are(
    command: list[str], tmp_path: Path
) -> None:
    (tmp_path / "adir").mkdir()
    for db, kind in (("/dev/null", "a device or other special file"), ("adir", "a directory")):
        result = helpdesk("--db", db, *command, cwd=tmp_path, timeout=30)
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr == f"helpdesk: error: {db}: is {kind}, expected a database file\n"
