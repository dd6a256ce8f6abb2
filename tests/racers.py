"""Python processes for the race tests, started cheaply: forked from one server process that has
imported what they run, instead of each importing it all again.

A spawned process (multiprocessing's "spawn") is a new interpreter that imports pydantic, the
desk and its store before it can do anything: 0.2-0.4 CPU-s each, most of what a racer costs.
Here the racers come from multiprocessing's fork server, started once per test process with
`PRELOAD` imported (~0.4 CPU-s); each racer is a fork of it, ready at once. The server itself is
a fresh interpreter, not a fork of the test process, so a racer inherits none of the test's
threads (a Valen server, an app) or the locks they may hold.

The server outlives the test that started it, so it keeps the environment and the working folder
of that test; `start` hands each racer those of its own test, as spawning did.

Racers are the server's children, not the test's: per-test CPU read from
`getrusage(RUSAGE_CHILDREN)` does not include them (a cgroup's CPU accounting does).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Mapping
from multiprocessing.context import ForkServerContext, ForkServerProcess
from typing import Any

PRELOAD = [
    "chatbot.assembly",
    "chatbot.config",
    "chatbot.desk.service",
    "chatbot.store.sqlite",
    "chatbot.store.postgres",
    "chatbot.knowledge_base.store",
    "tests.backends",
]
"""What the racers' targets import: settings, the desk, both stores, the passage store. A
target's own module is imported by each racer: keep it light (no Textual; see
tests/desk/customers.py)."""


def context() -> ForkServerContext:
    """The context to make the racers' barriers and queues with."""
    forkserver = multiprocessing.get_context("forkserver")
    # Takes effect when the server starts (the first `start` in this process), for all racers.
    forkserver.set_forkserver_preload(PRELOAD)
    return forkserver


def start(target: Callable[..., object], *args: Any) -> ForkServerProcess:
    """Start `target(*args)` in a racer with this test's environment and working folder."""
    process = context().Process(target=_run, args=(dict(os.environ), os.getcwd(), target, args))
    process.start()
    return process


def _run(
    environ: Mapping[str, str], cwd: str, target: Callable[..., object], args: tuple[Any, ...]
) -> None:
    os.environ.clear()
    os.environ.update(environ)
    os.chdir(cwd)
    target(*args)
