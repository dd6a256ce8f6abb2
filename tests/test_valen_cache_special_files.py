"""A replay cache path that is not a regular file (a FIFO, a socket, a device, a folder) is one
warning and every passage a replay miss, as a corrupt cache is; it is never opened to wait on,
never read, and never replaced by a recording. A FIFO used to block the open for ever: `ask` hung,
and the chat drew its first screen and then took no question and could not be quit.

What could block runs in a subprocess or a thread with a deadline, so that code which waits on
the FIFO fails these tests rather than hanging them."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.desk.models import Author
from chatbot.tui.suggestions import recorded_questions
from chatbot.valen import PREDICATE, ReplayCache
from chatbot.valen.cache import CacheEntry
from tests.conftest import ROOT
from tests.tui.terminal_helpers import chat_in_a_terminal, until
from tests.valen_faults import QUESTION
from tests.valen_server import ValenTestServer, constant

T = TypeVar("T")

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
needs_sockets = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets here")
WARNING = "helpdesk: warning: replay cache ignored, and not written until repaired or moved aside"
# Old code read /dev/zero without end; the cap makes that a quick failure, not a swapping machine.
MEMORY_CAP = 1 << 30


def fifo_at(path: Path) -> Path:
    os.mkfifo(path)
    return path


@contextlib.contextmanager
def socket_at(path: Path) -> Iterator[Path]:
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(path))
        yield path


def helpdesk(*args: str, env: dict[str, str] | None = None, cap_memory: bool = False) -> (
    subprocess.CompletedProcess[str]
):  # fmt: skip
    def limit() -> None:
        import resource  # Unix only, as /dev/zero is.

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    clean = {k: v for k, v in os.environ.items() if not k.startswith(("HELPDESK_", "VALEN_"))}
    try:
        return subprocess.run(
            [sys.executable, "-m", "chatbot", *args], cwd=ROOT, capture_output=True, text=True,
            timeout=60, env={**clean, "PYTHONPATH": str(ROOT), **(env or {})}, check=False,
            preexec_fn=limit if cap_memory else None,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"helpdesk {' '.join(args)} was still waiting after 60 s")


def without_waiting(call: Callable[[], T], fifo: Path) -> T:
    """`call()`'s result, from a thread given 10 s. A thread still blocked opening `fifo` after
    that is given a writer, so that it ends, and the test fails."""
    results: list[T] = []
    thread = threading.Thread(target=lambda: results.append(call()), daemon=True)
    thread.start()
    thread.join(timeout=10)
    if thread.is_alive():
        # A reader is waiting, so a non-blocking writer's open succeeds and its close is an EOF.
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(timeout=10)
        pytest.fail(f"blocked opening the FIFO {fifo}")
    [result] = results
    return result


@pytest.mark.parametrize(
    ("kind", "described"),
    [
        pytest.param("fifo", "a FIFO (named pipe)", marks=needs_fifo),
        ("/dev/zero", "a device or other special file"),
    ],
)
def test_ask_with_a_cache_that_is_not_a_regular_file_warns_once_and_never_reads_it(
    kind: str, described: str, tmp_path: Path
) -> None:
    """The tester's command, as a process: the old code waited on the FIFO's open for ever, and
    read /dev/zero without end."""
    cache = Path(kind) if kind.startswith("/dev/") else fifo_at(tmp_path / "fifo1")
    if not cache.exists():
        pytest.skip(f"no {kind} here")
    before = os.stat(cache).st_mode
    result = helpdesk("ask", QUESTION, "--cache", str(cache), cap_memory=kind == "/dev/zero")
    assert os.stat(cache).st_mode == before
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr == f"{WARNING}: {cache}: is {described}, not a regular file\n"
    assert result.stdout.startswith("Escalated to a person: not-judged")
    assert "replay-miss" in result.stdout


@pytest.mark.parametrize(
    ("kind", "described"),
    [
        pytest.param("socket", "a socket", marks=needs_sockets),
        ("/dev/null", "a device or other special file"),
        ("folder", "a directory"),
    ],
)
def test_a_cache_that_is_not_a_regular_file_is_one_warning_and_every_passage_a_miss(
    kind: str, described: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The same loader `ask` uses, in this process (a socket was "cannot read: No such device or
    address", /dev/null "malformed JSON")."""
    with contextlib.ExitStack() as stack:
        if kind.startswith("/dev/"):
            path = Path(kind)
            if not path.exists():
                pytest.skip(f"no {kind} here")
        elif kind == "socket":
            path = stack.enter_context(socket_at(tmp_path / "sock"))
        else:
            path = tmp_path / "folder"
            path.mkdir()
        before = os.stat(path).st_mode
        caplog.set_level(logging.WARNING)
        cache = ReplayCache(path)
        assert cache.lookup(input=QUESTION, instructions=PREDICATE, model=None) is None
        assert cache.record([CacheEntry("q", PREDICATE, None, 0.5)]) == 0
        assert os.stat(path).st_mode == before
    [warning] = [record.getMessage() for record in caplog.records]
    assert warning.endswith(f"{path}: is {described}, not a regular file")


