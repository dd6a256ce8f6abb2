"""What is wrong with a replay cache is said, in words that point at it.

A recording that cannot be saved said only `could not record into ro/rec.json: OSError`: now the
system's reason ("Read-only file system", "No space left on device"), the path once. A cache
whose entries cannot be replayed (a probability of "high", 7.5 or NaN, an entry that is a list)
loaded with no word, and every judgment was then a `replay-miss: no recorded answer`, pointing
away from the broken file; a format this helpdesk does not know was taken silently. Each is one
warning as the cache loads, as a corrupt cache's is."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatbot.valen.protocol import PREDICATE
from tests.cli_process import helpdesk
from tests.readonly import read_only
from tests.valen_server import ValenTestServer

QUESTION = "I was charged twice for the same ride, can I get my money back?"
RECORD = ("--replay", "record", "-k", "2")


@contextlib.contextmanager
def full_disk(folder: Path) -> Iterator[None]:
    """`folder` a tiny file system of its own, filled up: every write there is ENOSPC."""
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], check=True)
    try:
        with contextlib.suppress(OSError), (folder / "filler").open("wb") as filler:
            while True:
                filler.write(b"\0" * 4096)
                filler.flush()
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_recording_on_a_read_only_file_system_says_so(
    tmp_path: Path, valen_server: ValenTestServer
) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    cache = folder / "rec.json"
    with read_only(folder):
        done = helpdesk("ask", QUESTION, *RECORD, "--cache", str(cache),
                        "--base-url", valen_server.base_url)  # fmt: skip
    code, out, err = done.returncode, done.stdout, done.stderr
    assert code == 0 and out  # The answer came all the same.
    reason = "Read-only file system" if os.geteuid() == 0 else "Permission denied"
    assert err == f"helpdesk: warning: could not record into {cache}: {reason}\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a file system of its own needs root")
def test_a_recording_on_a_full_disk_says_so(tmp_path: Path, valen_server: ValenTestServer) -> None:
    folder = tmp_path / "full"
    folder.mkdir()
    cache = folder / "rec.json"
    with full_disk(folder):
        done = helpdesk("ask", QUESTION, *RECORD, "--cache", str(cache),
                        "--base-url", valen_server.base_url)  # fmt: skip
    code, err = done.returncode, done.stderr
    assert code == 0
    assert err == f"helpdesk: warning: could not record into {cache}: No space left on device\n"


def entries(*recorded: object) -> dict[str, object]:
    return {f"k{number}": entry for number, entry in enumerate(recorded)}


def entry(probability: object) -> dict[str, object]:
    return {"model": None, "instructions": PREDICATE, "input": "x", "probability": probability}


def test_entries_that_cannot_be_replayed_are_counted_in_one_warning(tmp_path: Path) -> None:
    cache = tmp_path / "bad.json"
    unusable = entries(entry("high"), entry(7.5), entry(float("nan")), [0.9], entry(True))
    usable = {"ok": entry(0.5), "refused": {"refused": True}}
    # NaN as Python's json writes it, and as the cache's reader takes it.
    cache.write_text(
        json.dumps({"format": "helpdesk-valen-replay/1", "entries": unusable | usable})
    )
    done = helpdesk("ask", QUESTION, "--cache", str(cache), "-k", "2")
    code, out, err = done.returncode, done.stdout, done.stderr
    assert code == 0 and "replay-miss" in out
    assert err == (
        f"helpdesk: warning: replay cache {cache}: 5 of 7 entries cannot be replayed (each needs"
        ' a probability from 0 to 1, or "refused": true) and replay as misses\n'
    )


def test_a_format_this_helpdesk_does_not_know_is_said(tmp_path: Path) -> None:
    cache = tmp_path / "newer.json"
    cache.write_text(json.dumps({"format": "helpdesk-valen-replay/9", "entries": {}}))
    done = helpdesk("ask", QUESTION, "--cache", str(cache), "-k", "2")
    code, err = done.returncode, done.stderr
    assert code == 0
    assert err == (
        f"helpdesk: warning: replay cache {cache}: its format is 'helpdesk-valen-replay/9', which"
        " this helpdesk does not know (it reads helpdesk-valen-replay/1)\n"
    )


def test_a_sound_cache_is_not_warned_about(cache_copy: Path) -> None:
    done = helpdesk("ask", QUESTION, "--cache", str(cache_copy), "-k", "2")
    assert (done.returncode, done.stderr) == (0, "")
