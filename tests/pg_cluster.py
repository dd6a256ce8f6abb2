"""A private PostgreSQL cluster for fault tests: its own data folder and port, so stopping and
restarting it never touches the shared server other tests (and other people) use.

initdb refuses to run as root, so as root the cluster belongs to the `postgres` user.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PrivateCluster:
    """initdb + pg_ctl in a temporary folder, trust authentication on 127.0.0.1 only."""

    def __init__(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not found:
            pytest.skip(
                "no PostgreSQL server binaries (/usr/lib/postgresql/*/bin) to run a cluster"
            )
        self.bin = Path(found[-1]).parent
        self.folder = Path(tempfile.mkdtemp(prefix="helpdesk-pg-"))
        self.data = self.folder / "data"
        self.port = _free_port()
        self._as: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
            self._as = ["runuser", "-u", "postgres", "--"]
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync")
        self.start()

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, tool: str, *arguments: str) -> None:
        subprocess.run(
            [*self._as, str(self.bin / tool), *arguments],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120,
        )  # fmt: skip

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l",
                  str(self.folder / "log"), "-w", "start")  # fmt: skip

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def close(self) -> None:
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass  # Stopped already.
        shutil.rmtree(self.folder, ignore_errors=True)
