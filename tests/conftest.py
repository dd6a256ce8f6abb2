"""Shared fixtures. Every test runs with the developer's own configuration shut out."""

from __future__ import annotations

import gc
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import textual.constants

from chatbot.knowledge_base.storage import shipped_knowledge_base
from chatbot.paths import shipped_cache
from tests import pilot_idle, postgres_env
from tests.backends import backend, close_postgres_server
from tests.valen_server import ValenTestServer

__all__ = ["backend"]  # The store backend fixture, for the store's and the desk's tests.

# No animations in tests: a screenshot taken while a tab's underline slides (slower under load)
# would differ from the recorded one. The variable reaches the apps tests start as processes; the
# constant, the apps in this process (Textual read the variable when the snapshot plugin loaded).
os.environ["TEXTUAL_ANIMATIONS"] = "none"
textual.constants.TEXTUAL_ANIMATIONS = "none"  # type: ignore[misc]

# The app shows times in the reader's local time zone: tests read them in UTC wherever they run,
# so a snapshot recorded on one machine matches on another (and the processes tests start too).
os.environ["TZ"] = "UTC"
time.tzset()

# A test worker allocates without pause (every UI test builds a Textual app, every store test a
# database) and keeps much alive for its whole run: modules, collected tests, fixtures. Python's
# defaults collect the youngest generation every 700 allocations and walk the whole heap every
# hundredth time: the UI, desk, store and knowledge-base tests took 2-4 CPU-s more (of ~85).
gc.set_threshold(100_000, 50, 1000)

# Pilot's wait for an app to finish handling a key: in 5 ms slices, drawing a pending frame.
pilot_idle.install()

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
SEED_DATA = DATA / "rerank_data.json"
RECORDED = DATA / "recorded_output.json"
SHIPPED_KB = shipped_knowledge_base()
SHIPPED_CACHE = shipped_cache()


@pytest.fixture(scope="session", autouse=True)
def postgres_template() -> Iterator[None]:
    """Drops the session's PostgreSQL template database, if a test made one."""
    yield
    close_postgres_server()


@pytest.fixture(autouse=True)
def isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's config or environment or writes to their data directory."""
    for name in ("HELPDESK_KB", "HELPDESK_DB", "VALEN_BASE_URL", "VALEN_API_KEY", "VALEN_MODEL",
                 "VALEN_DIALECT", "VALEN_CACHE", "VALEN_REPLAY", *postgres_env.NAMES):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    # The terminal's language: a customer's chat starts in it, so tests start in English.
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    # The terminal's width, which `helpdesk ask` and `eval` fit (as argparse's help does): test
    # workers under pytest-xdist start with COLUMNS=80 and LINES=24 set, so tests that want a width
    # set it.
    for name in ("COLUMNS", "LINES"):
        monkeypatch.delenv(name, raising=False)
    # The settings file is the one under the test's own XDG_CONFIG_HOME, absent unless a test
    # writes it (a HELPDESK_CONFIG naming a missing file is warned about).
    monkeypatch.delenv("HELPDESK_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    # Unsent words and the terminal chat's conversation are kept there: never the developer's.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


@pytest.fixture
def seed_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SEED_DATA.read_text())
    return data


@pytest.fixture
def recorded() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RECORDED.read_text())
    return data


@pytest.fixture
def cache_copy(tmp_path: Path) -> Path:
    """A writable copy of the shipped replay cache."""
    path = tmp_path / "caches" / "rerank.json"
    path.parent.mkdir()
    shutil.copy(SHIPPED_CACHE, path)
    return path


@pytest.fixture
def kb_copy(tmp_path: Path) -> Path:
    """A writable, pristine copy of the shipped knowledge base: its files only, never history or
    locks an older version of the app may have left beside them."""
    path = tmp_path / "kb"
    shutil.copytree(SHIPPED_KB, path, ignore=shutil.ignore_patterns(".*"))
    return path


@pytest.fixture
def valen_server() -> Iterator[ValenTestServer]:
    """A Valen-compatible server on 127.0.0.1 answering 0.5 to everything until told otherwise."""
    server = ValenTestServer().start()
    yield server
    server.stop()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`-n auto --dist loadgroup`, see pyproject.toml), a browser test module
    runs on one worker: its tests share one `helpdesk serve` (a module fixture) and one chromium,
    which every worker would otherwise start again. First among the hooks: xdist's own, which
    turns the mark into the group, runs before a conftest's and would not see it otherwise (it
    did not: each module's tests went to three or four workers, each starting both)."""
    for item in items:
        if browser_test(item):
            item.add_marker(pytest.mark.xdist_group(f"web-{item.path.stem}"))
    # The browser tests first (a stable sort: the same order on every worker, as xdist requires):
    # they are the longest, and collected last they were the suite's last 40 s, one worker each.
    items.sort(key=lambda item: not browser_test(item))


def browser_test(item: pytest.Item) -> bool:
    return item.path.parent.name == "web" and item.path.name.startswith("test_")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers per core, not one. Half of a test's time is spent waiting on
    another process (a bot, a server, chromium, PostgreSQL) or on the app going idle, and a
    second worker per core fills that time: on 2 cores the suite took 131 s instead of 158 s.
    Capped, as each worker may start browsers and databases of its own."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(2, min(2 * (cores or 1), 16))
