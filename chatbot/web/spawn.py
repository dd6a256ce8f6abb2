"""Starting a browser session's app process: forked from the preloaded zygote when it runs, else
exec'd as a fresh interpreter. Either way the server gets the same three pipes and can wait for
the process and kill it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import socket
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from chatbot.web.zygote import FOLDER_PREFIX

log = logging.getLogger("helpdesk.web")

ZYGOTE_START_S = 120.0
"""Preloading takes a second or two; a machine busy with test suites can take much longer."""


PR_SET_PDEATHSIG = 1
"""prctl(2): the signal a process gets when its parent dies."""


def dies_with_this_process() -> Callable[[], None] | None:
    """For `preexec_fn`: the child gets SIGTERM when this process ends, however it ends (a
    `kill -9` too). Without it, a server killed so left its zygote, its sessions' processes and
    its bot workers running for good, the bots still taking questions. Linux only."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl  # Looked up here: the child only calls it.
    parent = os.getpid()

    def arrange() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # Ended before that took hold: nothing would signal it.
            os._exit(1)

    return arrange


def python_command(*args: str) -> list[str]:
    return [sys.executable, "-m", *args]


class ForkedProcess:
    """The parts of `asyncio.subprocess.Process` textual-serve uses, for a process the zygote
    forked: pipes to its stdin, stdout and stderr, and a pidfd to wait on and signal it."""

    def __init__(
        self,
        *,
        pid: int,
        pidfd: int,
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader,
        stderr: asyncio.StreamReader,
    ) -> None:
        self.pid = pid
        self._pidfd = pidfd
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.returncode: int | None = None
        self._exited = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().add_reader(pidfd, self._on_exit)

    def _on_exit(self) -> None:
        # The pidfd turns readable when the process ends; its status belongs to the zygote.
        asyncio.get_running_loop().remove_reader(self._pidfd)
        os.close(self._pidfd)
        self._pidfd = -1
        if self.returncode is None:
            self.returncode = 0
        if not self._exited.done():
            self._exited.set_result(None)

    async def wait(self) -> int:
        await asyncio.shield(self._exited)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self._pidfd >= 0:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, signum)
                if signum == signal.SIGKILL:
                    self.returncode = -signum

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


async def _reader(fd: int) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0)
    )
    return reader


async def _writer(fd: int) -> asyncio.StreamWriter:
    loop = asyncio.get_running_loop()
    protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader())
    transport, _ = await loop.connect_write_pipe(lambda: protocol, os.fdopen(fd, "wb", buffering=0))
    return asyncio.StreamWriter(transport, protocol, None, loop)


OWNER_SLACK_S = 2.0
"""A process start time read from /proc is rounded to the boot time's whole second."""


