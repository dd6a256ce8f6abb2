"""`helpdesk serve` that cannot listen says so in one line and leaves nothing running behind it:
no zygote holding its pipes open, no temporary folder."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from chatbot.accounts.aio import AsyncAccounts
from chatbot.config import WebSettings
from chatbot.web.server import CustomerDesk, HelpdeskServer
from chatbot.web.spawn import Zygote
from tests.web.harness import alive, command_line, run_async, server_environment

EXIT_TIMEOUT_S = 60.0
"""For the server and everything it started to let go of its pipes (well under a second when
nothing is left behind; a zygote left running holds them for as long as it lives)."""


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port on 127.0.0.1 that another socket listens on for the whole test."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def processes_under(folder: Path) -> list[int]:
    """Live processes whose command line names something in `folder` (the zygote's names its
    socket, in the temporary folder it was given)."""
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit()
        and any(str(folder) in part for part in command_line(int(entry.name)))
        and alive(int(entry.name))
    ]


@pytest.fixture
def private_tmp() -> Iterator[Path]:
    """An empty TMPDIR of the test's own; whatever is still running from it at the end (only
    after a regression) is killed, so a failure does not leak processes into other tests. Short
    and under /tmp: the zygote's socket path in it must fit AF_UNIX's 108 bytes, which a folder
    under pytest's tmp_path (with a worker's and a test's name in it) does not."""
    folder = Path(tempfile.mkdtemp(prefix="hd-"))
    yield folder
    for pid in processes_under(folder):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    shutil.rmtree(folder, ignore_errors=True)


def serve_environment(tmp_path: Path, private_tmp: Path) -> dict[str, str]:
    """The test's own HOME, XDG folders and TMPDIR: serve's zygote makes its folder there."""
    home = tmp_path / "home"
    return server_environment(home) | {
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_STATE_HOME": str(home / "state"),
        "TMPDIR": str(private_tmp),
    }


def finished(process: subprocess.Popen[str], private_tmp: Path) -> tuple[str, str]:
    """What serve printed, once every process holding its pipes has exited (their ends come
    only then); after EXIT_TIMEOUT_S, whatever still runs is killed and the test fails."""
    try:
        return process.communicate(timeout=EXIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        left = processes_under(private_tmp)
        for pid in [process.pid, *left]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError(f"serve's pipes stayed open; still running: {left}") from None


def test_serve_that_cannot_listen_leaves_no_process_or_folder(
    tmp_path: Path, taken_port: int, private_tmp: Path
) -> None:
    argv = [sys.executable, "-m", "chatbot", "serve", "--port", str(taken_port)]
    process = subprocess.Popen(
        [*argv, "--db", str(tmp_path / "h.sqlite3")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=serve_environment(tmp_path, private_tmp),
        cwd=tmp_path,
    )
    stdout, stderr = finished(process, private_tmp)
    assert process.returncode == 2
    assert stdout == ""
    assert stderr.splitlines() == [
        f"helpdesk: error: cannot listen on 127.0.0.1:{taken_port}: error while attempting to "
        f"bind on address ('127.0.0.1', {taken_port}): address already in use"
    ]
    assert processes_under(private_tmp) == []
    assert list(private_tmp.iterdir()) == []


def test_a_failure_after_the_zygote_started_ends_it(
    tmp_path: Path,
    taken_port: int,
    private_tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check before the zygote starts passes, and listening fails after all (the port was
    taken in between): the zygote is ended and its folder removed before the error goes on."""
    monkeypatch.setenv("TMPDIR", str(private_tmp))
    monkeypatch.setattr("tempfile.tempdir", None)  # Read TMPDIR again.
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / "home" / name.lower()))
    server = HelpdeskServer(
        settings=WebSettings(port=taken_port, bots=0),
        accounts=cast(AsyncAccounts, None),  # Not asked before a browser comes.
        desk=cast(CustomerDesk, None),
        child=lambda spec: [],
        environment={},
        secret=b"0" * 32,
    )

    async def taken_in_between() -> None:
        return None

    monkeypatch.setattr(server, "_check_address", taken_in_between, raising=False)
    zygotes: list[Zygote] = []
    start_zygote = Zygote.start

    async def record(zygote: Zygote) -> None:
        await start_zygote(zygote)
        zygotes.append(zygote)

    monkeypatch.setattr(Zygote, "start", record)
    with pytest.raises(OSError, match="address already in use"):
        # On a loop of its own: a browser module before this one on the worker leaves
        # Playwright's loop running in this thread, where pytest-asyncio could not start one.
        run_async(server.start())
    assert len(zygotes) == 1 and not zygotes[0].running  # It started, and was ended.
    assert server.zygote is None
    assert processes_under(private_tmp) == []
    assert list(private_tmp.iterdir()) == []


def test_serve_whose_output_is_closed_leaves_no_process_or_folder(
    tmp_path: Path, private_tmp: Path
) -> None:
    """`helpdesk serve | head -0`: the first line printed after listening fails (a broken pipe),
    and the zygote it had started lived on, holding stderr open."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # Nobody reads what serve prints.
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "chatbot",
            "serve",
            "--port",
            "0",
            "--bots",
            "0",
            "--db",
            str(tmp_path / "h.sqlite3"),
        ],  # fmt: skip
        stdin=subprocess.DEVNULL,
        stdout=write_end,
        stderr=subprocess.PIPE,
        text=True,
        env=serve_environment(tmp_path, private_tmp),
        cwd=tmp_path,
    )
    os.close(write_end)
    finished(process, private_tmp)
    assert process.returncode != 0
    assert processes_under(private_tmp) == []
    assert list(private_tmp.iterdir()) == []
