"""Shared helpers for the benchmark scripts: import paths, timing, the machine's description."""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def use_repo_root() -> None:
    """Let a script run as `python bench/x.py` import `chatbot`, `bench` and `tests`."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def median(values: list[float]) -> float:
    return float(statistics.median(values))


def time_once(action: Callable[[], object]) -> float:
    """Seconds one call of `action` takes."""
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, str | int]:
    """What the numbers were measured on, for bench/README.md."""
    return {
        "nproc": os.cpu_count() or 0,
        "cpu": cpu_model(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        # Other work on the machine slows every figure: the 1-minute load average at the end.
        "loadavg_1m": f"{os.getloadavg()[0]:.2f}",
    }