def process_started(pid: int) -> float | None:
    """When process `pid` started (seconds since the epoch), or None if there is none. Linux."""
    try:
        record = Path(f"/proc/{pid}/stat").read_text()
        boot = next(
            float(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    fields = record[record.rindex(")") + 2 :].split()
    if fields[0] == "Z":  # Ended; only its parent has not collected it yet.
        return None
    return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")


def _nobody_listens(sock: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1)
        try:
            probe.connect(str(sock))
        except ConnectionRefusedError:
            return True
        except OSError:
            return False
    return False


def _stale(folder: Path, mtime: float) -> bool:
    """Whether `folder`, a zygote's, belongs to a server that is gone."""
    owner, dash, _ = folder.name.removeprefix(FOLDER_PREFIX).partition("-")
    if not dash or not owner.isdigit():
        # Named before folders carried their server's pid (mkdtemp's names have no dash):
        # stale if a socket is left that nobody listens on (a folder with no socket yet may be
        # a server starting).
        sock = folder / "zygote.sock"
        return sock.is_socket() and _nobody_listens(sock)
    started = process_started(int(owner))
    # Gone, or its pid now another process's: one started after the folder last changed.
    return started is None or started > mtime + OWNER_SLACK_S


def sweep_stale_folders(parent: Path | None = None) -> list[Path]:
    """Remove the zygote folders (`helpdesk-serve-…` in the temporary folder) that servers of
    this user left when they were killed outright together with their zygote (a zygote left
    alone removes its own). Only folders of this user whose server is gone go; returns them."""
    parent = Path(tempfile.gettempdir()) if parent is None else parent
    removed: list[Path] = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for folder in entries:
        if not folder.name.startswith(FOLDER_PREFIX):
            continue
        try:
            info = folder.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue  # Somebody else's, or not a folder (a link is never followed).
        if _stale(folder, info.st_mtime):
            shutil.rmtree(folder, ignore_errors=True)
            log.info("removed %s, left by a server that is gone", folder)
            removed.append(folder)
    return removed


class CodeChanged(RuntimeError):
    """The zygote forks no more sessions: the code it preloaded changed on disk since."""


class Zygote:
    """The preloaded parent (`chatbot.web.zygote`), reached over a Unix socket in a private
    folder."""

    def __init__(self, environment: Mapping[str, str]) -> None:
        self.environment = dict(environment)
        self._folder: Path | None = None
        self._process: asyncio.subprocess.Process | None = None
        self.changed: str | None = None
        """The file the zygote found changed on disk since it preloaded the code, if it did: it
        forks no more, and is ended."""

    @property
    def socket_path(self) -> Path:
        assert self._folder is not None
        return self._folder / "zygote.sock"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    async def start(self) -> None:
        """Start the zygote and wait until it is ready; if it is not (it failed, or the wait was
        cancelled), it is ended and its folder removed before the error goes on."""
        # Mode 0700; named with this server's pid, so that a later server can tell whether it
        # is still running (`sweep_stale_folders`).
        prefix = f"{FOLDER_PREFIX}{os.getpid()}-"
        self._folder = Path(tempfile.mkdtemp(prefix=prefix))
        try:
            self._process = await asyncio.create_subprocess_exec(
                *python_command("chatbot.web.zygote", str(self.socket_path)),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                env=self.environment,
                preexec_fn=dies_with_this_process(),
            )
            assert self._process.stdout is not None
            try:
                line = await asyncio.wait_for(self._process.stdout.readline(), ZYGOTE_START_S)
            except TimeoutError:
                line = b""
            if line.strip() != b"ready":
                raise RuntimeError("the session zygote did not start")
        except BaseException:  # Cancelled too: nothing is left behind.
            await self.stop()
            raise

    def _request(self, message: bytes, fds: list[int]) -> tuple[int, int]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(30)
            connection.connect(str(self.socket_path))
            socket.send_fds(connection, [message], fds)
            reply, received, _flags, _address = socket.recv_fds(connection, 1024, 1)
        if len(received) != 1:
            for fd in received:
                os.close(fd)
            try:
                changed = json.loads(reply).get("changed")
            except (ValueError, AttributeError):
                changed = None
            if isinstance(changed, str):
                raise CodeChanged(changed)
            raise RuntimeError("the session zygote did not fork")
        return int(json.loads(reply)["pid"]), received[0]

    async def spawn(self, args: Sequence[str], environment: Mapping[str, str]) -> ForkedProcess:
        """Fork a session's process running `chatbot.web.child` with `args`. Raises
        `CodeChanged` (once the code on disk changed: the zygote is ended then, and said so once
        in the log) and `OSError` or `RuntimeError` (the zygote is gone or failed)."""
        stdin_read, stdin_write = os.pipe()
        stdout_read, stdout_write = os.pipe()
        stderr_read, stderr_write = os.pipe()
        message = json.dumps({"args": list(args), "env": dict(environment)}).encode()
        ours = [stdin_write, stdout_read, stderr_read]
        theirs = [stdin_read, stdout_write, stderr_write]
        try:
            loop = asyncio.get_running_loop()
            pid, pidfd = await loop.run_in_executor(None, self._request, message, theirs)
        except BaseException as error:
            for fd in ours:
                os.close(fd)
            if isinstance(error, CodeChanged):
                await self._code_changed(str(error))
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        return ForkedProcess(
            pid=pid,
            pidfd=pidfd,
            stdin=await _writer(stdin_write),
            stdout=await _reader(stdout_read),
            stderr=await _reader(stderr_read),
        )

    async def _code_changed(self, path: str) -> None:
        if self.changed is not None:
            return  # Said, and ended, already: a session asked at the same moment.
        self.changed = path
        log.warning(
            "the help desk's code changed on disk since serve started (%s): new browser sessions "
            "start as fresh processes, which is slower; restart serve to run the new code "
            "everywhere (the server and its bot workers still run the old)",
            path,
        )
        await self.stop()  # Its preloaded code is of no more use: its memory goes.

    async def stop(self) -> None:
        process = self._process
        if process is not None and process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