@needs_fifo
def test_recording_into_a_fifo_answers_live_and_leaves_it_a_fifo(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    valen_server.responder = constant(0.9)
    fifo = fifo_at(tmp_path / "fifo1")
    result = helpdesk(
        "ask", QUESTION, "--replay", "record", "--cache", str(fifo),
        "--base-url", valen_server.base_url,
    )  # fmt: skip
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr == f"{WARNING}: {fifo}: is a FIFO (named pipe), not a regular file\n"
    assert valen_server.received  # Asked live: the customer still gets Valen's judgment.
    assert "not judged" not in result.stdout and "0.900" in result.stdout, result.stdout
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    # No temporary file and no lock file: nothing was written beside it.
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@needs_fifo
def test_a_fifo_that_appears_while_recording_is_neither_waited_on_nor_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "cache.json"
    cache = ReplayCache(path)
    assert cache.lookup(input="q", instructions=PREDICATE, model=None) is None  # No file yet.
    fifo_at(path)
    caplog.set_level(logging.WARNING)
    caplog.clear()
    recorded = without_waiting(lambda: cache.record([CacheEntry("q", PREDICATE, None, 0.5)]), path)
    assert recorded == 0
    assert stat.S_ISFIFO(path.stat().st_mode)
    [warning] = [r.getMessage() for r in caplog.records]
    assert warning.endswith(f"{path}: is a FIFO (named pipe), not a regular file")
    # Once: later recordings are refused without another warning or another look at the path.
    assert cache.record([CacheEntry("r", PREDICATE, None, 0.5)]) == 0
    assert len(caplog.records) == 1


@needs_fifo
def test_the_apps_suggestions_from_a_fifo_are_none(tmp_path: Path) -> None:
    fifo = fifo_at(tmp_path / "fifo1")
    assert without_waiting(lambda: recorded_questions(fifo), fifo) == ()


@needs_fifo
def test_the_chat_with_a_fifo_as_its_cache_takes_a_question_and_quits(tmp_path: Path) -> None:
    """The tester's case: VALEN_CACHE=fifo1 helpdesk chat. The question is stored and goes to a
    person (not judged), and Ctrl+Q ends the app."""
    fifo = fifo_at(tmp_path / "fifo1")
    db = tmp_path / "x.sqlite3"
    with chat_in_a_terminal(tmp_path, "--db", str(db), env={"VALEN_CACHE": str(fifo)}) as chat:
        # The first screen: its box takes the question (and Enter) while the chat loads.
        until(lambda: b"press Enter" in chat.output, "the first screen to be drawn")
        chat.type(b"how do I get a refund\r")
        desk = open_service(load_settings(store={"db": db}))
        try:

            def escalated() -> bool:
                conversations = desk.conversations()
                return bool(conversations) and conversations[0].state.value == "waiting"

            until(escalated, "the question to be stored and sent to a person")
            [conversation] = desk.conversations()
            [question] = [m for m in desk.messages(conversation.id) if m.author is Author.CUSTOMER]
        finally:
            desk.close()
        assert question.text == "how do I get a refund"
        assert conversation.reason is not None and conversation.reason.value == "not-judged"
        chat.type(b"\x11")  # Ctrl+Q
        assert chat.process.wait(timeout=30) == 0
    assert stat.S_ISFIFO(fifo.stat().st_mode)
