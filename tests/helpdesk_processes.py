"""`helpdesk` commands as processes of the test's own (`bot`, `serve`): started with their
output logged, stopped with SIGTERM, killed at the end of the test if still running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from chatbot.web.spawn import dies_with_this_process
from tests.conftest import ROOT

START_S = 60.0
"""Generous: a process imports the whole engine, and the machine may be busy."""


def until(condition: Callable[[], object], *, timeout: float = START_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(0.02)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=START_S)


def start(
    processes: list[subprocess.Popen[bytes]], log: Path, *argv: str, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "chatbot", *argv],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
            env={**os.environ, **env, "PYTHONUNBUFFERED": "1"},
            preexec_fn=dies_with_this_process(),
        )  # fmt: skip
    processes.append(process)
    return process


def stop(process: subprocess.Popen[bytes]) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=START_S)
