"""`kb history`'s hint is a whole sentence on a line of its own, after the versions, on standard
error: where both streams are captured together it landed before or amid the rows (standard
output waited in a pipe's buffer), and it read "a version whole: ...", a fragment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.knowledge_base.store import PassageStore
from tests.conftest import ROOT
from tests.kb.helpers import run_cli

HINT = "To see a version whole: helpdesk kb show helmet --version N"


def edited_twice(kb: Path) -> None:
    store = PassageStore(kb)
    for text in ("Helmets: ask at the desk.", "Helmets are free."):
        stored = store.get("helmet")
        store.save(stored.passage.model_copy(update={"text": text}), based_on=stored.revision)


def test_the_hint_is_the_last_line_where_both_streams_are_captured(kb_copy: Path) -> None:
    edited_twice(kb_copy)
    # Standard output buffered, as Python buffers it into a pipe unless told otherwise.
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    history = subprocess.run(
        [sys.executable, "-m", "chatbot", "kb", "history", "helmet", "--kb", str(kb_copy)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=60,
    )  # fmt: skip
    assert history.returncode == 0, history.stdout
    lines = history.stdout.splitlines()
    assert lines[-1] == HINT, lines
    assert lines[0].split()[0] == "1", lines  # The versions first, oldest first.
    assert sum(HINT in line for line in lines) == 1


def test_the_hint_stays_off_standard_output(
    kb_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited_twice(kb_copy)
    code, out, err = run_cli(capsys, "kb", "history", "helmet", "--kb", str(kb_copy))
    assert code == 0
    assert err == HINT + "\n"
    assert "kb show" not in out
