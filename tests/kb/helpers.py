"""For the knowledge base's tests: `helpdesk kb ...` in the test's process, a folder's files
as bytes, and a PostgreSQL URL with a password in it."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from chatbot.cli.main import main


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*")
            if p.is_file() and p.name != ".lock"}  # fmt: skip


SECRET = "hunter2-never-shown"


def with_password(url: str, password: str) -> str:
    parts = urlsplit(url)
    netloc = f"{parts.username or 'postgres'}:{password}@{parts.hostname}:{parts.port or 5432}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
