"""`helpdesk` run as a process, as a shell would run it, with a deadline: code that waits for ever
(on a FIFO's open, say) fails the test rather than hanging it. Its warnings go to its own stderr,
which an in-process run (`tests.cli_run`) leaves to pytest's log capture."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


def helpdesk(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`helpdesk ARGS` in the test's environment (its own XDG folders), without the variables
    that would choose another database, knowledge base or Valen."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("HELPDESK_", "VALEN_"))}
    try:
        return subprocess.run(
            [sys.executable, "-m", "chatbot", *args], cwd=cwd, capture_output=True, text=True,
            timeout=timeout, env={**clean, "PYTHONPATH": str(ROOT), **(env or {})}, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"helpdesk {' '.join(args)} was still waiting after {timeout:g} s")
