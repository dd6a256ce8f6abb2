"""A preloaded parent for the browser sessions' app processes: `python -m chatbot.web.zygote`.

Importing Textual and the app takes about a second and some 30 MB per process. The zygote does it
once; each session's process is then a `fork` of it that runs `chatbot.web.child` at once and
shares the imported code and data with every other session, copy-on-write. The server hands over
the session's three pipe ends with the request over a private Unix socket (SCM_RIGHTS), so the
forked process talks to the server exactly as an exec'd one would.

The zygote stays single-threaded (forking a threaded process is unsafe) and never opens the
database or the network: everything a session does happens after the fork. Nor does it build an
engine: as it starts, it starts the one process that decides the customers' suggested questions
for every session (`share_suggestions`), so that no customer's session holds the knowledge base.

A fork shares the zygote's modules but imports the ones the zygote had not (most of the desk,
the store) from disk. After an upgrade in place (`pip install -U`, `git pull`) those are the new
code, and old and new mixed fail every session. So before each fork the zygote looks whether
the code it started with changed on disk (`CodeSnapshot`); if it did, it forks nothing and says
so, and the server starts that session, and every later one, as a fresh process.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import socket
import subprocess
import sys
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MAX_REQUEST_BYTES = 64 * 1024
PIPES = 3
"""stdin (read end), stdout and stderr (write ends) of the session's process."""
FOLDER_PREFIX = "helpdesk-serve-"
"""The private temporary folder the server makes for the zygote's socket is named
`helpdesk-serve-PID-…`, PID the server's (see `chatbot.web.spawn.sweep_stale_folders`)."""
SUGGESTIONS_FILE = "suggestions.json"
"""Beside the socket: the suggested questions as the one decider the zygote starts decides them
for every session (`share_suggestions`), and its lock."""


FileStamp = tuple[int, int, int]
"""A file's inode, size and modification time (ns): an upgrade writes files anew, changing one."""


def _stamp(path: str) -> FileStamp | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


def package_files(root: Path) -> Iterator[str]:
    """Every file of the package at `root`, its bytecode caches and hidden files (an editor's
    swap file) aside: the modules a session may still import, and what it reads (styles,
    catalogs)."""
    for folder, folders, names in os.walk(root):
        folders[:] = sorted(f for f in folders if f != "__pycache__" and not f.startswith("."))
        for name in sorted(names):
            if not name.startswith(".") and not name.endswith(("~", ".pyc")):
                yield os.path.join(folder, name)


@dataclass
class CodeSnapshot:
    """The code a zygote runs, as it was on disk when it loaded it: the files of its own package
    (modules a fork imports later included) and of every other module it loaded (an upgraded
    dependency). Checked before each fork: stat calls only, a few milliseconds."""

    root: Path
    files: dict[str, FileStamp | None] = field(default_factory=dict)

    @classmethod
    def of_package(cls) -> CodeSnapshot:
        """Taken before the package's modules load, so a change while they do is seen too."""
        root = Path(__file__).resolve().parents[1]
        return cls(root, {path: _stamp(path) for path in package_files(root)})

    def add_loaded_modules(self) -> None:
        """Add the files of the modules loaded now (from outside the package: its own are in)."""
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if isinstance(path, str) and path not in self.files:
                stamp = _stamp(path)
                if stamp is not None:
                    self.files[path] = stamp

    def changed(self) -> str | None:
        """A file that changed, appeared or went since the snapshot (its path, relative to the
        package's folder when in it), or None if none did."""
        now = {path: _stamp(path) for path in package_files(self.root)}
        added = sorted(now.keys() - self.files.keys())
        if added:
            return self._shown(added[0])
        for path, stamp in self.files.items():
            if (now[path] if path in now else _stamp(path)) != stamp:
                return self._shown(path)
        return None

    def _shown(self, path: str) -> str:
        with contextlib.suppress(ValueError):
            return str(Path(path).relative_to(self.root.parent))
        return path


def preload() -> None:
    """Import what every session imports, then freeze those objects out of the garbage
    collector's reach so that collections in the forks do not copy their pages."""
    import textual.drivers.web_driver  # noqa: F401

    # The engine (numpy, the index) too: most sessions build one after their first screen (not
    # a live-mode customer's, which reads none), and the modules are shared from here instead of
    # imported again in every fork.
    import chatbot.engine.engine  # noqa: F401
    import chatbot.tui.app  # noqa: F401
    import chatbot.tui.screens.editor  # noqa: F401
    import chatbot.web.child  # noqa: F401
    import chatbot.web.driver  # noqa: F401

    gc.collect()
    gc.freeze()


_decider: subprocess.Popen[bytes] | None = None


def share_suggestions(folder: str) -> None:
    """Start the one process that decides the chat's suggested questions for every session
    (`chatbot.engine.suggestions`: an engine of the whole knowledge base, which each customer's
    session built for itself), and name its file in the environment every fork inherits. Its
    lock is taken here, before any fork, so that no session takes it for gone while it starts,
    and handed to it alone: no fork of the zygote holds it. Started afresh, not forked, so that
    it is told apart from the zygote and its sessions by its command line."""
    global _decider
    from chatbot.engine.suggestions import SHARED_ENV, SharedVerdicts
    from chatbot.web.spawn import dies_with_this_process, python_command

    shared = SharedVerdicts(Path(folder) / SUGGESTIONS_FILE)
    try:
        lock = shared.hold()
    except OSError as error:  # Every session then decides for itself, as before.
        print(f"helpdesk serve: cannot share the suggested questions: {error}", file=sys.stderr)
        return
    try:
        _decider = subprocess.Popen(
            python_command("chatbot.engine.suggestions", str(shared.path)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # The zygote's is the server's pipe, read no more.
            pass_fds=(lock,),
            # Ended by the zygote (or its death), never by a Ctrl+C meant for serve.
            start_new_session=True,
            preexec_fn=dies_with_this_process(),  # The zygote is single-threaded here.
        )
    except OSError as error:
        print(f"helpdesk serve: cannot share the suggested questions: {error}", file=sys.stderr)
        shared.remove()
        return
    finally:
        os.close(lock)
    os.environ[SHARED_ENV] = str(shared.path)


def _end_decider(folder: str) -> None:
    """End the decider before its files go, so that none is written after."""
    if _decider is not None:
        with contextlib.suppress(Exception):  # Reaped already by `_reap`: nothing to end.
            _decider.kill()
            _decider.wait(5)
    from chatbot.engine.suggestions import SharedVerdicts

    SharedVerdicts(Path(folder) / SUGGESTIONS_FILE).remove()


def run_session(request: dict[str, object], fds: list[int]) -> int:
    """In the fork: become the session's process and run the app."""
    os.setsid()  # Its own process group: a signal meant for the zygote does not reach it.
    closing = request.get("_close")
    for fd in closing if isinstance(closing, list) else []:
        os.close(int(fd))  # The zygote's listening socket and its connection to the server.
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    environment = request.get("env")
    if isinstance(environment, dict):
        os.environ.update({str(key): str(value) for key, value in environment.items()})
    args = request.get("args")
    if not isinstance(args, list):
        return 2
    from chatbot.web.child import main

    return main([str(arg) for arg in args])


def _reap(_signum: int, _frame: object) -> None:
    """Collect every fork that has ended, so none lingers as a zombie."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _exit_status(exit: SystemExit) -> int:
    """The status `sys.exit(code)` ends a process with, as the interpreter would."""
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        return exit.code
    print(exit.code, file=sys.stderr)
    return 1


def fork_session(request: dict[str, object], fds: list[int]) -> tuple[int, int]:
    """Fork the session's process; returns its pid and a pidfd for it. SIGCHLD is held until
    the pidfd exists, so the fork cannot be reaped (and its pid reused) before then."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    try:
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
                code = run_session(request, fds)
            except SystemExit as exit:
                code = _exit_status(exit)
            except BaseException:
                # On the session's stderr, which the server logs: the fork ends below without
                # the interpreter's own report, and a session that failed said nothing of why.
                with contextlib.suppress(BaseException):
                    traceback.print_exc()
            finally:
                for stream in (sys.stdout, sys.stderr):
                    with contextlib.suppress(BaseException):  # A closed pipe: end all the same.
                        stream.flush()
                os._exit(code)
        return pid, os.pidfd_open(pid)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})


def remove_socket(path: str) -> None:
    """Remove the socket and, when it is the server's private one, its folder: a server killed
    outright (`kill -9`) could not, and its zygote, told by that death (SIGTERM, see
    `chatbot.web.spawn.dies_with_this_process`), is the one left to do it. The suggestions'
    decider is ended first, and its files removed."""
    folder = os.path.dirname(path)
    _end_decider(folder)
    with contextlib.suppress(OSError):
        os.unlink(path)
    if os.path.basename(folder).startswith(FOLDER_PREFIX):
        with contextlib.suppress(OSError):  # Only if empty: nothing else of anybody's goes.
            os.rmdir(folder)


def serve(path: str, code: CodeSnapshot | None = None) -> None:
    """Fork a session for each request on the socket at `path`; none once `code` has changed
    on disk (the reply then names the file that did, with no process)."""
    zygote = os.getpid()
    changed: str | None = None

    def end(_signum: int, _frame: object) -> None:
        if os.getpid() == zygote:  # Not a fork not yet past setting SIGTERM back.
            remove_socket(path)
        os._exit(0)

    # Set before the socket exists, so that no SIGTERM can leave it behind; each fork sets
    # SIGTERM back to its default at once.
    signal.signal(signal.SIGTERM, end)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    signal.signal(signal.SIGCHLD, _reap)
    print("ready", flush=True)
    while True:
        connection, _ = listener.accept()
        with connection:
            try:
                message, fds, _flags, _address = socket.recv_fds(
                    connection, MAX_REQUEST_BYTES, PIPES
                )
                request = json.loads(message)
            except (OSError, ValueError):
                continue
            if len(fds) != PIPES or not isinstance(request, dict):
                for fd in fds:
                    os.close(fd)
                continue
            if changed is None and code is not None:
                changed = code.changed()
            if changed is not None:
                for fd in fds:
                    os.close(fd)
                with contextlib.suppress(OSError):
                    connection.sendall(json.dumps({"changed": changed[:300]}).encode())
                continue
            request["_close"] = [connection.fileno(), listener.fileno()]
            pid, pidfd = fork_session(request, fds)
            for fd in fds:
                os.close(fd)
            try:
                socket.send_fds(connection, [json.dumps({"pid": pid}).encode()], [pidfd])
            except OSError:
                pass  # The server gave up waiting; the session's pipes end the fork.
            finally:
                os.close(pidfd)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m chatbot.web.zygote SOCKET", file=sys.stderr)
        return 2
    code = CodeSnapshot.of_package()
    preload()
    code.add_loaded_modules()
    share_suggestions(os.path.dirname(args[0]))
    try:
        serve(args[0], code)
    except KeyboardInterrupt:
        pass
    finally:
        remove_socket(args[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
